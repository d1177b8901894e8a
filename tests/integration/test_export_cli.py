"""`python app.py export FORMAT --out PATH`: each label format the API's `/export` writes comes out of the command
line with the same content (one facade, core.exporting), exit status 0 and the path alone on stdout; a real
process run once, the rest through app.main on the same SQLite catalog."""
from __future__ import annotations

import csv
import json
import zipfile
from datetime import date

import pytest

import app
from core.contracts.records import Photo
from core.contracts.sessionlog import Label
from storage.catalog import SqlCatalog
from storage.db import open_engine
from storage.sessionlog import SqlSessionLog
from tests.live_server import STANDIN_ENV, cli


@pytest.fixture()
def data(tmp_path, monkeypatch):
    """A data directory whose catalog holds three photos and whose session log holds labels of 'frogs' by two
    annotators (ada: 1 relevant then relabelled, bob: 1 not relevant) and one of 'foxes'."""
    folder = tmp_path / "data"
    engine = open_engine(folder / "ecolens.sqlite")
    catalog, log = SqlCatalog(engine), SqlSessionLog(engine, folder / "artefacts")
    ids = catalog.add_photos([
        Photo(path="https://example.org/frog.jpg", sha256="a" * 64, scientific_name="Rana temporaria",
              observed_on=date(2024, 5, 1), latitude=52.5, longitude=-3.25, license="CC-BY"),
        Photo(path=str(tmp_path / "p2.jpg"), sha256="b" * 64, scientific_name="Bufo bufo", license="cc0"),
        Photo(path=str(tmp_path / "p3.jpg"), sha256="c" * 64, scientific_name="Vulpes vulpes"),
    ])
    sid = log.start_session("label", "frogs")
    for pid, value, who in [(ids[0], 0, "ada"), (ids[0], 1, "ada"), (ids[1], 1, "ada"), (ids[1], 0, "Bob"),
                            (ids[2], -1, "ada")]:
        log.add_label(Label(session_id=sid, query="frogs", photo_id=pid, label=value, annotator=who))
    log.add_label(Label(session_id=sid, query="foxes", photo_id=ids[2], label=1, annotator="ada"))
    engine.dispose()
    for key, value in {**STANDIN_ENV, "ECOLENS_DATA_DIR": str(folder), "HF_HUB_OFFLINE": "1"}.items():
        monkeypatch.setenv(key, value)
    return folder, ids


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = app.main(["export", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_each_label_format_is_written_with_the_path_alone_on_stdout(data, tmp_path, capsys):
    folder, (p1, p2, p3) = data
    code, out, err = _run(capsys, "csv", "--out", str(tmp_path / "out" / "frogs.csv"), "--query", "frogs")
    assert code == 0, err
    assert out.strip() == str(tmp_path / "out" / "frogs.csv")
    rows = list(csv.DictReader(open(out.strip(), encoding="utf-8")))
    assert sorted((r["photo_id"], r["annotator"], r["label"]) for r in rows) == sorted(
        [(str(p1), "ada", "1"), (str(p2), "ada", "1"), (str(p2), "Bob", "0"), (str(p3), "ada", "-1")])
    assert "wrote 4 rows as csv" in err

    code, out, _ = _run(capsys, "keypresses", "--out", str(tmp_path / "k.csv"), "--query", "frogs")
    assert code == 0 and len(list(csv.DictReader(open(out.strip())))) == 5  # every key press, relabel included

    code, out, _ = _run(capsys, "jsonl", "--out", str(tmp_path / "bob.jsonl"), "--query", "frogs",
                        "--annotator", "BOB")  # names are matched case-folded, as in the page
    assert code == 0
    [line] = open(out.strip()).read().splitlines()
    assert json.loads(line)["annotator"] == "Bob" and json.loads(line)["photo_id"] == p2

    code, out, _ = _run(capsys, "inquire-rerank", "--out", str(tmp_path / "r.csv"), "--query", "frogs")
    rerank = list(csv.DictReader(open(out.strip())))
    assert code == 0 and {r["inat24_species_name"] for r in rerank} == {"Rana temporaria", "Bufo bufo"}  # no skip

    code, out, _ = _run(capsys, "dwc", "--out", str(tmp_path / "frogs.zip"), "--query", "frogs")
    assert code == 0
    with zipfile.ZipFile(out.strip()) as zf:
        occurrences = zf.read("occurrence.txt").decode().splitlines()
    names = {line.split("\t")[2] for line in occurrences[1:]}
    assert names == {"Rana temporaria", "Bufo bufo"}  # p2: relevant for ada, not for Bob: out, with a remark


def test_the_command_line_and_the_label_view_write_the_same_file(data, tmp_path, capsys):
    from ui.label_handlers import LabelHandlers

    folder, _ = data
    code, out, _ = _run(capsys, "csv", "--out", str(tmp_path / "cli.csv"), "--query", "frogs")
    services = app.Context(app.load_settings(None)).services()
    log = SqlSessionLog(open_engine(folder / "ecolens.sqlite"), folder / "artefacts")
    page = LabelHandlers(services.engine, log).export("csv", "frogs", "")
    assert code == 0 and open(out.strip()).read() == open(page).read()


def test_a_real_process_exits_0_and_says_only_the_path(data, tmp_path):
    folder, _ = data
    target = tmp_path / "foxes.jsonl"
    done = cli(folder, "export", "jsonl", "--out", str(target), "--query", "foxes")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{target}\n"
    assert json.loads(target.read_text())["query"] == "foxes"
    assert "Traceback" not in done.stderr
