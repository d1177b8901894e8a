"""Every careless `python app.py export` as a table: each ends in `error:` and `how to fix:` with exit status 2,
nothing on stdout (scripts read the path written there), no traceback, and nothing left at --out."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

import app
from core.contracts.records import Photo
from core.contracts.sessionlog import Label
from storage.catalog import SqlCatalog
from storage.db import open_engine
from storage.sessionlog import SqlSessionLog
from tests.live_server import STANDIN_ENV


@dataclass
class Case:
    name: str
    args: Callable[[Path], list[str]]  # a scratch folder -> the arguments after `export`
    words: str  # what the message must say
    fix: str  # what its `how to fix:` line must say
    rc: int = 2


def _full_folder(root: Path) -> str:
    (root / "full").mkdir()
    (root / "full" / "keep.txt").write_text("someone's file")
    return str(root / "full")


def _file(root: Path) -> str:
    (root / "a-file").write_text("not a folder")
    return str(root / "a-file")


def _folder(root: Path) -> str:
    (root / "a-folder").mkdir()
    return str(root / "a-folder")


CASES = [
    Case("unknown format", lambda r: ["xlsx", "--out", str(r / "x.xlsx"), "--query", "frogs"],
         "Unknown export format 'xlsx'", "camtrap-dp"),
    Case("label format without --query", lambda r: ["csv", "--out", str(r / "x.csv")], "no query was given",
         "--query"),
    Case("blank --query", lambda r: ["dwc", "--out", str(r / "x.zip"), "--query", "   "], "no query was given",
         "--query"),
    Case("no --out", lambda r: ["csv", "--query", "frogs"], "the following arguments are required: --out",
         "--help"),
    Case("a query nobody labelled", lambda r: ["csv", "--out", str(r / "x.csv"), "--query", "toads"],
         "No labels for “toads”", "judge some photos"),
    Case("an annotator who did not label it", lambda r: ["jsonl", "--out", str(r / "x.jsonl"), "--query", "frogs",
                                                        "--annotator", "zed"], "No labels for “frogs” by zed",
         "judge some photos"),
    Case("dwc with nothing relevant", lambda r: ["dwc", "--out", str(r / "x.zip"), "--query", "frogs",
                                                 "--annotator", "bob"], "judged relevant", "judge some"),
    Case("camtrap-dp into a folder that is not empty", lambda r: ["camtrap-dp", "--out", _full_folder(r)],
         "exists and is not empty", "new folder name"),
    Case("camtrap-dp onto a file", lambda r: ["camtrap-dp", "--out", _file(r)], "is a file", "new (or empty) folder"),
    Case("camtrap-dp of a catalog without camera-trap photos", lambda r: ["camtrap-dp", "--out", str(r / "pkg")],
         "no camera-trap photo with a deployment", "--deployments FILE.csv"),
    Case("camtrap-dp of a query with nothing relevant", lambda r: ["camtrap-dp", "--out", str(r / "pkg"), "--query",
                                                                   "frogs", "--annotator", "bob"],
         "No photo of “frogs” is judged relevant", "judge some first"),
    Case("megadetector of a catalog no detector looked at", lambda r: ["megadetector", "--out", str(r / "md.json")],
         "No photo to export has been looked at by a detector", "--detections FILE.json"),
    Case("--annotator without --query", lambda r: ["camtrap-dp", "--out", str(r / "pkg"), "--annotator", "ada"],
         "annotator was named without a query", "--query"),
    Case("csv onto a folder", lambda r: ["csv", "--out", _folder(r), "--query", "frogs"], "is a folder",
         "export.csv"),
    Case("a path under a file", lambda r: ["csv", "--out", _file(r) + "/x.csv", "--query", "frogs"],
         "cannot be written", "folder you can write to"),
    Case("a folder nothing may be written in", lambda r: ["jsonl", "--out", "/proc/self/x.jsonl", "--query",
                                                          "frogs"], "cannot be written", "you can write to"),
]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export-hostile") / "data"
    engine = open_engine(folder / "ecolens.sqlite")
    catalog, log = SqlCatalog(engine), SqlSessionLog(engine, folder / "artefacts")
    [pid] = catalog.add_photos([Photo(path="https://example.org/a.jpg", sha256="d" * 64, scientific_name="Rana")])
    sid = log.start_session("label", "frogs")
    log.add_label(Label(session_id=sid, query="frogs", photo_id=pid, label=1, annotator="ada"))
    log.add_label(Label(session_id=sid, query="frogs", photo_id=pid, label=0, annotator="bob"))
    engine.dispose()
    return folder


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_careless_export_is_told_what_to_fix(case, data, tmp_path, monkeypatch, capsys):
    for key, value in {**STANDIN_ENV, "ECOLENS_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1"}.items():
        monkeypatch.setenv(key, value)
    args = case.args(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    try:
        code = app.main(["export", *args])
    except SystemExit as exc:  # argparse's own mistakes (cli.common.Parser) leave through exit(2)
        code = exc.code
    out, err = capsys.readouterr()
    assert code == case.rc, err
    assert out == "", out
    assert "Traceback" not in err
    message, _, fix = err.partition("how to fix:")
    assert message.startswith("error:") and case.words in message, err
    assert case.fix in fix, err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written
