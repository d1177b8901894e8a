"""Answers read from the retrieved photos (photo reader, citing ids, falling back to notes), the answer judges,
and Cross-modal RAG's reference-guided generation: each Pareto photo goes to the generator with the sub-queries
it satisfies, and the output is labelled generated."""
from __future__ import annotations

import json
from types import SimpleNamespace as NS

import numpy as np
import pytest
from PIL import Image

from core.backends.base import GeneratedImage, ReferenceImage
from core.backends.openai_generator import OpenAIGenerator
from core.backends.openai_reader import OpenAIReader
from core.backends.standin_generator import StandinGenerator
from core.search.engine import SearchEngine
from core.contracts.errors import BackendError
from core.evaluation.answers import answer_units, judge_answer, keyword_score
from core.evaluation.items import EvalItem
from core.contracts.records import Photo
from core.contracts.search_request import SearchRequest
from core.config import Settings
from tests.fakes import FakeBackends, FakeChatClient, FakeEmbedder, FakeGenerator, FakeLLM, FakeSearch

DIM = 8


class FakeReader:
    """Answers with the ids it was shown; `fail` raises. Records what it saw."""

    is_standin, model_id = False, "fake-reader"

    def __init__(self, fail: bool = False):
        self.fail, self.calls = fail, []

    def read(self, question, photos):
        self.calls.append((question, [pid for pid, _ in photos], [im.size for _, im in photos]))
        if self.fail:
            raise BackendError("the fake reader is down")
        return f"The crest is red [{photos[0][0]}] [{photos[-1][0]}]."


class ComposingGenerator(FakeGenerator):
    """A fake generator that also composes from references (records them)."""

    def __init__(self):
        super().__init__()
        self.references = []

    def generate_from_references(self, prompt, references, *, seed, size=224):
        self.references.append((prompt, list(references)))
        return GeneratedImage(Image.new("RGB", (size, size), (9, 9, 9)), prompt, seed, self.model_id, [])


def corpus(tmp_path, **backends):
    rng = np.random.default_rng(0)
    n = 12
    vecs = np.eye(DIM)[[i % DIM for i in range(n)]] + 0.01 * rng.standard_normal((n, DIM))
    names = ["red frog", "green frog", "blue beetle", "red beetle"]
    photos = [Photo(path=f"p{i}.png", id=i + 1, common_name=names[i % 4], caption=f"a {names[i % 4]} on a leaf")
              for i in range(n)]
    b = FakeBackends(embedder=FakeEmbedder(DIM), **{k: v for k, v in backends.items() if k != "reader"})
    if "reader" in backends:
        b.reader = backends["reader"]
    return FakeSearch(photos, vecs.astype(np.float32), Settings(data_dir=str(tmp_path), k=5), backends=b)


def test_answer_reads_the_photos_and_cites_their_ids(tmp_path):
    reader = FakeReader()
    search = corpus(tmp_path, reader=reader)
    res = SearchEngine(search, search.backends).search(SearchRequest("red frog", answer=True))
    ans = res.stages["answer"]
    top = [h.photo_id for h in res.hits[:5]]
    assert ans["source"] == "photos" and ans["reader"] == "fake-reader" and ans["photos"] == top
    assert ans["cited_ids"] == [top[0], top[-1]]  # a photo not shown would refuse it (test_answer_check.py)
    assert reader.calls[0][1] == top and reader.calls[0][2] == [(8, 8)] * 5  # the pixels, not captions
    again = SearchEngine(search, search.backends).search(SearchRequest("red frog", answer=True))
    assert len(reader.calls) == 1 and again.stages["answer"]["text"] == ans["text"]  # cached


def test_a_failed_reader_falls_back_to_the_notes_with_a_notice(tmp_path):
    search = corpus(tmp_path, reader=FakeReader(fail=True))
    res = SearchEngine(search, search.backends).search(SearchRequest("red frog", answer=True))
    assert res.stages["answer"]["source"] == "captions"
    assert any("photo reader failed" in n for n in res.notices)


def test_engine_answer_reads_given_photos(tmp_path):
    reader = FakeReader()
    search = corpus(tmp_path, reader=reader)
    out = SearchEngine(search, search.backends).answer("what colour is the crest?", [4, 2, 9])
    assert reader.calls[0][1] == [4, 2, 9] and out["cited_ids"] == [4, 9]


def test_openai_reader_sends_each_photo_after_its_id():
    client = FakeChatClient("The crest is red [3].")
    reader = OpenAIReader(client, "vlm")
    text = reader.read("What colour is the crest?", [(3, Image.new("RGB", (8, 8))), (5, Image.new("RGB", (8, 8)))])
    assert text == "The crest is red [3]."
    parts = client.requests[0]["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "text", "image_url", "text", "image_url"]
    assert parts[1]["text"] == "[3]" and parts[3]["text"] == "[5]" and client.requests[0]["temperature"] == 0.0


def test_answer_units_and_judges():
    items = [EvalItem("vr-1", "What colour is the crest?", extra={"answer": ["red", "crimson"]}),
             EvalItem("me-1-e1", "Compare A and B", kind="entity_1", extra={"row": "me-1", "answer": ["red", "blue"]}),
             EvalItem("me-1-e2", "Compare A and B", kind="entity_2", extra={"row": "me-1", "answer": ["red", "blue"]}),
             EvalItem("inq-1", "a bird", extra={})]
    units = answer_units(items)
    assert [(u.uid, u.qids, u.all_needed) for u in units] == [("vr-1", ["vr-1"], False),
                                                              ("me-1", ["me-1-e1", "me-1-e2"], True)]
    assert keyword_score("What colour is the crest?", ["red", "crimson"], "It is crimson [2].")[0] == 1.0
    assert keyword_score("Compare A and B", ["red", "blue"], "A is red [1].", all_needed=True)[0] == 0.5
    notes: list[str] = []
    score, _, source = judge_answer(FakeLLM(is_standin=True), "q?", ["red"], "it is red", notes)
    assert (score, source) == (1.0, "rule") and not notes  # the offline rule LLM: the stand-in judge, silently
    llm = FakeLLM({"Answer to grade": json.dumps({"score": 0.5, "reason": "one of two features"})})
    assert judge_answer(llm, "q?", ["red and white"], "red", notes)[:3] == (0.5, "one of two features", "llm")
    bad = FakeLLM({"Answer to grade": "no idea"})
    assert judge_answer(bad, "q?", ["red"], "red", notes)[2] == "rule" and any("unusable" in n for n in notes)


QUERY = "a red frog and a blue beetle and a snake"


def test_coverage_gives_each_pareto_photo_with_its_parts_to_the_generator(tmp_path):
    gen = ComposingGenerator()
    search = corpus(tmp_path, generator=gen)
    res = SearchEngine(search, search.backends).search(SearchRequest(QUERY, coverage=True, reference=True))
    cov = res.stages["coverage"]
    ref = cov["reference"]
    assert ref["generated"] is True and "GENERATED" in ref["label"] and ref["mode"] == "composed from the Pareto photos"
    prompt, refs = gen.references[0]
    pareto = cov["photos"][:4]
    assert [r.photo_id for r in refs] == [p["id"] for p in pareto]
    for r, p in zip(refs, pareto):
        parts = [cov["subqueries"][j]["text"] for j in p["satisfies"]]
        assert isinstance(r, ReferenceImage) and r.image.size == (8, 8)
        assert r.instruction == "use only " + "; ".join(parts) + " from this picture"
    assert QUERY in prompt and ref["references"] == [{"id": r.photo_id, "instruction": r.instruction} for r in refs]
    assert not gen.calls  # nothing was drawn from text alone


def test_a_text_only_generator_gets_the_instructions_as_text_with_a_notice(tmp_path):
    gen = FakeGenerator()
    search = corpus(tmp_path, generator=gen)
    res = SearchEngine(search, search.backends).search(SearchRequest(QUERY, coverage=True, reference=True))
    ref = res.stages["coverage"]["reference"]
    assert ref["mode"] == "drawn from text instructions" and "from reference photo" in gen.calls[0][0]
    assert any("cannot take reference pictures" in n for n in res.notices)


def test_standin_composes_from_the_references():
    refs = [ReferenceImage(Image.new("RGB", (10, 10), (255, 0, 0)), "use only a red frog", 1),
            ReferenceImage(Image.new("RGB", (10, 10), (0, 0, 255)), "use only a blue beetle", 2)]
    out = StandinGenerator().generate_from_references("a red frog and a blue beetle", refs, seed=0, size=64)
    left, right = out.image.getpixel((10, 32)), out.image.getpixel((54, 32))
    assert left[0] > 150 and left[2] < 100 and right[2] > 150 and right[0] < 100  # each reference in its cell
    assert "Reference picture 2: use only a blue beetle" in out.prompt and "beetle" in out.ignored_words


def test_fieldguide_painter_composes_from_the_references():
    from fieldguide.painter import FieldGuideGenerator

    refs = [ReferenceImage(Image.new("RGB", (10, 10), (0, 0, 255)), "use only a bird with a red crest", 1)]
    out = FieldGuideGenerator().generate_from_references("a bird", refs, seed=0, size=224)
    assert out.image.getpixel((5, 220)) == (0, 0, 255) and "red crest" in out.prompt


def test_openai_generator_sends_the_references_to_the_edit_endpoint():
    import base64
    import io

    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (1, 2, 3)).save(buf, format="PNG")
    sent = {}

    def edit(**kwargs):
        sent.update(kwargs)
        return NS(data=[NS(b64_json=base64.b64encode(buf.getvalue()).decode())])

    client = NS(images=NS(edit=edit), base_url="fake://images")
    refs = [ReferenceImage(Image.new("RGB", (4, 4)), "use only a red frog", 7),
            ReferenceImage(Image.new("RGB", (4, 4)), "use only a blue beetle", 8)]
    out = OpenAIGenerator(client, "gpt-image-1").generate_from_references("a frog and a beetle", refs, seed=0,
                                                                         size=32)
    assert out.image.size == (32, 32) and [f[0] for f in sent["image"]] == ["reference-1.png", "reference-2.png"]
    assert sent["prompt"].endswith("Reference picture 2: use only a blue beetle") and sent["model"] == "gpt-image-1"
    with pytest.raises(BackendError, match="one picture"):
        OpenAIGenerator(client, "dall-e-2").generate_from_references("x", refs, seed=0)


def test_diffusers_composes_image_to_image_from_a_collage():
    torch = pytest.importorskip("torch")
    from core.backends.diffusers_generator import DiffusersGenerator

    class FakePipe:
        def __init__(self):
            self.kwargs = {}

        def to(self, device):
            return self

        def __call__(self, **kwargs):
            self.kwargs = kwargs
            return NS(images=[kwargs["image"]])

    gen = DiffusersGenerator("fake/model", pipeline=FakePipe())
    gen._img2img = FakePipe()
    refs = [ReferenceImage(Image.new("RGB", (4, 4), (255, 0, 0)), "use only a red frog", 1)]
    out = gen.generate_from_references("a red frog", refs, seed=3, size=30)
    kw = gen._img2img.kwargs
    side = gen.draw_side(30)  # the model's native size (a multiple of 8), as for text-to-image
    assert kw["image"].size == (side, side) and side % 8 == 0 and kw["image"].getpixel((5, 5)) == (255, 0, 0)
    assert 0 < kw["strength"] < 1 and "Reference picture 1: use only a red frog" in kw["prompt"]
    assert out.image.size == (30, 30) and isinstance(kw["generator"], torch.Generator)
