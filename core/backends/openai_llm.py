"""Text LLM through any OpenAI-compatible chat-completions server (llm='openai').

The model name is the `llm_model` setting; empty, the model the server at `openai_base_url` serves, whose
size decides the model's facts (served_model.py), or without a base URL the hosted default (gpt-4.1-mini).
JSON answers carry the task's real JSON Schema: first as structured output ('json_schema', strict, for OpenAI
and vLLM); a server that refuses that option (e.g. llama-cpp-python's, which answers HTTP 500) is asked with
'json_object' plus the schema from then on, which llama.cpp turns into a grammar. The first schema attempt is
made without retries, so a refusal costs one request, not three. Callers still parse and validate what comes back."""
from __future__ import annotations

import copy
import logging
import threading
from typing import Any, Sequence

from core.backends import http_bounds, served_model
from core.backends import openai_common as oc
from core.backends.base import ChatMessage
from core.backends.model_facts import llm_facts
from core.backends.served_model import ServedModel

log = logging.getLogger(__name__)
# Keywords that strict structured output does not take; the full schema (with them) goes to json_object servers.
_NOT_STRICT = ("minLength", "maxLength", "default", "description")


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without the keywords strict structured output refuses (lengths are checked after parsing)."""
    def strip(node: Any, names: bool = False) -> Any:  # names: the keys are property names, kept as they are
        if isinstance(node, dict):
            return {k: strip(v, k in ("properties", "$defs")) for k, v in node.items() if names or k not in _NOT_STRICT}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node
    return strip(copy.deepcopy(schema))


class OpenAILLM:
    is_standin = False

    def __init__(self, client: Any, model: str, served: ServedModel | None = None):
        self.client = client
        self.served = served if served is not None else ServedModel(model)
        self.model = self.served.name
        self.model_id = f"openai:{self.model}@{oc.server_name(client)}"
        # matched on the parameter count when the server or its model file reports one, else on the name
        self.facts = llm_facts(self.served.short_name, self.served.n_params)
        # the model's caveat (the tiny-model notice) and a failed question to the server, shown with its answers
        self.notice = "; ".join(n for n in (self.facts.note, self.served.notice) if n)
        self.own_words = bool(self.facts.own_words)  # its questions are held to the request's words (llm_tasks)
        self.display_name = self.served.label  # how notices name the model that wrote a text
        # "unknown" until the server has answered a json_schema request: then "json_schema" or "json_object"
        self._json_style = "unknown"
        self._style_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Any, spec: str = "openai") -> "OpenAILLM":
        client = oc.make_client(settings, "llm")
        served = served_model.for_settings(settings, client, "llm_model")  # empty llm_model: ask the server
        return cls(client, served.name, served)

    @staticmethod
    def response_format(style: str, schema: dict[str, Any]) -> dict[str, Any]:
        if style == "json_object":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema",
                "json_schema": {"name": "answer", "schema": strict_schema(schema), "strict": True}}

    def chat(self, messages: Sequence[ChatMessage], *, temperature: float = 0.0, seed: int = 0,
             max_tokens: int = 256, json_schema: dict[str, Any] | None = None) -> str:
        payload = [{"role": m.role, "content": m.content} for m in messages]
        kwargs: dict[str, Any] = dict(model=self.model, messages=payload, temperature=float(temperature),
                                      seed=int(seed), max_tokens=int(max_tokens))
        with oc.calling("The LLM request", self.client):
            if json_schema is None:
                return oc.message_text(self.client.chat.completions.create(**kwargs))
            if self._json_style != "unknown":
                kwargs["response_format"] = self.response_format(self._json_style, json_schema)
                return oc.message_text(self.client.chat.completions.create(**kwargs))
            return oc.message_text(self._first_schema_call(kwargs, json_schema))

    def _first_schema_call(self, kwargs: dict[str, Any], schema: dict[str, Any]) -> Any:
        """Try structured output once, without retries; on a refusal switch to json_object for good."""
        with self._style_lock:
            style = self._json_style
        if style != "unknown":
            kwargs["response_format"] = self.response_format(style, schema)
            return self.client.chat.completions.create(**kwargs)
        once = self.client.with_options(max_retries=0) if hasattr(self.client, "with_options") else self.client
        try:
            with http_bounds.no_retries():  # the bounded transport's retries (the client's own are off)
                response = once.chat.completions.create(**kwargs,
                                                        response_format=self.response_format("json_schema", schema))
        except Exception as exc:
            if not oc.is_option_rejected(exc, "response_format") and getattr(exc, "status_code", None) != 500:
                raise
            log.warning("%s refused json_schema output (HTTP %s); using json_object with the schema from now on",
                        oc.server_name(self.client), getattr(exc, "status_code", "?"))
            with self._style_lock:
                self._json_style = "json_object"
            kwargs["response_format"] = self.response_format("json_object", schema)
            return self.client.chat.completions.create(**kwargs)
        with self._style_lock:
            self._json_style = "json_schema"
        return response
