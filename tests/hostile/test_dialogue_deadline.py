"""Dialogue against a language model server that never answers, drips its reply or says 429 (tests/faultservers):
each turn ends within deadline_dialogue_s (plus a little), with a question written by the offline rules and a
notice in the chat (what the API returns, and the page) that names the limit and says the model was late. The
fault servers run on 127.0.0.1 only."""
from __future__ import annotations

import time

import pytest

from core.backends.openai_llm import OpenAILLM
from core.config import load_settings
from core.search.engine import SearchEngine
from core.sessions.memory_log import MemorySessionLog
from tests.fakes import FakeBackends, FakeEmbedder
from tests.faultservers import FaultServer
from tests.unit.test_ui_fakes import DIM, FakeEngine
from ui.dialogue_handlers import DialogueHandlers

LIMIT_S = 2.0
SLACK_S = 3.0  # a turn's own work after its model calls were cut (retrieval, the rules' question)


def _handlers(tmp_path, url: str) -> DialogueHandlers:
    remote = dict(llm="openai", llm_model="m", openai_base_url=url + "/v1", backend_timeout_s=60.0,
                  backend_retries=2)
    llm = OpenAILLM.from_settings(load_settings(environ={}, **remote))
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), llm=llm),
                        deadline_dialogue_s=LIMIT_S, **remote)
    engine.dialogue = lambda description, filters=None, k=None: SearchEngine.dialogue(engine, description,
                                                                                     filters, k)
    return DialogueHandlers(engine, MemorySessionLog())


def _notices(chat: list[dict]) -> list[str]:
    return [m["content"] for m in chat if m.get("role") == "assistant" and m.get("metadata")]


@pytest.mark.parametrize("mode,says", [("hang", f"Dialogue's time limit of {LIMIT_S:g} s"),
                                       ("drip", f"Dialogue's time limit of {LIMIT_S:g} s"),
                                       ("rate_limited", "rate-limited (429)")])
def test_a_late_model_gets_the_rules_question_and_a_notice_within_the_limit(tmp_path, mode, says):
    with FaultServer(mode) as server:
        h = _handlers(tmp_path, server.url)
        t0 = time.monotonic()
        chat, _, gallery, _, _, _, st = h.start("a frog on a leaf", None)
        first = time.monotonic() - t0
        t0 = time.monotonic()
        chat2, *_, st = h.turn("yes", st)
        second = time.monotonic() - t0
        asked = server.calls
    assert first < LIMIT_S + SLACK_S and second < LIMIT_S + SLACK_S, (first, second)
    assert asked >= 1  # the model was asked, and not waited on past the limit
    assert chat[-1]["role"] == "assistant" and chat[-1]["content"].endswith("?"), chat[-1]  # the rules' question
    assert gallery  # the candidates are shown
    late = [n for n in _notices(chat) if says in n]
    assert late and "language model" in late[0], _notices(chat)
    assert mode == "rate_limited" or "deadline_dialogue_s" in late[0], late
    assert f"127.0.0.1:{server.server_address[1]}" in late[0]  # which server was late
    assert chat2[-1]["content"].endswith("?") and len(_notices(chat2)) > len(_notices(chat))  # the turn too
    cut = [n for n in _notices(chat2) if "..." in n]  # no notice is a sentence cut short ("(raise the search...")
    assert not cut, cut


def test_a_model_that_answers_in_time_adds_no_notice_of_a_limit(tmp_path):
    from tests.unit.test_ui_fakes import FakeEngine as Plain

    engine = Plain(tmp_path, deadline_dialogue_s=LIMIT_S)
    engine.dialogue = lambda description, filters=None, k=None: SearchEngine.dialogue(engine, description,
                                                                                     filters, k)
    chat, *_ = DialogueHandlers(engine, MemorySessionLog()).start("a frog on a leaf", None)
    assert not any("time limit" in n for n in _notices(chat)), chat
