"""The session log never costs a result, on real SQLite locked by another process's connection:
- writes wait and retry while the lock is held, and fail with a StorageError (no raw SQL) when it stays held;
- the web search still shows its result, with a notice that it was not saved in the history;
- 20 labels confirmed in the web app while the database is locked for 45 s are all stored (real server);
- a CLI search during the lock answers without a traceback."""
from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import contextmanager

import pytest

from core.contracts.errors import StorageError
from core.contracts.sessionlog import Label, RequestRecord
from core.sessions.memory_log import MemorySessionLog
from storage.db import open_engine
from storage.sessionlog import SqlSessionLog
from tests.live_server import LiveServer, cli, db_rows, integrity_ok
from tests.photos import colour_image

gradio_client = pytest.importorskip("gradio_client")


@contextmanager
def write_lock(db_path, seconds: float):
    """Another connection holds SQLite's write lock for `seconds` (in a thread), as a long ingest or a backup
    tool would; the block runs meanwhile."""
    held = threading.Event()

    def hold():
        conn = sqlite3.connect(db_path, timeout=60, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(seconds)
        conn.execute("ROLLBACK")
        conn.close()

    t = threading.Thread(target=hold, daemon=True)
    t.start()
    held.wait(30)
    try:
        yield
    finally:
        t.join()


def test_writes_wait_for_a_held_lock_and_fail_readably_when_it_stays(tmp_path):
    db = tmp_path / "ecolens.sqlite"
    log = SqlSessionLog(open_engine(db), tmp_path / "artefacts", short_s=1.0, long_s=6.0)
    sid = log.start_session("label", "frogs")
    with write_lock(db, 2.5):
        t0 = time.monotonic()
        lid = log.add_label(Label(session_id=sid, query="frogs", photo_id=3, label=1, annotator="ada"))
        waited = time.monotonic() - t0
        assert lid > 0 and waited > 1.0  # it waited for the lock rather than failing
    with write_lock(db, 3.0):
        with pytest.raises(StorageError) as err:
            log.log_request(RequestRecord(session_id=sid, query="frogs", method="baseline"))
    assert "locked" in err.value.message and "INSERT" not in str(err.value) and err.value.hint
    assert [lb.id for lb in log.labels()] == [lid] and integrity_ok(tmp_path)


class NoLogWrites(MemorySessionLog):
    """A session log whose database stays locked: every write fails as SqlSessionLog's does."""

    def _fail(self, *args, **kwargs):
        raise StorageError("The search record could not be saved: the database stayed locked for 8 s",
                           "another program holds the database; try again when it has finished")

    start_session = log_request = log_turn = add_label = _fail


def test_the_web_search_shows_its_result_with_a_notice_when_it_cannot_be_logged(tmp_path):
    from tests.unit.test_ui_fakes import FakeEngine
    from ui.search_handlers import SearchHandlers

    h = SearchHandlers(FakeEngine(tmp_path), NoLogWrites())
    *_, last = h.search("a frog calling", "Fast", 5, 1, 10, "full", False, "", "", "", [], "", "", None, None)
    gallery, status, notices = last[0], last[1], last[2]
    assert len(gallery) == 5 and "done in" in status
    assert "not saved in the history" in notices and "stayed locked" in notices


def test_twenty_labels_during_a_45_second_lock_are_all_stored_and_cli_search_answers(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    for i in range(6):
        colour_image(i, 64).save(photos / f"{i}.jpg")
    data = tmp_path / "data"
    assert cli(data, "ingest", str(photos)).returncode == 0
    server = LiveServer(data)
    try:
        client = gradio_client.Client(server.url, verbose=False)
        ids = [r[0] for r in db_rows(data, "SELECT id FROM photos ORDER BY id")]
        with write_lock(data / "ecolens.sqlite", 45):
            jobs = [client.submit("a frog", ids[i % len(ids)], i % 2, f"annotator {i % 3}", 1.5, api_name="/label")
                    for i in range(20)]
            searched = cli(data, "search", "a frog", "--k", "3")  # reads go on while the writer waits
            gallery, status, notices, *_ = client.predict("a frog", "Fast", 4, 1, 10, "full", False, "", "", "", [],
                                                          "", "", None, api_name="/search")
            early = [(j.done(), j.exception() if j.done() else None) for j in jobs]
            assert not any(d for d, _ in early), early  # nothing is reported saved while it is not
        label_ids = [j.result(timeout=120) for j in jobs]
        assert searched.returncode == 0 and "Traceback" not in searched.stderr and searched.stdout.count("[") >= 3
        assert len(gallery) == 4 and "not saved in the history" in notices
        rows = db_rows(data, "SELECT id, annotator FROM labels ORDER BY id")
        assert len(rows) == 20 and sorted(label_ids) == [r[0] for r in rows]
        assert integrity_ok(data) and server.proc.poll() is None
    finally:
        server.stop()
