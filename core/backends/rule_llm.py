"""The offline stand-in LLM (llm='rule').

It knows nothing and answers every chat with the empty string. Every caller of an LLM already parses and
validates the answer and falls back to its own deterministic rule when the answer is unusable, so an empty
answer simply means "use the rule": the rule-based path runs everywhere, offline and repeatably, and the
output is labelled as coming from a stand-in (is_standin=True)."""
from __future__ import annotations

from typing import Any, Sequence

from core.backends.base import ChatMessage


class RuleLLM:
    model_id = "rule-llm@v1"
    is_standin = True

    @classmethod
    def from_settings(cls, settings: Any = None, spec: str = "rule") -> "RuleLLM":
        return cls()

    def chat(self, messages: Sequence[ChatMessage], *, temperature: float = 0.0, seed: int = 0,
             max_tokens: int = 256, json_schema: dict[str, Any] | None = None) -> str:
        return ""
