"""`python app.py chat` on the offline stand-in embedder: a note says its scores are stand-in scores that mean
nothing about the photos, each candidate's score reads `stand-in`, and --json describes the score as `search
--json` does (`score.standin`), as the page and `search` say it; a real model's chat keeps plain numbers."""
from __future__ import annotations

import argparse
import io
import json
import sys
from types import SimpleNamespace

import pytest

from cli import chat
from core.contracts.records import Hit, Photo


class FakeSession:
    def __init__(self, description):
        self.caption, self.turns, self.notes, self.notices = description, [], [], []

    def hits(self):
        return [Hit(rank=i, photo_id=10 + i, score=0.1 * i + 0.0004,
                    photo=Photo(path=f"/p/{i}.jpg", id=10 + i, scientific_name=f"Rana {i}")) for i in (1, 2)]

    def next_question(self):
        return SimpleNamespace(round=len(self.turns), text="Is it on a leaf?")

    def answer(self, text="", marked=(), not_relevant=()):
        self.turns.append(text)
        self.caption += f", {text}"
        return self.hits()

    def to_json(self):
        return {"caption": self.caption, "turns": self.turns}


class FakeEngine:
    def __init__(self, standin):
        self.standin = standin

    def standin_similarity(self):
        return self.standin

    def dialogue(self, description, filters=None, k=None):
        return FakeSession(description)


def _chat(monkeypatch, standin, *more):
    parser = argparse.ArgumentParser()
    chat.add_parser(parser.add_subparsers())
    args = parser.parse_args(["chat", "a frog", "--rounds", "1", *more])
    services = SimpleNamespace(engine=FakeEngine(standin), ensure_corpus=lambda bars: [])
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(b"yes\n")))
    return chat.run(SimpleNamespace(services=lambda: services), args)


@pytest.mark.parametrize("standin", ["hash", None])
def test_chat_calls_a_stand_ins_scores_so(monkeypatch, capsys, standin):
    assert _chat(monkeypatch, standin) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith(("1. ", "2. "))]
    assert len(lines) == 4  # the first candidates and those after the answer
    if standin:
        assert "note: scores are stand-in scores, a number from the offline stand-in ('hash'" in out
        assert "means nothing about what a photo shows" in out
        assert lines[0] == "1. [11] stand-in 0.100 Rana 1  /p/1.jpg" and lines[3].startswith("2. [12] stand-in 0.200")
    else:
        assert "stand-in" not in out
        assert lines[0] == "1. [11] 0.100 Rana 1  /p/1.jpg"


@pytest.mark.parametrize("standin", ["hash", None])
def test_chat_json_describes_the_score_as_search_does(monkeypatch, capsys, standin):
    assert _chat(monkeypatch, standin, "--json") == 0
    captured = capsys.readouterr()
    score = json.loads(captured.out)["score"]
    assert score["kind"] == "cosine" and score.get("standin") == standin
    assert ("stand-in score" in score["meaning"]) == bool(standin)
    assert ("stand-in" in captured.err) == bool(standin)  # the text lines go to stderr with --json
