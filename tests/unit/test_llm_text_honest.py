"""Issue 20, items 4 and 5: model-written text is checked, cut or refused (one notice naming the model and what
was refused, plus a log line) and labelled when used; the model's facts follow its size (what the server or the
GGUF file reports), not its file name alone."""
from __future__ import annotations

import json
import logging
import struct
from pathlib import Path

import pytest

from core.backends import served_model
from core.backends.gguf_header import GGUFError, read_header
from core.backends.model_facts import llm_facts
from core.backends.openai_llm import OpenAILLM
from core.methods import llm_checks, llm_schemas, llm_tasks, rules
from core.methods.cache import CachedLLM
from core.methods.disk_cache import DiskCache
from tests.fakes import FakeLLM
from tests.photos import world_book

PIPIT = "what colour is the underside of a tawny pipit's wings?"
COWBIRD = "a nest showing brood parasitism by a cowbird"
FROG = "a frog calling at night"


class NamedLLM(FakeLLM):
    """A fake LLM with a display name (what OpenAILLM and LlamaCppLLM give notices), and optional own_words."""

    def __init__(self, *args, own_words: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.display_name = "tiny.gguf (134.5M parameters)"
        self.own_words = own_words
        self.schemas: list = []

    def chat(self, messages, *, json_schema=None, **kwargs):
        self.schemas.append(json_schema)
        return super().chat(messages, json_schema=json_schema, **kwargs)


def _instruction_llm(*descriptions: str, kind: str = "feature") -> NamedLLM:
    return NamedLLM({"ecologist's request": json.dumps({"kind": kind, "descriptions": list(descriptions)})})


def _one_refusal(notices: list[str], task: str) -> str:
    refusals = [n for n in notices if n.startswith(task + ": refused")]
    assert len(refusals) == 1, notices
    assert "tiny.gguf (134.5M parameters)" in refusals[0]
    return refusals[0]


# ---- VisRet instruction ---------------------------------------------------------------------------------------
def test_an_instruction_that_states_the_answer_is_refused_with_one_notice_and_a_log_line(caplog):
    notices: list[str] = []
    llm = _instruction_llm("the underside of the tawny pipit's wings is a bright pink colour.")
    with caplog.at_level(logging.WARNING, logger="core.methods.llm_call"):
        instr = llm_tasks.visual_instruction(llm, PIPIT, notices)
    assert instr.source == "rule" and "pink" not in instr.descriptions[0]
    note = _one_refusal(notices, "visualization instruction")
    assert "pink" in note and "states an answer" in note and "the offline rule wrote it instead" in note
    assert any("refused the answer of LLM" in r.getMessage() for r in caplog.records)


def test_an_instruction_that_describes_what_to_draw_is_used_and_labelled():
    notices: list[str] = []
    llm = _instruction_llm("a tawny pipit with its wings raised, the underside of the wings in view")
    instr = llm_tasks.visual_instruction(llm, PIPIT, notices)
    assert instr.source == "llm"
    assert notices == ['visualization instruction: written by tiny.gguf (134.5M parameters): "a tawny pipit with '
                       'its wings raised, the underside of the wings in view"']


@pytest.mark.parametrize("description", ["nest", "a nest", "a cowbird", "a nest of a songbird in a shrub"])
def test_a_rewrite_that_drops_the_subject_or_its_qualifiers_is_refused_and_the_rule_writes_it(description):
    notices: list[str] = []
    instr = llm_tasks.visual_instruction(_instruction_llm(description, kind="scene"), COWBIRD, notices)
    assert instr.source == "rule" and "cowbird" in instr.descriptions[0] and "brood parasitism" in instr.descriptions[0]
    assert any(why in _one_refusal(notices, "visualization instruction")
               for why in ("drops what the request names", "does not name the request's subject"))


def test_a_rewrite_that_keeps_the_subject_and_its_qualifiers_is_used():
    good = "a songbird's nest with a large cowbird egg among the host's eggs: brood parasitism"
    instr = llm_tasks.visual_instruction(_instruction_llm(good, kind="scene"), COWBIRD, [])
    assert instr.source == "llm" and instr.descriptions == [good]


def test_a_question_is_not_a_description():
    with pytest.raises(llm_checks.Unusable, match="is a question"):
        llm_checks.check_description(FROG, "scene", "Is the frog calling at night?")


def test_the_rules_own_instructions_pass_the_checks_they_are_held_to():
    for query in (PIPIT, COWBIRD, FROG, "a heron eating a fish", "Does the red-spotted newt have orange spots?"):
        notices: list[str] = []
        instr = llm_tasks.visual_instruction(FakeLLM(is_standin=True), query, notices)
        assert instr.source == "rule" and notices == [], (query, notices)


# ---- sub-questions ----------------------------------------------------------------------------------------------
def test_a_subquestion_about_another_organism_is_refused_and_named():
    notices: list[str] = []
    llm = NamedLLM({"yes/no questions": json.dumps({"questions": [
        "Is there a frog in the photo?", "Does the crocodile have a mouth full of fish?", "Is the frog calling?",
        "Is it night?"]})})
    qs = llm_tasks.subquestions(llm, FROG, "", 3, notices)
    assert not any("crocodile" in q for q in qs) and qs[:2] == ["Is there a frog in the photo?", "Is the frog calling?"]
    labels = [n for n in notices if n.startswith("sub-questions:")]
    assert len(labels) == 1 and "written by tiny.gguf (134.5M parameters)" in labels[0]
    assert '"Does the crocodile have a mouth full of fish?": names an organism the request does not (crocodile, fish)' \
        in labels[0]


def test_usable_subquestions_refuses_a_first_question_about_another_organism():
    with pytest.raises(llm_checks.Unusable, match="crocodile"):
        llm_checks.usable_subquestions(FROG, "", ["Is there a crocodile frog?", "Is the frog calling?"])
    dropped: list[str] = []
    kept = llm_checks.usable_subquestions(FROG, "", ["Is there a frog?", "Is a heron calling?", "Is it night?"],
                                          dropped)
    assert kept == ["Is there a frog?", "Is it night?"] and dropped == [
        '"Is a heron calling?": names an organism the request does not (heron)']


def test_group_words_and_young_of_the_requests_organism_are_not_other_organisms():
    assert llm_checks.foreign_organisms("a tawny pipit", "The pipit is a small bird; its chicks hide.") == []
    assert llm_checks.foreign_organisms(FROG, "A tadpole becomes a frog, an amphibian.") == []
    assert llm_checks.foreign_organisms(FROG, "Birds and a bullfrog.") == ["bird", "bullfrog"]
    assert llm_checks.foreign_organisms("a wallcreeper on a cliff", "The wallcreeper is a bird.") == []


# ---- expert context ---------------------------------------------------------------------------------------------
SMOL_CONTEXT = ("Frogs call at night to attract mates. The crocodile eats frogs.\n\n"
                "Frogs call at night to attract mates. The crocodile eats frogs.\n\n"
                "Frogs call at night to attract mates. The male frog inflates its")


def test_expert_context_is_cut_to_what_passes_and_labelled_in_one_notice():
    notices: list[str] = []
    text = llm_tasks.expert_context(NamedLLM(default=SMOL_CONTEXT), FROG, notices)
    assert text == "Frogs call at night to attract mates."
    assert len(notices) == 1
    note = notices[0]
    assert note.startswith("expert context: written by tiny.gguf (134.5M parameters), not checked against a source")
    assert "1 repeated paragraph" in note and "cut off mid-way" in note and "crocodile" in note


def test_a_sentence_said_again_inside_a_longer_one_is_a_repeat():
    first = "Tawny pipits live in dry country and can be found on every continent except Antarctica."
    text, cuts = llm_checks.clean_context("a tawny pipit", first + " They can be found on every continent except "
                                          "Antarctica. Pipits walk.")
    assert text == first + " Pipits walk." and cuts == ["1 repeated sentence"]


def test_expert_context_with_nothing_that_passes_is_refused_and_the_rule_writes_it():
    notices: list[str] = []
    text = llm_tasks.expert_context(NamedLLM(default="The crocodile is a large reptile. It eats fish."), FROG,
                                    notices)
    assert text == rules.context(FROG)
    assert "nothing in it passed the checks" in _one_refusal(notices, "expert context")


def test_clean_expert_context_is_used_whole_and_labelled():
    notices: list[str] = []
    good = "The tawny pipit is a slim bird of dry open country. Its underparts are pale buff."
    assert llm_tasks.expert_context(NamedLLM(default=good), "a tawny pipit", notices) == good
    assert notices == ["expert context: written by tiny.gguf (134.5M parameters), not checked against a source"]


def test_in_the_field_guide_world_a_look_alike_named_by_the_model_is_another_organism():
    book = world_book()
    query = "Ember-crested Tuftling feeding on a berry"
    text, cuts = llm_checks.clean_context(query, "The Ember-crested Tuftling has a red crest. It looks like the "
                                                 "Gold-crested Tuftling. The bird feeds on berries.", book)
    assert text == "The Ember-crested Tuftling has a red crest. The bird feeds on berries." and len(cuts) == 1
    assert llm_checks.foreign_organisms("Cobalt Pondhopper on sand", "The frog sits on sand.", book) == []
    # the rule's own notes (which name the look-alike from the field guide) are used as they are
    notices: list[str] = []
    assert "Gold-crested" in llm_tasks.expert_context(FakeLLM(is_standin=True), query, notices, book=book)
    assert not notices


# ---- the cached backend carries the model's traits ----------------------------------------------------------
def test_own_words_grammar_is_sent_through_the_cache(tmp_path: Path):
    raw = NamedLLM({"yes/no questions": json.dumps({"questions": ["Is there a frog?", "Is the frog calling?"]})},
                   own_words=True)
    cached = CachedLLM(raw, DiskCache(tmp_path))
    notices: list[str] = []
    llm_tasks.subquestions(cached, FROG, "", 2, notices)
    pattern = raw.schemas[-1]["properties"]["questions"]["items"]["pattern"]
    assert pattern == llm_schemas.yes_no_pattern(llm_checks.request_vocabulary(FROG))
    assert any("written by tiny.gguf (134.5M parameters)" in n for n in notices)


# ---- model size: server metadata, GGUF header, facts -----------------------------------------------------------
def _write_gguf(path: Path, shapes: list[tuple[int, ...]], name: str = "tiny test") -> Path:
    def string(s: str) -> bytes:
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    out = b"GGUF" + struct.pack("<IQQ", 3, len(shapes), 3)
    out += string("general.name") + struct.pack("<I", 8) + string(name)
    out += string("general.size_label") + struct.pack("<I", 8) + string("1k")
    out += string("tokenizer.scores") + struct.pack("<IIQ", 9, 6, 40) + struct.pack("<40f", *range(40))
    for i, shape in enumerate(shapes):
        out += string(f"t{i}") + struct.pack("<I", len(shape)) + struct.pack(f"<{len(shape)}Q", *shape)
        out += struct.pack("<IQ", 0, 0)
    path.write_bytes(out)
    return path


def test_gguf_header_gives_the_parameter_count_and_metadata(tmp_path: Path):
    head = read_header(_write_gguf(tmp_path / "model.gguf", [(10, 20), (7,), (2, 3, 4)]))
    assert head.n_params == 200 + 7 + 24 and head.n_tensors == 3
    assert head.name == "tiny test" and head.size_label == "1k" and head.metadata["tokenizer.scores"] == "<array of 40>"
    (tmp_path / "bad.gguf").write_bytes(b"GGML" + b"\0" * 20)
    with pytest.raises(GGUFError):
        read_header(tmp_path / "bad.gguf")


def test_llm_facts_follow_the_parameter_count_not_the_name():
    assert not llm_facts("model.gguf").own_words and llm_facts("model.gguf").note == ""
    tiny = llm_facts("model.gguf", 134_515_008)
    assert tiny.own_words and "model.gguf is a very small model (134.5M parameters)" in tiny.note
    assert "134.5M parameters" in tiny.matched
    large = llm_facts("SmolLM2-135M-renamed-but-7B", 7_000_000_000)
    assert not large.own_words and large.note == ""


class _Models:
    def __init__(self, entries=None, error: Exception | None = None):
        self.entries, self.error, self.timeouts = entries or [], error, []

    def list(self):
        if self.error is not None:
            raise self.error
        return type("Page", (), {"data": self.entries})()


class FakeClient:
    """What served_model needs of an openai client: with_options(timeout, max_retries).models.list()."""

    base_url = "http://127.0.0.1:9/v1"

    def __init__(self, entries=None, error=None):
        self.models = _Models(entries, error)
        self.options: list[dict] = []

    def with_options(self, **kwargs):
        self.options.append(kwargs)
        return self


def test_an_empty_model_name_asks_the_server_and_uses_its_reported_size():
    client = FakeClient([{"id": "model.gguf", "meta": {"n_params": 134_515_008}}])
    served = served_model.resolve(client, "", "http://127.0.0.1:9/v1", timeout_s=2.0)
    assert (served.name, served.n_params, served.source, served.size_from) == (
        "model.gguf", 134_515_008, "server", "server metadata")
    assert client.options == [{"timeout": 2.0, "max_retries": 0}]  # one short request, no retries
    llm = OpenAILLM(client, served.name, served)
    assert llm.own_words and "very small model" in llm.notice and llm.model == "model.gguf"
    assert llm.display_name == "model.gguf (134.5M parameters)"


def test_a_local_servers_gguf_path_is_read_for_its_size(tmp_path: Path):
    path = _write_gguf(tmp_path / "model.gguf", [(1000, 1000)])
    client = FakeClient([{"id": str(path)}])
    served = served_model.resolve(client, "", "http://localhost:8080/v1")
    assert served.n_params == 1_000_000 and served.size_from == "GGUF header of model.gguf"
    assert served.label == "model.gguf (1M parameters)"
    remote = served_model.resolve(client, "", "http://models.example.org/v1")  # its path is not a file of ours
    assert remote.n_params is None and remote.name == str(path)


def test_a_named_model_on_a_server_still_gets_its_size_from_the_server():
    client = FakeClient([{"id": "/models/model.gguf", "meta": {"n_params": 360_000_000}}])
    served = served_model.resolve(client, "my-model", "http://127.0.0.1:9/v1")
    assert served.name == "my-model" and served.n_params == 360_000_000 and served.source == "setting"
    assert llm_facts(served.short_name, served.n_params).own_words


def test_a_server_that_cannot_be_asked_gives_a_notice_and_name_based_facts(caplog):
    client = FakeClient(error=TimeoutError("timed out"))
    with caplog.at_level(logging.WARNING, logger="core.backends.served_model"):
        served = served_model.resolve(client, "SmolLM2-135M-Instruct", "http://127.0.0.1:9/v1")
    assert served.name == "SmolLM2-135M-Instruct" and served.n_params is None
    assert "could not ask http://127.0.0.1:9/v1 which model it serves (timed out)" in served.notice
    assert any("could not ask" in r.getMessage() for r in caplog.records)
    llm = OpenAILLM(client, served.name, served)
    assert llm.own_words and "very small model" in llm.notice and "could not ask" in llm.notice


def test_no_base_url_and_no_name_is_the_hosted_default_without_asking():
    client = FakeClient(error=AssertionError("must not be asked"))
    served = served_model.resolve(client, "", "")
    assert served.name == served_model.HOSTED_DEFAULT_MODEL == "gpt-4.1-mini" and served.source == "hosted default"
    assert served_model.resolve(client, "gpt-4o", "").name == "gpt-4o"


def test_asking_a_server_that_never_answers_is_bounded_by_the_short_timeout():
    import socket
    import time

    from core.backends.openai_llm import OpenAILLM
    from core.config import Settings

    with socket.socket() as listener:  # accepts connections and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        settings = Settings(llm="openai", openai_base_url=url, backend_timeout_s=1.0, backend_retries=2)
        start = time.monotonic()
        llm = OpenAILLM.from_settings(settings)
        took = time.monotonic() - start
    assert took < 5.0, took  # one request within min(5 s, backend_timeout_s), no retries
    assert "could not ask" in llm.notice and llm.model == "" and not llm.own_words


def test_parts_written_by_a_model_are_labelled_in_one_notice():
    notices: list[str] = []
    llm = NamedLLM({"smallest independent parts": json.dumps({"parts": [
        {"text": "red flower", "core": "flower"}, {"text": "bee"}, {"text": "a cat"}]})})
    llm_tasks.decompose(llm, "a bee on a red flower", notices)
    assert notices == ["query decomposition: written by tiny.gguf (134.5M parameters); left out parts that are not "
                       "in the request: a cat"]


def test_doctor_says_what_the_llm_facts_matched_on():
    from core import doctor

    class Probed(NamedLLM):
        facts = llm_facts("model.gguf", 134_515_008)

    llm = Probed({"yes/no questions": json.dumps({"questions": ["Is there a heron?", "Is the heron eating?"]})})
    line = doctor.probe_llm(llm)
    assert "facts matched on 134.5M parameters (under 1B) (tiny: notice and the request's-own-words grammar)" in line
