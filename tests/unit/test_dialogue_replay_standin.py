"""A dialogue on the offline stand-in embedder, reopened from the History: its turns' candidates are logged with
the stand-in's name (stored as a search's stages are), so the replay's captions, score line and photo view call
the numbers stand-in scores as the Dialogue view did; a real model's dialogue keeps plain similarities."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.sessions.memory_log import MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine
from ui import strings as S
from ui.dialogue_handlers import DialogueHandlers
from ui.history_handlers import HistoryHandlers
from ui.lightbox import LightboxHandlers


@pytest.mark.parametrize("embedder, standin", [("hash", True), ("fake", False)])
def test_a_reopened_stand_in_dialogue_says_stand_in_score(tmp_path, embedder, standin):
    engine = FakeEngine(tmp_path, embedder=embedder)
    log = MemorySessionLog()
    dialogue = DialogueHandlers(engine, log)
    _, _, live, *_, st = dialogue.start("a frog on a leaf", None)
    dialogue.turn("yes", st)
    for request in log.session(st["id"]).requests:  # every turn, as a JSON object like a search's stages
        logged = {s.name: s.artefacts for s in request.stages if s.name != "final"}
        assert logged == ({"standin_similarity": {"value": "hash"}} if standin else {})
    history = HistoryHandlers(engine, log)
    table, gallery, _, _, _, hstate = history.open(log.token(st["id"]))
    scores = [f"{min(1.0, max(0.0, h['score'])):.2f}" for h in hstate["hits"]]
    captions = [caption for _, caption in gallery]
    view = LightboxHandlers(engine).from_results(hstate, [], SimpleNamespace(index=0))
    explained = " ".join(str(x) for x in view if isinstance(x, str))
    if standin:
        assert all(c.endswith(f" · {S.STANDIN_SCORE.format(score=s)}") for c, s in zip(captions, scores)), captions
        assert "Scores: stand-in score, that is a number from the offline stand-in ('hash'" in table, table
        assert f"Stand-in score: {scores[0]}" in explained and "means nothing about what a photo shows" in explained
        assert live[0][1].endswith(f" · {S.STANDIN_SCORE.format(score=scores[0])}")  # as the Dialogue view said
    else:
        assert all(c.endswith(f" · {s}") for c, s in zip(captions, scores)), captions
        assert "stand-in" not in table and "stand-in" not in " ".join(captions)
        assert f"Similarity: {scores[0]}" in explained and "stand-in" not in explained.lower()
    first = history.requests_picker(hstate)["choices"][0][1]  # the start's candidates too
    earlier, _, _ = history.show_request(first, hstate)
    assert earlier and all(("· stand-in " in c) == standin for _, c in earlier)
