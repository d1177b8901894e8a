"""The in-process transformers judge and captioner on tiny random-weight SmolVLM models built here (one layer
of width 32, a word-level tokenizer, SmolVLM's processors), saved to folders and loaded by path through the
registry: first-token p(yes) against the model's own logits computed by hand, batching, concurrent calls,
photos prepared once, abstention, captions, failures to load."""
from __future__ import annotations

import math
import threading
import time

import pytest
from PIL import Image

pytest.importorskip("transformers")
pytest.importorskip("num2words")

from core.backends import transformers_vlm as tv
from core.backends import vlm_loading
from core.backends.base import JudgeRequest
from core.backends.registry import Backends, list_backends
from core.config import Settings
from core.contracts.errors import BackendError
from core.methods.confidence import p_yes as confidence_of
from core.prompts import judge as prompts
from tests.tiny_vlm import NO_SPELLINGS, YES_SPELLINGS, build_tiny_smolvlm, sample_photos

QUESTIONS = ("Is there a bird in this photo?", "Is the frog green?")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-vlm")
    return {"yes_no": build_tiny_smolvlm(root / "yes-no", yes_no=True),
            "random": build_tiny_smolvlm(root / "random", seed=1),
            "elsewhere": build_tiny_smolvlm(root / "elsewhere", rows=("maybe", "perhaps", "unsure"))}


@pytest.fixture(autouse=True)
def fresh_models():
    vlm_loading.forget_models()
    yield
    vlm_loading.forget_models()


def _settings(folder, **kw) -> Settings:
    return Settings(judge=f"transformers:{folder}", captioner=f"transformers:{folder}", device="cpu", **kw)


def _photos(n: int = 6) -> list[Image.Image]:
    return sample_photos(n)


def test_registry_names_the_backend():
    assert "transformers:" in list_backends()["judge"]
    assert "transformers:" in list_backends()["captioner"]


def test_every_spelling_of_yes_and_no_is_found(folders):
    judge = Backends(_settings(folders["yes_no"])).judge
    tok = judge.vlm.tokenizer
    yes, no = judge.vlm.answer_ids
    assert sorted(yes) == sorted(tok.convert_tokens_to_ids(YES_SPELLINGS))
    assert sorted(no) == sorted(tok.convert_tokens_to_ids(NO_SPELLINGS))
    assert judge.vlm.facts.matched == "smolvlm"  # a folder is matched by its config's model_type


def _by_hand(judge, image: Image.Image, request: JudgeRequest) -> tuple[float, float]:
    """p(yes), p(no) from the model's own logits: the processor's full call on the chat, one forward pass,
    softmax at the last position, summed over the yes and no spellings of the vocabulary."""
    import torch

    vlm = judge.vlm
    messages = [{"role": "system", "content": [{"type": "text", "text": prompts.SYSTEM}]},
                {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": prompts.user_text(request)}]}]
    text = vlm.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text.endswith("Assistant:")
    inputs = vlm.processor(text=[text], images=[[image]], return_tensors="pt", do_image_splitting=False)
    with torch.no_grad():
        logits = vlm.model(**inputs).logits[0, -1].double()
    probs = torch.softmax(logits, dim=-1)
    tok = vlm.tokenizer
    return (float(probs[tok.convert_tokens_to_ids(YES_SPELLINGS)].sum()),
            float(probs[tok.convert_tokens_to_ids(NO_SPELLINGS)].sum()))


def test_first_token_p_yes_equals_the_hand_computation(folders):
    judge = Backends(_settings(folders["yes_no"])).judge
    answered = set()
    for image in _photos(6):
        for q in QUESTIONS:
            request = JudgeRequest(image=image, question=q, query="a green frog")
            yes, no = _by_hand(judge, image, request)
            assert yes + no > 0.5  # the test's output layer puts most of the mass on the answer words
            reading = judge.reading(request)
            assert reading.p_yes == pytest.approx(yes, abs=1e-5)
            assert reading.p_no == pytest.approx(no, abs=1e-5)
            assert reading.p_other == pytest.approx(1 - yes - no, abs=1e-5)
            answer = judge.ask(request)
            assert not answer.abstained
            assert answer.answer == ("yes" if yes > no else "no")
            assert confidence_of(answer.top_logprobs) == pytest.approx(yes / (yes + no), abs=1e-5)
            answered.add(answer.answer)
    assert answered == {"yes", "no"}  # the answer follows the photo and the question


def test_batches_give_the_answers_of_one_by_one(folders):
    judge = Backends(_settings(folders["yes_no"])).judge
    requests = [JudgeRequest(image=im, question=q, query="birds") for im in _photos(6) for q in QUESTIONS]
    alone = [judge.ask_many([r])[0] for r in requests]
    batched = judge.ask_many(requests)
    assert judge.vlm.batch_size == 4  # SmolVLM's CPU batch (model facts): 12 requests in batches of 4
    for a, b in zip(alone, batched):
        assert a.answer == b.answer
        assert confidence_of(a.top_logprobs) == pytest.approx(confidence_of(b.top_logprobs), abs=1e-4)
        assert a.abstained == b.abstained


def test_concurrent_calls_share_forward_passes(folders, monkeypatch):
    judge = Backends(_settings(folders["yes_no"])).judge
    photos = _photos(6)
    requests = [JudgeRequest(image=im, question=QUESTIONS[0]) for im in photos]
    expected = [judge.ask_many([r])[0] for r in requests]
    sizes: list[int] = []
    forward = judge.vlm.forward_last

    def slow_forward(batch):
        sizes.append(int(batch["input_ids"].shape[0]))
        time.sleep(0.3 if len(sizes) == 1 else 0.0)  # calls arriving meanwhile wait for the next pass
        return forward(batch)

    monkeypatch.setattr(judge.vlm, "forward_last", slow_forward)
    got: list = [None] * len(requests)
    start = threading.Barrier(len(requests))

    def worker(i: int) -> None:
        start.wait()
        got[i] = judge.ask(requests[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sum(sizes) == len(requests) and max(sizes) > 1 and len(sizes) < len(requests)
    assert max(sizes) <= judge.vlm.batch_size
    for a, b in zip(expected, got):
        assert a.answer == b.answer
        assert confidence_of(a.top_logprobs) == pytest.approx(confidence_of(b.top_logprobs), abs=1e-4)


def test_each_photo_is_prepared_once_for_all_its_questions(folders):
    judge = Backends(_settings(folders["yes_no"])).judge
    photos = _photos(3)
    before = judge.vlm.preparations
    judge.ask_many([JudgeRequest(image=im, question=q) for im in photos for q in QUESTIONS])
    for q in ("Is it in water?", "Is there a tree?"):  # later questions (a chained reranker) reuse them too
        for im in photos:
            judge.ask(JudgeRequest(image=im, question=q, history=((QUESTIONS[0], "yes"),)))
    assert judge.vlm.preparations - before == len(photos)


def test_mass_on_neither_word_is_an_abstention(folders):
    for name in ("elsewhere", "random"):
        judge = Backends(_settings(folders[name])).judge
        answer = judge.ask(JudgeRequest(image=_photos(1)[0], question=QUESTIONS[0]))
        reading = judge.reading(JudgeRequest(image=_photos(1)[0], question=QUESTIONS[0]))
        assert reading.answered < judge.min_answer_mass
        assert answer.abstained and answer.reason.startswith("not checked")
        assert math.exp(answer.top_logprobs["<other>"]) == pytest.approx(reading.p_other, abs=1e-6)


def test_the_threshold_is_a_model_fact():
    from core.backends.model_facts import model_facts

    assert model_facts("vlm", "HuggingFaceTB/SmolVLM-256M-Instruct").min_answer_mass == 0.5
    assert model_facts("vlm", "HuggingFaceTB/SmolVLM2-2.2B-Instruct").image_splitting is False
    assert model_facts("vlm", "Qwen/Qwen2.5-VL-3B-Instruct").batch_cpu == 1
    assert model_facts("vlm", "google/paligemma2-3b-mix-448").prompt_layout == "plain"
    assert model_facts("vlm", "someone/some-vlm").matched == "default"


def test_captioner_returns_text_and_shares_the_judges_model(folders):
    backends = Backends(_settings(folders["yes_no"]))
    captioner = backends.captioner
    assert captioner.vlm is backends.judge.vlm  # one model in the process for both
    captioner.max_tokens = 6  # a random model's sentence is words at random: a few are enough
    photos = _photos(3)
    one = [captioner.caption(im) for im in photos]
    assert all(isinstance(t, str) for t in one)
    assert captioner.caption_many(photos) == one
    assert captioner.model_id.startswith("transformers-captioner:")


def test_captioner_writes_the_words_the_model_prefers(folders):
    """A copy of the tiny model whose output layer has a bias for 'bird': greedy captions say it."""
    import torch

    vlm = vlm_loading.load_model(str(folders["random"]), _settings(folders["random"]), "captioner")
    head = vlm.model.get_output_embeddings()
    biased = torch.nn.Linear(head.in_features, head.out_features, bias=True)
    with torch.no_grad():
        biased.weight.copy_(head.weight)
        biased.bias.zero_()
        biased.bias[vlm.tokenizer.convert_tokens_to_ids("bird")] = 50.0
    vlm.model.set_output_embeddings(biased)
    text = tv.TransformersCaptioner(vlm, max_tokens=3).caption(_photos(1)[0])
    assert text == "bird bird bird"


def test_a_missing_folder_fails_at_once_with_the_fix_and_is_not_retried(tmp_path, monkeypatch, caplog):
    calls = []
    real = vlm_loading.load_model
    monkeypatch.setattr(vlm_loading, "load_model", lambda *a, **k: calls.append(a) or real(*a, **k))
    settings = _settings(tmp_path / "no-such-model")
    backends = Backends(settings)
    started = time.monotonic()
    with pytest.raises(BackendError) as first:
        backends.judge
    assert time.monotonic() - started < 5
    assert "does not exist" in first.value.message and "transformers:" in first.value.hint
    with pytest.raises(BackendError):
        backends.judge
    with pytest.raises(BackendError):
        Backends(settings).captioner  # the captioner of the same model does not load it again
    assert len(calls) == 1
    assert sum("not retried" in r.getMessage() for r in caplog.records if r.name.endswith("registry")) >= 1


def test_a_folder_that_is_not_a_model_is_a_clear_error(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(BackendError) as err:
        Backends(_settings(tmp_path)).judge
    assert "Could not load the vision-language model" in err.value.message
    assert "image-text-to-text" in err.value.hint


def test_an_uncached_hub_model_offline_fails_within_seconds(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    started = time.monotonic()
    with pytest.raises(BackendError) as err:
        Backends(Settings(judge="transformers:HuggingFaceTB/SmolVLM-256M-Instruct", device="cpu")).judge
    assert time.monotonic() - started < 5
    assert "not in the local Hugging Face cache" in err.value.message
    assert "hf download HuggingFaceTB/SmolVLM-256M-Instruct" in err.value.hint


def test_a_bare_prefix_names_the_setting():
    with pytest.raises(BackendError) as err:
        vlm_loading.shared_model("", Settings(device="cpu"), "judge")
    assert "judge='transformers:' needs a model" in err.value.message


def test_the_bare_prefix_through_the_registry_is_an_error():
    from core.backends import registry
    from core.contracts.errors import EcoLensError

    with pytest.raises(EcoLensError, match="transformers:"):
        registry.create_judge(Settings(judge="transformers:", device="cpu"), None)
    with pytest.raises(EcoLensError, match="transformers:"):
        registry.create_captioner(Settings(captioner="transformers:", device="cpu"))
