"""First start with a world that has a camera-trap side: the demo is drawn and ingested, then its card is drawn
inside the demo folder and ingested too; a world without one is prepared as before."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.contracts.world import GENERIC, DemoCard, World
from core.search import preparation


@dataclass
class _Report:
    added: int


class _Catalog:
    def count(self) -> int:
        return 0


class _Corpus:
    reloaded = 0

    def reload(self) -> None:
        self.reloaded += 1


class _Settings:
    corpus = ""

    def __init__(self, root: Path):
        self.root = root

    def path(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)


def _world(calls: list, with_card: bool) -> World:
    def build_demo(folder, seed, progress):
        calls.append(("demo", Path(folder), seed))
        progress(1, 1)
        return Path(folder) / "observations.csv"

    def build_card(folder, seed, progress):
        calls.append(("card", Path(folder), seed))
        progress(3, 3)
        return DemoCard(folder=str(Path(folder) / "camtrap"), detections=str(Path(folder) / "camtrap/d.json"),
                        deployments=str(Path(folder) / "camtrap/d.csv"), frames=3)

    return World(name="toy", rule_book=GENERIC, title="toy", build_demo=build_demo, demo_folder="toy",
                 build_card=build_card if with_card else None)


def _prepare(tmp_path, monkeypatch, with_card: bool):
    calls: list = []
    monkeypatch.setattr(preparation, "demo_world", lambda: _world(calls, with_card))
    steps: list[str] = []

    def ingest(path, progress, **card):
        calls.append(("ingest", Path(path), card))
        progress(1, 1)
        return _Report(added=3 if "camtrap" in str(path) else 10)

    corpus = _Corpus()
    notices = preparation.prepare_corpus(_Settings(tmp_path), _Catalog(), corpus, True, ingest,
                                         lambda what, done, total: steps.append(what))
    return calls, steps, notices, corpus


def test_the_card_is_drawn_inside_the_demo_folder_and_ingested_after_the_demo(tmp_path, monkeypatch):
    calls, steps, notices, corpus = _prepare(tmp_path, monkeypatch, with_card=True)
    demo = tmp_path / "toy"
    assert calls == [("demo", demo, 0), ("ingest", demo / "observations.csv", {}), ("card", demo, 0),
                     ("ingest", demo / "camtrap", {"detections": str(demo / "camtrap/d.json"),
                                                   "deployments": str(demo / "camtrap/d.csv")})]
    assert steps == ["drawing the demo world", "indexing the demo world", "drawing the camera-trap demo",
                     "indexing the camera-trap demo"]
    assert any("10 photos" in n for n in notices) and any("camera-trap" in n and "3 frames" in n for n in notices)
    assert corpus.reloaded == 1


def test_a_world_without_a_card_is_prepared_as_before(tmp_path, monkeypatch):
    calls, steps, notices, _ = _prepare(tmp_path, monkeypatch, with_card=False)
    assert [c[0] for c in calls] == ["demo", "ingest"] and len(notices) == 1
    assert "camera-trap" not in " ".join(steps)
