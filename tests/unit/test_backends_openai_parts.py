"""The pure parts of the OpenAI-compatible backends: answer parsing, first-token log-probabilities, keys,
error mapping (a real connection refused on 127.0.0.1), images API decoding with a fake client."""
from __future__ import annotations

import base64
import io
import socket
from types import SimpleNamespace

import pytest
from PIL import Image

from core.backends import openai_common as oc
from core.backends.base import JudgeRequest
from core.backends.openai_generator import OpenAIGenerator, api_size
from core.backends.openai_judge import OpenAIJudge, answer_logprobs, first_answer_logprobs, parse_answer
from core.backends.openai_llm import OpenAILLM
from core.config import Settings
from core.contracts.errors import BackendError
from core.prompts import judge as prompts


@pytest.mark.parametrize("text,answer,reason", [
    ("Yes - the bird has white plumage.", "yes", "the bird has white plumage"),
    ("**No**: no eggs are visible", "no", "no eggs are visible"),
    ("no.", "no", ""),
    ("I think yes, the wings are spread\nmore text", "yes", "I think yes, the wings are spread"),
])
def test_parse_answer(text, answer, reason):
    assert parse_answer(text) == (answer, reason)


def test_parse_answer_falls_back_to_logprobs_then_no():
    assert parse_answer("Maybe.", {" Yes": -0.1, "No": -2.5})[0] == "yes"
    assert parse_answer("Maybe.", {"Yes": -3.0, "no": -0.1})[0] == "no"
    assert parse_answer("", {})[0] == "no"
    assert parse_answer("It can be answered with yes or no.", {"No": -0.2, "Yes": -1.0})[0] == "no"


def test_first_answer_logprobs_skips_blank_and_decoration():
    content = [
        {"token": "**", "logprob": -0.1, "top_logprobs": [{"token": "**", "logprob": -0.1}]},
        SimpleNamespace(token="Yes", logprob=-0.2, top_logprobs=[
            SimpleNamespace(token="Yes", logprob=-0.2), SimpleNamespace(token="No", logprob=-1.8)]),
        {"token": " -", "logprob": -0.01, "top_logprobs": []},
    ]
    assert first_answer_logprobs(content) == {"Yes": -0.2, "No": -1.8}
    assert first_answer_logprobs([{"token": " no", "logprob": -0.5, "top_logprobs": []}]) == {" no": -0.5}
    assert first_answer_logprobs(None) == {}


def test_answer_logprobs_reads_both_shapes():
    modern = SimpleNamespace(content=[{"token": "No", "logprob": -0.3,
                                       "top_logprobs": [{"token": "No", "logprob": -0.3}]}])
    legacy = SimpleNamespace(content=None, tokens=["\n", "Yes", " -"], token_logprobs=[-0.01, -0.4, -0.1],
                             top_logprobs=[{"\n": -0.01}, {"Yes": -0.4, "No": -1.2}, {" -": -0.1}])
    assert answer_logprobs(modern) == {"No": -0.3}
    assert answer_logprobs(legacy) == {"Yes": -0.4, "No": -1.2}
    assert answer_logprobs(None) == {}


def test_judge_prompt_has_all_parts_and_the_image():
    req = JudgeRequest(image=Image.new("RGB", (2000, 1000)), question="Are the eyes pink?",
                       query="albino robin", context="Albinos lack melanin.",
                       history=(("Is it a robin?", "yes"),))
    text = prompts.user_text(req)
    for part in ("albino robin", "Albinos lack melanin.", "Is it a robin? -> yes", "Are the eyes pink?"):
        assert part in text
    judge = OpenAIJudge(client=SimpleNamespace(base_url="http://127.0.0.1:1/v1/"), model="m", top_logprobs=50)
    assert judge.top_logprobs == 20
    msgs = judge.messages(req)
    url = msgs[1]["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    assert Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size == (1024, 512)


def test_api_key_order(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert oc.api_key(Settings(openai_api_key="k1")) == "k1"
    assert oc.api_key(Settings(openai_base_url="http://127.0.0.1:9/v1")) == oc.PLACEHOLDER_KEY
    with pytest.raises(BackendError) as err:
        oc.api_key(Settings())
    assert "OPENAI_API_KEY" in err.value.hint
    monkeypatch.setenv("OPENAI_API_KEY", "k2")
    assert oc.api_key(Settings()) == "k2"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_refused_becomes_backend_error_without_the_key():
    settings = Settings(openai_base_url=f"http://127.0.0.1:{_closed_port()}/v1", openai_api_key="sk-secret-123",
                        backend_retries=0, backend_timeout_s=5.0)
    llm = OpenAILLM.from_settings(settings)
    with pytest.raises(BackendError) as err:
        llm.chat([])
    assert "could not reach" in err.value.message and "127.0.0.1" in err.value.message
    assert "openai_base_url" in err.value.hint
    assert "sk-secret-123" not in str(err.value)


class FakeImagesClient:
    base_url = "fake://images"

    def __init__(self, b64: str | None):
        self.calls: list[dict] = []
        self.images = SimpleNamespace(generate=self._generate)
        self._b64 = b64

    def _generate(self, **kwargs):
        self.calls.append(kwargs)
        return SimpleNamespace(data=[SimpleNamespace(b64_json=self._b64, url=None)])


def test_openai_generator_decodes_and_resizes():
    buf = io.BytesIO()
    Image.new("RGB", (256, 256), (10, 120, 30)).save(buf, format="PNG")
    client = FakeImagesClient(base64.b64encode(buf.getvalue()).decode())
    out = OpenAIGenerator(client, "dall-e-2").generate("a fern", seed=7, size=100)
    assert out.image.size == (100, 100) and out.image.getpixel((50, 50)) == (10, 120, 30)
    assert client.calls == [{"model": "dall-e-2", "prompt": "a fern", "size": "256x256", "n": 1,
                             "response_format": "b64_json"}]
    with pytest.raises(BackendError):
        OpenAIGenerator(FakeImagesClient(None), "gpt-image-1").generate("a fern", seed=1)


def test_api_size():
    assert api_size("dall-e-2", 224) == "256x256"
    assert api_size("dall-e-2", 600) == "1024x1024"
    assert api_size("gpt-image-1", 224) == "1024x1024"
