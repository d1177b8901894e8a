"""What the ingest command prints around the ingest itself: no progress bar before the input is checked (a
refused path prints its error alone), and the files left out for their suffix named, a few of them."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cli import ingest as cli_ingest
from core.contracts.errors import InputError


class _Ingestor:
    def __init__(self, steps):
        self.steps = steps

    def run(self, path, progress, **_):
        for done, total in self.steps:
            progress(done, total)
        if not self.steps:
            raise InputError(f"{path} does not exist", "give the path of a folder of images")
        return SimpleNamespace(ignored=[])


def _args(path):
    return SimpleNamespace(path=path, engine=None, workers=None, model=None, detections=None, deployments=None,
                           json=False)


def test_a_refused_path_prints_no_progress_bar(monkeypatch, capsys):
    monkeypatch.delenv("CI", raising=False)
    services = SimpleNamespace(ingestor=lambda: _Ingestor([]))
    with pytest.raises(InputError):
        cli_ingest._ingest_one(SimpleNamespace(), services, _args("/no/such/folder"))
    assert "ingest" not in capsys.readouterr().err  # was 'ingest: 0photo [00:00, ?photo/s]' above the error


def test_the_bar_shows_once_photos_are_counted(monkeypatch, capsys):
    from cli.common import progress_bar

    monkeypatch.delenv("CI", raising=False)
    update, bar = progress_bar("ingest")
    assert "ingest" not in capsys.readouterr().err
    update(3, 12)
    bar.close()
    assert "ingest" in capsys.readouterr().err and bar.tqdm.total == 12 and bar.tqdm.n == 3


def test_ignored_files_are_named_relative_to_the_folder(tmp_path):
    few = [str(tmp_path / "notes.txt"), str(tmp_path / "sub" / "md_results.json")]
    assert cli_ingest.ignored_line(few, str(tmp_path)) == (
        "note: 2 file(s) without an image suffix were ignored: notes.txt, sub/md_results.json")
    many = [str(tmp_path / f"clip{n:02}.mp4") for n in range(12)]
    line = cli_ingest.ignored_line(many, str(tmp_path))
    assert line.startswith("note: 12 file(s) without an image suffix were ignored: clip00.mp4, clip01.mp4")
    assert line.endswith("clip04.mp4 and 7 more") and "clip05" not in line and str(tmp_path) not in line
    assert cli_ingest.ignored_line([], str(tmp_path)) == ""


def test_a_folder_scan_s_ignored_files_are_named_as_the_folder_holds_them(tmp_path):
    from PIL import Image

    from core.ingest.sources import scan

    Image.new("RGB", (8, 8)).save(tmp_path / "a.jpg")
    (tmp_path / "card").mkdir()
    (tmp_path / "card" / "readme.txt").write_text("a card's notes")
    found = scan(tmp_path, tmp_path / "media")
    assert cli_ingest.ignored_line(found.ignored, str(tmp_path)).endswith("were ignored: card/readme.txt")
