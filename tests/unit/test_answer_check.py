"""Answers that cite only what they were shown (issue 35 item 7): a model's answer is an answer with evidence
(`verified`) only when it cites a photo it was shown, none it was not, is no echo of its prompt and names no
organism its cited photos do not record; anything else is refused with the reason, and the notices about the
answer say the same thing. Table-driven over answer texts, written by the text LLM from the photo notes and by
a photo reader."""
from __future__ import annotations

import numpy as np
import pytest

from core.config import Settings
from core.contracts.records import Photo
from core.methods import answer_check
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeEmbedder, FakeLLM, FakeSearch

DIM = 8
ZEBRA = dict(scientific_name="Equus quagga", common_name="Plains zebra", genus="Equus", family="Equidae")
MOTH = "Scarlet-underwing Veilmoth"  # a species of the demo world (registered by tests/conftest.py)
SHOWN = [1, 2, 3]
QUESTION = "What animal is this?"


class TextReader:
    model_id = "fake-reader"
    is_standin = False

    def __init__(self, text: str):
        self.text = text

    def read(self, question, photos):
        return self.text


def engine_for(tmp_path, text: str, by: str) -> SearchEngine:
    photos = [Photo(path=f"z{i}.png", id=i + 1, **ZEBRA) for i in range(4)]
    vecs = (np.eye(DIM)[list(range(4))] + 0.01).astype(np.float32)
    b = FakeBackends(embedder=FakeEmbedder(DIM), llm=FakeLLM(default=text) if by == "llm" else None)
    b.reader = TextReader(text) if by == "reader" else None
    search = FakeSearch(photos, vecs, Settings(data_dir=str(tmp_path), k=4, rerank_k=4), backends=b)
    return SearchEngine(search, search.backends)


# (answer text, the words the refusal gives or None for a good answer, the ids a good answer cites)
CASES = [
    pytest.param("The photos show a beautiful and vibrant landscape. The people in the picture are smiling.",
                 "cites none of the photos it was shown", None, id="no citation"),
    pytest.param("A Plains zebra [1] next to another [184].", "cites photos it was not shown (184", None,
                 id="citation of an unshown id"),
    pytest.param(f"Question: {QUESTION}\nPhoto notes:\n[184] Photo of Scorpionfish (Scopus angustus) [1]",
                 "repeated the question and photo notes", None, id="echo of the prompt"),
    pytest.param(f"{QUESTION} [1]", "repeated the question", None, id="the question said back"),
    pytest.param("A Scorpionfish (Scopus angustus) is eating [2].", "named Scopus angustus", None,
                 id="invented binomial"),
    pytest.param(f"The photos show a {MOTH} [2].", "named Veilumbra cinnabarina", None,
                 id="invented organism a world knows"),
    pytest.param("", None, None, id="nothing written"),
    pytest.param("A Plains zebra grazing [2]; its stripes are black and white [1, 3].", None, [2, 1, 3],
                 id="good answer"),
    pytest.param("Plains zebra (Equus quagga) [3].", None, [3], id="good answer with its binomial"),
]


@pytest.mark.parametrize("by", ["llm", "reader"])
@pytest.mark.parametrize("text, refusal, good_cites", CASES)
def test_an_answer_is_verified_only_when_it_cites_what_it_was_shown(tmp_path, by, text, refusal, good_cites):
    out = engine_for(tmp_path, text, by).answer(QUESTION, SHOWN)
    notices = out["notices"]
    if not text:  # nothing written: the offline rule answers, unverified, and says so
        assert out["verified"] is False and "refused" not in out
        assert any("unverified: no language model wrote it" in n for n in notices)
        return
    if refusal is None:
        assert out["verified"] is True and "refused" not in out and out["text"] == text
        assert out["cited_ids"] == good_cites
        assert not any("not shown" in n or "unverified" in n for n in notices), notices
        return
    assert out["verified"] is False and refusal in out["refused"], out
    assert out["cited_ids"] == [] and out["text"].startswith("No answer can be written from these photos")
    assert out["refused_text"] == text
    said = [n for n in notices if "answer" in n]
    # one notice about this answer, and it gives the refusal's own reason; none calls it verified or kept
    assert said == [f"answer: not shown, because {out['refused']}"], notices
    assert ("fake-reader" if by == "reader" else "fake-llm") in out["refused"]


def test_citations_count_groups_and_ignore_numbers_outside_brackets():
    assert answer_check.citations("Red [3, 4] and 12 toes [3]; [x] [7]") == [3, 4, 7]


def test_a_note_quoted_in_an_answer_is_not_an_echo():
    notes = [(1, "Plains zebra (Equus quagga), grazing")]
    assert not answer_check.echo_of_prompt("A Plains zebra (Equus quagga), grazing [1].", QUESTION, notes)
    assert answer_check.echo_of_prompt("[1] Plains zebra (Equus quagga), grazing\n[2] Plains zebra (Equus "
                                       "quagga), grazing", QUESTION, notes)


@pytest.mark.parametrize("answer, label", [
    ({"text": "Zebra [1].", "cited_ids": [1], "verified": True}, "Answer with evidence"),
    ({"text": "No answer can be written from these photos: x.", "cited_ids": [], "verified": False,
      "refused": "x"}, "No answer"),
    ({"text": "No answer can be written from the photos: the offline rule ... [1]", "cited_ids": [1],
      "verified": False}, "Unverified answer"),
])
def test_the_page_labels_an_answer_as_what_it_is(answer, label):
    from ui.evidence import evidence_md

    assert evidence_md({"answer": answer}, [{"id": 1, "rank": 1}]).startswith(f"**{label}:**")
