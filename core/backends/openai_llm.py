"""Text LLM through any OpenAI-compatible chat-completions server (llm='openai').

The model name is the `llm_model` setting. JSON answers: first asked for with a 'json_schema' response
format; a server that refuses that option (e.g. llama-cpp-python's) is asked with 'json_object' plus
the schema from then on. Callers still parse and validate what comes back."""
from __future__ import annotations

from typing import Any, Sequence

from core.backends import openai_common as oc
from core.backends.base import ChatMessage


class OpenAILLM:
    is_standin = False

    def __init__(self, client: Any, model: str):
        self.client = client
        self.model = model
        self.model_id = f"openai:{model}@{oc.server_name(client)}"
        self._json_style = "json_schema"  # switches to "json_object" if the server refuses json_schema

    @classmethod
    def from_settings(cls, settings: Any, spec: str = "openai") -> "OpenAILLM":
        return cls(oc.make_client(settings, "llm"), settings.llm_model)

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self._json_style == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
        return {"type": "json_object", "schema": schema}

    def chat(self, messages: Sequence[ChatMessage], *, temperature: float = 0.0, seed: int = 0,
             max_tokens: int = 256, json_schema: dict[str, Any] | None = None) -> str:
        payload = [{"role": m.role, "content": m.content} for m in messages]
        kwargs: dict[str, Any] = dict(model=self.model, messages=payload, temperature=float(temperature),
                                      seed=int(seed), max_tokens=int(max_tokens))
        if json_schema is not None:
            kwargs["response_format"] = self._response_format(json_schema)
        with oc.calling("The LLM request", self.client):
            try:
                response = self.client.chat.completions.create(**kwargs)
            except Exception as exc:
                if json_schema is None or self._json_style != "json_schema" or not oc.is_option_rejected(exc, "response_format"):
                    raise
                self._json_style = "json_object"
                kwargs["response_format"] = self._response_format(json_schema)
                response = self.client.chat.completions.create(**kwargs)
        return oc.message_text(response)
