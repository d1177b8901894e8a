"""Every hostile or careless command-line input the issue found, as a table: each ends in `error:` and
`how to fix:` with exit status 2 (or, where the input is fine to accept, a note), never a traceback; the
database passes its integrity check and its row counts change only for accepted input."""
from __future__ import annotations

import os
import resource
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
from PIL import Image

from core.contracts import limits
from storage.db import open_engine
from tests.live_server import app_env, cli, counts, integrity_ok
from tests.photos import colour_image, make_photo_folder


@dataclass
class Case:
    name: str
    args: Callable[[Path], list]  # root folder -> arguments of app.py
    words: str  # what the message must say
    env: dict[str, str] = field(default_factory=dict)
    stdin: bytes | None = None
    rc: int = 2
    accepted: bool = False  # rows may be added (the input is valid, with a note)
    fresh: bool = False  # run on a data directory of its own
    limit_file_bytes: int = 0  # a disk that fills up during the command: RLIMIT_FSIZE for the child
    run_only: bool = False  # an ingest that skipped every row: only its own run is recorded, nothing else


def _write(root: Path, name: str, data: bytes) -> str:
    path = root / "inputs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


def _image(root: Path, name: str, size: tuple[int, int], mode: str = "L") -> str:
    path = root / "inputs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        Image.new(mode, size, 80).save(path)
    return str(path)


def _csv_with_bad_longitude(root: Path) -> str:
    folder = root / "inputs" / "far"
    folder.mkdir(parents=True, exist_ok=True)
    colour_image(901).save(folder / "a.png")
    (folder / "obs.csv").write_text("path,taxon_name,latitude,longitude\na.png,Ardea alba,45.1,999\n")
    return str(folder / "obs.csv")


def _csv_with(root: Path, name: str, column: str, value: str, seed: int) -> str:
    """A one-photo iNaturalist-style CSV whose `column` holds `value` (an unreadable date or coordinate)."""
    folder = root / "inputs" / name
    folder.mkdir(parents=True, exist_ok=True)
    colour_image(seed).save(folder / "a.png")
    row = {"path": "a.png", "taxon_name": "Ardea alba", "observed_on": "2024-05-01", "latitude": "45.1",
           "longitude": "-73.5", "license": "cc-by"}
    row[column] = value
    (folder / "obs.csv").write_text(",".join(row) + "\n" + ",".join(row.values()) + "\n")
    return str(folder / "obs.csv")


def _csv_naming(root: Path, name: str, target: Callable[[Path], str]) -> str:
    """A CSV whose one row's path is `target(folder)`: a device, a FIFO, a file of /proc, a huge file."""
    folder = root / "inputs" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "obs.csv").write_text(f"path,taxon_name\n{target(folder)},Ardea alba\n")
    return str(folder / "obs.csv")


def _fifo(folder: Path, name: str = "pipe.jpg") -> str:
    path = folder / name
    if not path.exists():
        os.mkfifo(path)
    return str(path)


def _sparse(folder: Path) -> str:  # 101 MB on paper, no disk used
    path = folder / "huge.jpg"
    with path.open("wb") as fh:
        fh.truncate(limits.MAX_PHOTO_BYTES + 1_000_000)
    return str(path)


def _odd_folder(root: Path) -> str:
    """A folder whose .jpg names are a FIFO, a link to /dev/zero and a link to nothing: no photo files."""
    folder = root / "inputs" / "odd"
    folder.mkdir(parents=True, exist_ok=True)
    _fifo(folder, "fifo.jpg")
    for name, target in (("zero.jpg", "/dev/zero"), ("gone.jpg", str(folder / "nowhere.jpg"))):
        if not (folder / name).is_symlink():
            (folder / name).symlink_to(target)
    return str(folder)


def _many(root: Path) -> str:
    return str(make_photo_folder(root / "inputs" / "many", good=60, broken=0))


RANDOM = bytes(range(256)) * 12
QRELS = b"q1 0 d1 1\nq1 0 d2 0\n"
LATIN_QRELS = b"q1 0 d1 1\nh\xe9ron 0 d2 1\n"  # Latin-1, as a spreadsheet on Windows saves it
RUN = b"q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\n"
CASES = [
    Case("binary CSV", lambda r: ["ingest", _write(r, "random.csv", RANDOM)], "is not UTF-8 text"),
    Case("non-UTF-8 CSV", lambda r: ["ingest", _write(r, "latin.csv", b"path,taxon_name\na.png,Caf\xe9 \xff\n")],
         "is not UTF-8 text"),
    Case("garbage parquet", lambda r: ["ingest", _write(r, "bad.parquet", RANDOM)], "not a readable parquet"),
    Case("binary TOML", lambda r: ["--config", _write(r, "bad.toml", RANDOM), "config"], "not UTF-8"),
    Case("broken TOML", lambda r: ["--config", _write(r, "broken.toml", b"k = = 3\n"), "config"], "not valid TOML"),
    Case("invalid UTF-8 in a query", lambda r: ["search", b"heron \xff\xfe"], "broken text"),
    Case("invalid UTF-8 in a taxon", lambda r: ["search", "heron", "--taxon", b"Ardea \xc3"], "broken text"),
    Case("invalid UTF-8 in a chat description", lambda r: ["chat", b"\xff\xfeheron"], "broken text"),
    Case("invalid UTF-8 in a chat answer", lambda r: ["chat", "a heron", "--rounds", "1"], "not valid UTF-8",
         stdin=b"\xff\xfe yes\n", rc=0),
    Case("--ids with a 25-digit id", lambda r: ["search", "heron", "--ids", "1234567890123456789012345"],
         "1234567890123456789012345 is outside"),
    Case("--votes -5", lambda r: ["search", "heron", "--rerank", "direct", "--votes", "-5"], "votes = -5"),
    Case("--k 1000000000", lambda r: ["search", "heron", "--k", "1000000000"], "outside 1 to 1000"),
    Case("--rerank-k 1e9", lambda r: ["search", "heron", "--rerank", "direct", "--rerank-k", "1e9"],
         "outside 1 to 1000"),
    Case("--k 2.9", lambda r: ["search", "heron", "--k", "2.9"], "not a whole number"),
    Case("--k nan", lambda r: ["search", "heron", "--k", "nan"], "not a whole number"),
    Case("same id relevant and not relevant", lambda r: ["search", "heron", "--relevant", "1", "--not-relevant", "1"],
         "both relevant and not relevant"),
    Case("a 6000x5000 PNG as example", lambda r: ["search", "--image", _image(r, "wide.png", (6000, 5000))],
         "megapixels"),
    Case("a text file as example", lambda r: ["search", "--image", _write(r, "notes.jpg", b"not a photo")],
         "not a readable image"),
    Case("nine example photos", lambda r: ["search", *sum((["--image", _image(r, "ok.png", (32, 32), "RGB")]
                                                         for _ in range(9)), [])], "more than the 8"),
    Case("an unknown option", lambda r: ["search", "heron", "--kk", "3"], "unrecognized arguments"),
    Case("a query of 5000 characters", lambda r: ["search", "heron " * 1000], "more than 2000"),
    Case("ECOLENS_DATA_DIR is a file", lambda r: ["search", "heron"], "cannot hold the log file",
         env={"ECOLENS_DATA_DIR": "{root}/inputs/random.csv"}),
    Case("ECOLENS_DATA_DIR is /proc/self", lambda r: ["search", "heron"], "cannot hold the log file",
         env={"ECOLENS_DATA_DIR": "/proc/self"}),
    Case("CSV longitude 999", lambda r: ["ingest", _csv_with_bad_longitude(r)], "outside -180 to 180", rc=0,
         accepted=True),
    Case("CSV observed_on 2024-02-30", lambda r: ["ingest", _csv_with(r, "feb30", "observed_on", "2024-02-30", 911)],
         "observed_on '2024-02-30' is not a day of the calendar", rc=0, accepted=True),
    Case("CSV latitude abc", lambda r: ["ingest", _csv_with(r, "lat-abc", "latitude", "abc", 912)],
         "latitude 'abc' is not a number", rc=0, accepted=True),
    Case("CSV date with trailing text", lambda r: ["ingest", _csv_with(r, "date-text", "observed_on",
                                                                       "2024-05-01 or so", 913)],
         "observed_on '2024-05-01 or so' is not a date", rc=0, accepted=True),
    Case("--license % (a LIKE wildcard)", lambda r: ["search", "heron", "--license", "%"],
         "no photo passes the filters", rc=0, accepted=True),
    Case("--license cc-b_ (a LIKE wildcard)", lambda r: ["search", "heron", "--license", "cc-b_"],
         "no photo passes the filters", rc=0, accepted=True),
    Case("--date-from with trailing text", lambda r: ["search", "heron", "--date-from", "2024-05-01 or so"],
         "YYYY-MM-DD"),
    Case("--date-from 2024-02-30", lambda r: ["search", "heron", "--date-from", "2024-02-30"],
         "not a day of the calendar"),
    Case("disk full during ingest", lambda r: ["ingest", _many(r)], "disk", fresh=True, limit_file_bytes=40_000),
    Case("max_upload_mb=nan at start", lambda r: ["config"], "max_upload_mb", env={"ECOLENS_MAX_UPLOAD_MB": "nan"}),
    Case("threads=100000", lambda r: ["config"], "threads", env={"ECOLENS_THREADS": "100000"}),
    Case("threads=true", lambda r: ["config"], "threads", env={"ECOLENS_THREADS": "true"}),
    Case("backend_timeout_s=0", lambda r: ["config"], "backend_timeout_s", env={"ECOLENS_BACKEND_TIMEOUT_S": "0"}),
    Case("backend_timeout_s=nan", lambda r: ["config"], "backend_timeout_s",
         env={"ECOLENS_BACKEND_TIMEOUT_S": "nan"}),
    Case("k = 2.9 in settings", lambda r: ["config"], "k=", env={"ECOLENS_K": "2.9"}),
    # raw errors that were tracebacks or said the wrong thing (issue 21, item 7)
    Case("eval-run on non-UTF-8 qrels", lambda r: ["eval-run", "--qrels", _write(r, "latin-qrels.txt", LATIN_QRELS),
                                                   "--run", _write(r, "run.txt", RUN)],
         "latin-qrels.txt is not UTF-8 text (byte 0xe9"),
    Case("eval-run on a non-UTF-8 run",
         lambda r: ["eval-run", "--qrels", _write(r, "qrels.txt", QRELS),
                    "--run", _write(r, "latin-run.txt", RUN + b"h\xe9ron Q0 d9 2 0.1 t\n")],
         "latin-run.txt is not UTF-8 text"),
    Case("eval-run on a non-UTF-8 dialogue CSV",
         lambda r: ["eval-run", "--dialogue", _write(r, "latin-ranks.csv", b"qid,round,rank\nh\xe9ron,0,5\n")],
         "latin-ranks.csv is not UTF-8 text"),
    Case("eval-run on a binary file", lambda r: ["eval-run", "--qrels", _write(r, "random.bin", RANDOM),
                                                 "--run", _write(r, "run.txt", RUN)], "random.bin is not UTF-8 text"),
    Case("TOML with a UTF-8 byte-order mark is read",
         lambda r: ["--config", _write(r, "bom.toml", b"\xef\xbb\xbfk = 7\n"), "config"], '"k": 7', rc=0),
    Case("TOML saved as UTF-16", lambda r: ["--config", _write(r, "utf16.toml", "k = 7\n".encode("utf-16")), "config"],
         "starts with a UTF-16 byte-order mark"),
    # camera traps (issue 34): a results file that cannot be trusted is refused before anything is written
    Case("--detections with pixel boxes", lambda r: ["ingest", str(r / "inputs"), "--detections", _write(
        r, "md-pixels.json", b'{"info": {"format_version": "1.4"}, "detection_categories": {"1": "animal"}, '
        b'"images": [{"file": "a.jpg", "detections": [{"category": "1", "conf": 0.9, "bbox": [10, 20, 300, 200]}]}]}')],
         "holds pixel values"),
    Case("--detections given SpeciesNet's predictions", lambda r: ["ingest", str(r / "inputs"), "--detections", _write(
        r, "predictions.json", b'{"predictions": [{"filepath": "a.jpg", "prediction": "x"}]}')],
         "speciesnet.scripts.speciesnet_to_md"),
    # issue 36, item 3: a path that is no photo file is skipped with the reason, read with bounded memory and time
    Case("CSV naming /dev/zero", lambda r: ["ingest", _csv_naming(r, "zero", lambda f: "/dev/zero")],
         "skipping /dev/zero: is under /dev", rc=0, run_only=True),
    Case("CSV naming a FIFO", lambda r: ["ingest", _csv_naming(r, "fifo", _fifo)], "is a FIFO (named pipe)", rc=0,
         run_only=True),
    Case("CSV naming /proc/self/environ", lambda r: ["ingest", _csv_naming(r, "proc", lambda f: "/proc/self/environ")],
         "is under /proc", rc=0, run_only=True),
    Case("CSV naming a 101 MB file", lambda r: ["ingest", _csv_naming(r, "huge", _sparse)],
         f"more than the {limits.MAX_PHOTO_BYTES // 1_000_000} MB a photo may be", rc=0, run_only=True),
    Case("a folder's FIFO named .jpg", lambda r: ["ingest", _odd_folder(r)], "fifo.jpg: is a FIFO (named pipe)", rc=0,
         run_only=True),
    Case("a folder's link to /dev/zero named .jpg", lambda r: ["ingest", _odd_folder(r)],
         "zero.jpg: links to /dev/zero, under /dev", rc=0, run_only=True),
    Case("a folder's dangling link named .jpg", lambda r: ["ingest", _odd_folder(r)],
         "gone.jpg: cannot be read (No such file or directory)", rc=0, run_only=True),
    Case("a FIFO as the example photo", lambda r: ["search", "--image", _fifo(r / "inputs", "example-pipe.jpg")],
         "The photo example-pipe.jpg is not a regular file"),
    Case("a link to /dev/zero as the example photo",
         lambda r: ["search", "--image", str(_odd_folder(r)) + "/zero.jpg"],
         "The photo zero.jpg is not a regular file"),
    Case("a FIFO named as the CSV", lambda r: ["ingest", _fifo(r / "inputs", "pipe.csv")], "is not a regular file"),
    Case("a query of zero-width spaces", lambda r: ["search", "\u200b\u200b"], "The query is empty"),
    Case("a query of a byte-order mark", lambda r: ["search", "\ufeff"], "The query is empty"),
    # issue 36, item 3: evaluation inputs are checked before any work starts
    Case("eval --data a binary file", lambda r: ["eval", "--benchmark", "visual-rag", "--data",
                                                 _write(r, "random.jsonl", RANDOM), "--out", str(r / "eval-out")],
         "random.jsonl is not UTF-8 text (byte 0x80 at offset 128 cannot be read as UTF-8)"),
    Case("eval --data a file for the world's benchmark folder",
         lambda r: ["eval", "--benchmark", "fieldguide", "--data", _write(r, "random.jsonl", RANDOM), "--out",
                    str(r / "eval-out")], "random.jsonl is a file, not the folder of field-guide benchmark files"),
    Case("binary CSV says which byte", lambda r: ["ingest", _write(r, "random.csv", RANDOM)],
         "random.csv is not UTF-8 text (byte 0x80 at offset 128"),
    Case("eval --data /dev/zero", lambda r: ["eval", "--benchmark", "fieldguide", "--data", "/dev/zero", "--out",
                                             str(r / "eval-out")], "is not a regular file or folder"),
    Case("eval --out /proc/ev", lambda r: ["eval", "--benchmark", "fieldguide", "--out", "/proc/ev"],
         "--out /proc/ev is in the system's own files"),
    Case("eval --out a file", lambda r: ["eval", "--benchmark", "fieldguide", "--out", _write(r, "a-file", b"x")],
         "cannot be written"),
    Case("eval --rounds 1000000000", lambda r: ["eval", "--benchmark", "fieldguide", "--out", str(r / "eval-out"),
                                                "--rounds", "1000000000"], f"outside 0 to {limits.MAX_ROUNDS}"),
    Case("eval --limit -1", lambda r: ["eval", "--benchmark", "fieldguide", "--out", str(r / "eval-out"),
                                       "--limit", "-1"], "--limit = -1 is outside 1 to"),
    Case("eval-run relevance 1e308", lambda r: ["eval-run", "--qrels", _write(r, "huge-qrels.txt", b"q1 0 d1 1e308\n"),
                                                "--run", _write(r, "run.txt", RUN)],
         f"relevance '1e308' is not a whole number from -{limits.MAX_RELEVANCE}"),
    Case("eval-run score inf", lambda r: ["eval-run", "--qrels", _write(r, "qrels.txt", QRELS),
                                          "--run", _write(r, "inf-run.txt", b"q1 Q0 d1 1 inf t\n")],
         "score 'inf' is not a finite number"),
    Case("--config names a folder", lambda r: ["--config", str(r / "inputs"), "config"], "is a folder, not a file"),
    Case("ECOLENS_CONFIG names a folder", lambda r: ["config"], "is a folder, not a file",
         env={"ECOLENS_CONFIG": "{root}/inputs"}),
]


def _limit(nbytes: int):
    def apply() -> None:  # in the child: writes past nbytes fail with EFBIG, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return apply


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name if isinstance(c, Case) else None)
def test_cli_input(site, case: Case):
    data = site.root / f"fresh-{abs(hash(case.name))}" / "data" if case.fresh else site.data
    env = app_env(data, **{k: v.format(root=site.root) for k, v in case.env.items()})
    args = case.args(site.root)
    before = counts(data) if not case.fresh else None
    limit = None
    if case.limit_file_bytes:  # the database exists (its schema alone is ~170 KB); then the disk fills up
        open_engine(data / "ecolens.sqlite").dispose()
        limit = _limit(case.limit_file_bytes)
    done = cli(data, *args, env=env, stdin=case.stdin, preexec_fn=limit)
    said = done.stderr + done.stdout
    assert "Traceback" not in said, said[-3000:]
    assert done.returncode == case.rc, said[-2000:]
    assert case.words in said, said[-2000:]
    if case.rc == 2:
        assert "error: " in done.stderr and "how to fix: " in done.stderr
    if (data / "ecolens.sqlite").exists():
        assert integrity_ok(data)
    if before is not None and case.run_only:
        before.pop("ingest_runs")
        after = counts(data)
        assert after.pop("ingest_runs") >= 1 and after == before
    elif before is not None and not case.accepted:
        assert counts(data) == before
    site.healthy()


def test_an_ingest_stopped_by_a_full_disk_resumes_when_there_is_room(site):
    """The disk-full case left a usable data directory: the same ingest, with room, completes it."""
    fresh = [p for p in site.root.glob("fresh-*/data") if (p / "ecolens.sqlite").exists()]
    if not fresh:
        pytest.skip("the disk-full case did not run first")
    data = fresh[0]
    done = cli(data, "ingest", str(site.root / "inputs" / "many"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert counts(data)["photos"] == 60 and integrity_ok(data)


def test_a_database_first_created_on_a_full_disk_is_created_again(tmp_path):
    """The disk fills while the new database's tables are made: the command says so, and the next start (with
    room) makes them all again instead of failing on tables left without their version."""
    data = tmp_path / "data"
    env = app_env(data)
    full = cli(data, "ingest", _many(tmp_path), env=env, preexec_fn=_limit(60_000))
    said = full.stderr + full.stdout
    assert full.returncode == 2 and "Traceback" not in said and "disk" in said.lower(), said[-2000:]
    again = cli(data, "ingest", str(tmp_path / "inputs" / "many"), env=env)
    assert again.returncode == 0 and "60 added" in again.stdout, (again.stdout + again.stderr)[-2000:]
    assert integrity_ok(data)


REFUSED = [  # (arguments, what the log line says): a refused command is on record in ecolens.log
    (["search", "\u200b\u200b"], "The query is empty"),
    (["eval", "--benchmark", "fieldguide", "--out", "/proc/ev"], "--out /proc/ev is in the system's own files"),
    (["eval-run", "--qrels", "{root}/inputs/huge-qrels.txt", "--run", "{root}/inputs/run.txt"],
     "relevance '1e308' is not a whole number"),
]


@pytest.mark.parametrize("args,words", REFUSED, ids=[r[1][:30] for r in REFUSED])
def test_a_refused_command_has_its_line_in_the_log(site, args, words):
    _write(site.root, "huge-qrels.txt", b"q1 0 d1 1e308\n")
    _write(site.root, "run.txt", RUN)
    log = site.data / "logs" / "ecolens.log"
    before = log.read_text(errors="replace") if log.exists() else ""
    done = cli(site.data, *[a.format(root=site.root) for a in args])
    assert done.returncode == 2 and words in done.stderr, done.stderr[-2000:]
    added = log.read_text(errors="replace")[len(before):]
    assert any("command refused: " in line and words in line for line in added.splitlines()), added[-2000:]
