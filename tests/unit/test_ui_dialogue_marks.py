"""Marked photos in the dialogue: every one stays starred in the gallery with the rank number it shows, the
note and the chat name them by those rank numbers, and they go to the session as photos (not as words)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.sessions.memory_log import MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine
from ui import strings as S
from ui.dialogue_handlers import DialogueHandlers


def _starred(gallery) -> list[str]:
    return [caption for _, caption in gallery if caption.startswith(S.LOOKS_RIGHT + " ")]


def test_every_marked_photo_stays_starred_and_is_named_by_its_rank(tmp_path):
    engine = FakeEngine(tmp_path)
    h = DialogueHandlers(engine, MemorySessionLog())
    *_, st = h.start("a frog on a leaf", None)
    ids = [hit["id"] for hit in st["hits"]]
    gallery, note, st = h.mark(st, SimpleNamespace(index=1))
    gallery, note, st = h.mark(st, SimpleNamespace(index=3))
    starred = _starred(gallery)
    assert len(starred) == 2 and "· #2" in starred[0] and "· #4" in starred[1]  # both, not only the last
    assert "#2, #4" in note and str(ids[3]) not in note.replace("#4", "")  # rank numbers, not photo ids
    gallery, note, st = h.mark(st, SimpleNamespace(index=1))  # a second click unmarks
    assert len(_starred(gallery)) == 1 and "#4" in note and "#2" not in note
    gallery, note, st = h.mark(st, SimpleNamespace(index=0))
    chat, _, gallery, caption, note, _, st = h.turn("no", st)
    assert chat[-2] == {"role": "user", "content": "no · " + S.MARKED_SAID.format(ranks="#1, #4")}
    session = h._session(st)
    assert session.relevant == [ids[3], ids[0]] and caption == "a frog on a leaf, no"  # photos, not words
    shown = {hit["id"]: hit["rank"] for hit in st["hits"]}
    assert st["marked"] == [] and ids[0] not in shown  # the first photo left the candidates
    starred = _starred(gallery)
    assert len(starred) == 1 and f"· #{shown[ids[3]]}" in starred[0]  # still starred after the answer
    assert f"#{shown[ids[3]]}" in note and "1 photo you marked earlier is no longer among the candidates" in note
    gallery, note, st = h.mark(st, SimpleNamespace(index=list(shown).index(ids[3])))  # already sent: stays
    assert len(_starred(gallery)) == 1 and st["marked"] == []


def test_marks_alone_are_a_turn_named_by_rank(tmp_path):
    engine = FakeEngine(tmp_path)
    h = DialogueHandlers(engine, MemorySessionLog())
    *_, st = h.start("a frog on a leaf", None)
    _, _, st = h.mark(st, SimpleNamespace(index=2))
    chat, *_ = h.turn("", st)
    assert chat[-2] == {"role": "user", "content": S.MARKED_SAID.format(ranks="#3")}


def test_the_rule_books_question_is_a_note_in_the_pages_words_and_failures_warn_once(tmp_path, monkeypatch):
    """Asking the built-in rule's question is how the dialogue works, not a failure: an info note in the page's
    words (no 'offline rule', no 'candidates'); a failure warns once, not again on every later turn."""
    import ui.forms

    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(ui.forms.gr, "Info", lambda m, title=None, **k: shown.append(("info", m)))
    monkeypatch.setattr(ui.forms.gr, "Warning", lambda m, **k: shown.append(("warning", m)))
    engine = FakeEngine(tmp_path)
    h = DialogueHandlers(engine, MemorySessionLog())
    *_, st = h.start("a frog on a leaf", None)
    assert shown == []
    session = h._session(st)
    session.fallback = "dialogue: no proposed question was new and split the candidates; asked the offline rule's"
    session.notices.append("the judge failed while checking answers against the candidates (timeout)")
    *_, st = h.turn("no", st)
    assert [kind for kind, _ in shown] == ["warning", "info"]
    assert shown[1][1] == S.DIALOGUE_OWN_QUESTION and "offline" not in shown[1][1]
    assert "candidates" not in shown[1][1].lower() and "rule" not in shown[1][1].lower()
    shown.clear()
    session.fallback = ""
    h.turn("yes", st)
    assert shown == []  # the earlier failure is not warned again


@pytest.mark.parametrize("embedder, standin", [("hash", True), ("fieldguide", False)])
def test_a_stand_in_embedders_candidates_show_stand_in_scores_in_the_gallery_and_photo_view(tmp_path, embedder,
                                                                                          standin):
    """The dialogue ranks by similarity itself: with the hash stand-in its captions and the photo view opened
    from it call the numbers stand-in scores that mean nothing about the photo, in the search's words; a world's
    own encoder keeps plain similarities."""
    from ui.dialogue_view import _opener
    from ui.lightbox import LightboxHandlers

    engine = FakeEngine(tmp_path, embedder=embedder)
    h = DialogueHandlers(engine, MemorySessionLog())
    _, _, gallery, *_, st = h.start("a frog on a leaf", None)
    scores = [f"{min(1.0, max(0.0, hit['score'])):.2f}" for hit in st["hits"]]
    captions = [caption for _, caption in gallery]
    open_candidate = _opener(SimpleNamespace(h=LightboxHandlers(engine)))
    view = open_candidate(st, 1, [])[3]  # the photo view's explanation of the second candidate
    if standin:
        assert all(c.endswith(f" · {S.STANDIN_SCORE.format(score=s)}") for c, s in zip(captions, scores)), captions
        assert f"Stand-in score: {scores[1]}" in view and "means nothing about what a photo shows" in view
        assert "(&#x27;hash&#x27;" in view
    else:
        assert all(c.endswith(f" · {s}") for c, s in zip(captions, scores)) and "stand-in" not in " ".join(captions)
        assert f"Similarity: {scores[1]}" in view and "stand-in" not in view.lower()
    *_, st = h.turn("yes", st)  # the next turn's candidates too
    gallery, _, _ = h.mark(st, SimpleNamespace(index=0))
    assert all(("· stand-in " in c) == standin for _, c in gallery)
