"""The session log on real SQLite: round trips, pictures as files, and concurrent labelling losing nothing."""
from __future__ import annotations

import threading

import pytest
from PIL import Image

from core.contracts.errors import InputError, NotFoundError
from core.contracts.sessionlog import ExportRecord, Label, RequestRecord, StageRecord, TurnRecord
from storage.db import open_engine
from storage.sessionlog import SqlSessionLog


@pytest.fixture()
def log(tmp_path):
    return SqlSessionLog(open_engine(tmp_path / "ecolens.sqlite"), tmp_path / "artefacts")


def test_request_with_stages_and_pictures_round_trips(log, tmp_path):
    sid = log.start_session("search", "frogs at night")
    picture = Image.new("RGB", (8, 8), (10, 200, 30))
    req = RequestRecord(session_id=sid, query="frog calling at night", method="visret",
                        settings={"k": 20, "openai_api_key": "***"}, models={"embedder": {"model_id": "hash"}},
                        stages=[StageRecord("first", [(3, 0.9), (1, 0.5)], {"visualizations": [
                            {"image": picture, "seed": 7}]})])
    rid = log.log_request(req)
    log.add_stage(rid, StageRecord("rerank", [(1, 0.8), (3, 0.2)], {"subquestions": ["Is it a frog?"]}))
    detail = log.session(sid)
    assert detail.session.kind == "search" and detail.session.requests == 1
    (r,) = detail.requests
    assert r.query == "frog calling at night" and r.settings["k"] == 20
    assert [s.name for s in r.stages] == ["first", "rerank"]
    assert r.stages[0].ranking == [(3, 0.9), (1, 0.5)]
    path = r.stages[0].artefacts["visualizations"][0]["image"]
    assert path.startswith(str(tmp_path / "artefacts")) and Image.open(path).size == (8, 8)
    assert r.stages[1].artefacts["subquestions"] == ["Is it a frog?"]


def test_turns_labels_exports_and_listing(log):
    a = log.start_session("dialogue", "a")
    b = log.start_session("label", "b")
    log.log_turn(TurnRecord(session_id=a, index=0, question="Is it on a leaf?", answer="yes", description="d"))
    log.add_label(Label(session_id=b, query="q", photo_id=5, label=1, annotator=" ann  ", seconds=1.5))
    log.add_label(Label(session_id=b, query="q", photo_id=6, label=0, annotator="ann", seconds=0.5))
    log.log_export(ExportRecord(session_id=b, format="csv", path="/x.csv", rows=2))
    assert [s.id for s in log.sessions()] == [b, a]
    assert log.session(a).turns[0].answer == "yes"
    labels = log.labels(session_id=b)
    assert [(lb.photo_id, lb.label, lb.annotator) for lb in labels] == [(5, 1, "ann"), (6, 0, "ann")]
    assert labels[0].created_at.tzinfo is not None
    assert log.labels(query="other") == []
    assert log.exports()[0].rows == 2


def test_bad_labels_and_unknown_sessions_are_refused(log):
    sid = log.start_session("label")
    with pytest.raises(InputError):
        log.add_label(Label(session_id=sid, query="q", photo_id=1, label=3, annotator="a"))
    with pytest.raises(InputError):
        log.add_label(Label(session_id=sid, query="q", photo_id=1, label=1, annotator="  "))
    with pytest.raises(NotFoundError):
        log.add_label(Label(session_id=999, query="q", photo_id=1, label=1, annotator="a"))
    with pytest.raises(NotFoundError):
        log.session(999)


def test_two_threads_labelling_at_once_lose_nothing(tmp_path):
    db = tmp_path / "ecolens.sqlite"
    # two log objects on two engines: like two processes sharing the file (the lock does not help here,
    # SQLite's busy timeout and WAL must)
    logs = [SqlSessionLog(open_engine(db)), SqlSessionLog(open_engine(db))]
    sessions = [logs[0].start_session("label", "one"), logs[1].start_session("label", "two")]
    n = 150
    errors: list[Exception] = []

    def work(i: int) -> None:
        try:
            for p in range(n):
                logs[i].add_label(Label(session_id=sessions[i], query="q", photo_id=p, label=p % 2,
                                        annotator=f"annotator-{i}", seconds=0.1))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i in range(2):
        got = logs[0].labels(session_id=sessions[i])
        assert sorted(lb.photo_id for lb in got) == list(range(n))
    shared = SqlSessionLog(open_engine(db))  # and one shared object used by many threads (the web app)
    sid = shared.start_session("label")
    threads = [threading.Thread(target=lambda j=j: [shared.add_label(
        Label(session_id=sid, query="q", photo_id=j * 1000 + p, label=1, annotator=f"t{j}")) for p in range(50)])
        for j in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(shared.labels(session_id=sid)) == 200
