"""Answers stay with the evidence (issue 20 item 6): an answer names only organisms that its cited photos'
catalog fields, or the checker's yes answers in the same search, support; a stand-in reader is not asked
about photos outside its world; a refused answer says that no answer can be written, and why."""
from __future__ import annotations

import numpy as np

from core.config import Settings
from core.contracts.records import Photo
from core.contracts.search_request import SearchRequest
from core.contracts.world import RuleBooks
from core.methods.evidence import named_organisms, outside_world, unsupported
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge, FakeSearch
from tests.photos import world_books

DIM = 8
ZEBRA = dict(scientific_name="Equus quagga", common_name="Plains zebra", genus="Equus", family="Equidae")
MOTH = "Scarlet-underwing Veilmoth"  # a species of the demo world (registered by tests/conftest.py)


class TextReader:
    """A photo reader that answers `text` with the first photo's id filled in; records its calls."""

    model_id = "fake-reader"

    def __init__(self, text: str, standin: bool = False):
        self.text, self.is_standin, self.calls = text, standin, []

    def read(self, question, photos):
        self.calls.append([pid for pid, _ in photos])
        return self.text.format(first=photos[0][0])


def search_over(tmp_path, photos, reader=None, judge=None):
    n = len(photos)
    vecs = (np.eye(DIM)[[i % DIM for i in range(n)]] + 0.01).astype(np.float32)
    b = FakeBackends(embedder=FakeEmbedder(DIM), **({"judge": judge} if judge else {}))
    b.reader = reader
    search = FakeSearch(photos, vecs, Settings(data_dir=str(tmp_path), k=n, rerank_k=n), backends=b)
    return SearchEngine(search, search.backends)


def zebras(n=4):
    return [Photo(path=f"z{i}.png", id=i + 1, **ZEBRA) for i in range(n)]


def test_names_are_found_from_the_world_and_the_catalog():
    found = {n.key for n in named_organisms(f"The photos show: {MOTH} [1]; a Plains zebra [2].", ["Plains zebra"])}
    assert found == {"veilumbra cinnabarina", "plains zebra"}
    assert named_organisms("The stripes are black and white [1].", ["Plains zebra", "Equus quagga"]) == []


def test_a_name_needs_a_cited_photo_catalogued_as_it():
    photos = zebras(2)
    names = ["Equus quagga", "Plains zebra", "Equus", "Equidae"]
    assert unsupported(f"The photos show: {MOTH} [1].", "What is this?", photos, names) == ["Veilumbra cinnabarina"]
    assert unsupported("A Plains zebra [1] of the genus Equus [2].", "What is this?", photos, names) == []
    # the question's own organism may be named in a sentence that cites no photo ("none shows it") ...
    assert unsupported(f"None of the photos shows the {MOTH}.", f"Is the {MOTH} red?", photos, names) == []
    # ... but not claimed of a photo
    assert unsupported(f"The {MOTH} is red [1].", f"Is the {MOTH} red?", photos, names) == ["Veilumbra cinnabarina"]


def test_a_checked_yes_supports_a_name_for_a_photo_without_a_species():
    bare = [Photo(path="b.png", id=7)]
    text = f"The {MOTH} is resting [7]."
    assert unsupported(text, "q", bare, []) == ["Veilumbra cinnabarina"]
    assert unsupported(text, "q", bare, [], {7: [f"Is there a {MOTH} in the photo?"]}) == []
    assert unsupported(text, "q", bare, [], {7: ["Is it on sand?"]}) == ["Veilumbra cinnabarina"]


def test_an_invented_organism_is_refused_with_why_and_a_notice(tmp_path):
    reader = TextReader(f"The photos show: {MOTH} [{{first}}]. They were not read for anything more specific.")
    engine = search_over(tmp_path, zebras(), reader)
    out = engine.answer("What animal is this?", [1, 2, 3])
    assert reader.calls == [[1, 2, 3]]  # a real (not stand-in) reader is asked ...
    assert out["text"].startswith("No answer can be written from these photos")  # ... and its answer refused
    assert "Veilumbra cinnabarina" in out["refused"] and "Equus quagga" in out["refused"]
    assert MOTH not in out["text"] and out["cited_ids"] == [] and out["verified"] is False
    assert out["refused_text"].startswith("The photos show")
    assert any(n.startswith("answer: not shown") and "fake-reader" in n for n in out["notices"])


def test_a_supported_answer_is_kept(tmp_path):
    engine = search_over(tmp_path, zebras(), TextReader("A Plains zebra grazing [{first}]."))
    out = engine.answer("What animal is this?", [2, 3])
    assert out["text"] == "A Plains zebra grazing [2]." and out["verified"] and "refused" not in out


def test_a_stand_in_reader_is_not_asked_outside_its_world(tmp_path):
    """With no world in use (a collection of your own), the stand-in reader is never called: the notes answer,
    and a notice says why."""
    reader = TextReader(f"The photos show: {MOTH} [{{first}}].", standin=True)
    out = search_over(tmp_path, zebras(), reader).answer("What colour are the stripes?", [1, 2])
    assert reader.calls == [] and out["source"] == "captions" and MOTH not in out["text"]
    assert out["text"].startswith("No answer can be written")  # the offline rule says why it writes none
    assert any("stand-in made for the demo world" in n and "Equus quagga" in n for n in out["notices"])


def test_inside_its_world_only_photos_of_unknown_species_are_outside():
    moth = Photo(path="m.png", id=1, scientific_name="Veilumbra cinnabarina")
    zebra = Photo(path="z.png", id=2, **ZEBRA)
    assert outside_world([moth, zebra], world_books()) == [zebra]
    assert outside_world([moth], RuleBooks()) == [moth]  # no world in use: no photo is a world's


def test_the_search_passes_the_checkers_yes_answers_as_evidence(tmp_path):
    """A photo with no species recorded, which the checker said shows the moth: the answer may name it."""
    photos = [Photo(path=f"b{i}.png", id=i + 1) for i in range(3)]
    judge = FakeJudge(lambda r: 0.95)
    engine = search_over(tmp_path, photos, TextReader(f"The {MOTH} rests [{{first}}]."), judge)
    res = engine.search(SearchRequest(f"a {MOTH}", rerank="subq", answer=True))
    ans = res.stages["answer"]
    assert "refused" not in ans and MOTH in ans["text"]
    no = search_over(tmp_path / "no", photos, TextReader(f"The {MOTH} rests [{{first}}]."), FakeJudge(lambda r: 0.05))
    refused = no.search(SearchRequest(f"a {MOTH}", rerank="subq", answer=True)).stages["answer"]
    assert refused["text"].startswith("No answer can be written")


def test_unsupported_claims_are_left_out_and_the_rest_kept(tmp_path):
    """A listing with one wrong name: that claim goes, the supported ones stay with their citations."""
    photos = zebras(2) + [Photo(path="m.png", id=3, scientific_name="Veilumbra cinnabarina",
                                common_name=MOTH)]
    reader = TextReader(f"The photos show: Plains zebra [1]; Slate Reedpiper [2]; {MOTH} [3]. Nothing more was read.")
    out = search_over(tmp_path, photos, reader).answer("What animals are these?", [1, 2, 3])
    assert out["text"] == f"The photos show: Plains zebra [1]; {MOTH} [3]. Nothing more was read."
    assert out["cited_ids"] == [1, 3] and out["left_out"] == ["Reedipipa ardesiaca"]
    assert "Slate Reedpiper" in out["original_text"]
    assert any(n.startswith("answer: left out what it said of Reedipipa ardesiaca") for n in out["notices"])
    # a world species named by its common name in the catalog is one organism, not two
    assert [n.key for n in named_organisms(f"a {MOTH}", [MOTH])] == ["veilumbra cinnabarina"]
