"""Answers that cite only what they were shown, against real servers (issue 35 item 7): SmolLM2-135M behind
the `openai` backend (llama.cpp's own server on 127.0.0.1), as the text LLM reading the photo notes and as the
photo reader (a text model that cannot see the pictures). Whatever the small model says, the answer is either
a properly cited answer with evidence or refused with a reason; never verified without citations. A fault
server's well-formed reply that cites nothing is refused; a server that fails leaves the offline rule's answer,
unverified, with notices that agree."""
from __future__ import annotations

import numpy as np
import pytest

from core.backends import registry
from core.backends.openai_reader import OpenAIReader
from core.config import Settings
from core.contracts.records import Photo
from core.methods import answer_check
from core.search.engine import SearchEngine
from tests.conftest_llama import llama_server, smollm_path  # noqa: F401  (session fixtures)
from tests.fakes import FakeBackends, FakeEmbedder, FakeSearch
from tests.faultservers import FaultServer

DIM = 8
HERON = dict(scientific_name="Ardea herodias", common_name="Great blue heron", genus="Ardea", family="Ardeidae",
             order="Pelecaniformes", class_name="Aves")
PHOTOS = [Photo(path=f"h{i}.jpg", id=i + 1, caption=c, **HERON)
          for i, c in enumerate(["a heron holding a fish in its bill at the water's edge",
                                 "a heron standing in shallow water", "a heron in flight over reeds"])]
QUESTIONS = ["a heron eating a fish", "What colour is the heron's bill?"]


def engine_with(tmp_path, llm, reader=None) -> SearchEngine:
    vecs = (np.eye(DIM)[list(range(len(PHOTOS)))] + 0.01).astype(np.float32)
    b = FakeBackends(embedder=FakeEmbedder(DIM), llm=llm)
    b.reader = reader
    search = FakeSearch(PHOTOS, vecs, Settings(data_dir=str(tmp_path), k=3), backends=b)
    return SearchEngine(search, search.backends)


def settings_for(base: str) -> Settings:
    return Settings(openai_base_url=base, llm="openai", judge="openai", llm_model="smollm2", judge_model="smollm2",
                    backend_timeout_s=120.0, backend_retries=0)


def assert_cited_or_refused(out: dict, shown: list[int]) -> None:
    notices = out["notices"]
    if out["verified"]:  # an answer with evidence: cites photos it was shown, and only those
        assert out["cited_ids"] and set(out["cited_ids"]) <= set(shown), out
        assert set(answer_check.citations(out["text"])) <= set(shown) and "refused" not in out, out
        assert not any(n.startswith("answer: not shown") for n in notices), notices
    elif out.get("refused"):  # refused, with the reason, said once, the same way
        assert out["cited_ids"] == [] and out["text"].startswith("No answer can be written from these photos")
        assert f"answer: not shown, because {out['refused']}" in notices, notices
    else:  # only the offline rule's answer is neither, and it says so
        assert any("unverified: no language model wrote it" in n for n in notices), notices


@pytest.mark.parametrize("path", ["notes", "reader"])
def test_smollm2_answers_are_cited_or_refused(llama_server, tmp_path, path):
    settings = settings_for(llama_server)
    reader = None
    if path == "reader":
        reader = OpenAIReader.from_settings(settings)
        reader.max_tokens = 120  # keeps the test quick on a CPU; the check reads whatever it wrote
    engine = engine_with(tmp_path, registry.create_llm(settings), reader)
    for question in QUESTIONS:
        out = engine.answer(question, [1, 2, 3])
        assert out["source"] == ("photos" if path == "reader" else "captions"), out
        assert_cited_or_refused(out, [1, 2, 3])


def test_a_fault_servers_uncited_reply_is_refused_and_a_failing_server_leaves_the_rule(tmp_path):
    with FaultServer("blind") as blind:  # well-formed completions that say "Yes - a reason" or "No - a reason"
        llm = registry.create_llm(settings_for(blind.url + "/v1").replace(llm_model="m"))
        out = engine_with(tmp_path / "blind", llm).answer(QUESTIONS[0], [1, 2, 3])
        assert blind.calls >= 1
    assert out["verified"] is False and "cites none of the photos it was shown" in out["refused"], out
    assert_cited_or_refused(out, [1, 2, 3])
    with FaultServer("error_500") as failing:
        llm = registry.create_llm(settings_for(failing.url + "/v1").replace(llm_model="m"))
        out = engine_with(tmp_path / "failing", llm).answer(QUESTIONS[0], [1, 2, 3])
    assert out["verified"] is False and "refused" not in out, out
    assert any("the language model failed" in n for n in out["notices"]), out["notices"]
    assert_cited_or_refused(out, [1, 2, 3])
