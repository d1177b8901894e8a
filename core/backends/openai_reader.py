"""Answers from photos through an OpenAI-compatible chat server with image input (answer_reader='openai', or
'auto' with judge='openai'): the question, then each photo as an image part after a text part with its id.
Model: the `judge_model` setting (the same vision-language model that judges)."""
from __future__ import annotations

from typing import Any, Sequence

from PIL import Image

from core.backends import openai_common as oc
from core.backends import served_model
from core.prompts import answer as prompts

MAX_TOKENS = 300


class OpenAIReader:
    is_standin = False

    def __init__(self, client: Any, model: str, max_tokens: int = MAX_TOKENS):
        self.client, self.model, self.max_tokens = client, model, int(max_tokens)
        self.model_id = f"openai-reader:{model}@{oc.server_name(client)}"

    @classmethod
    def from_settings(cls, settings: Any, embedder: Any = None) -> "OpenAIReader":
        """`embedder` is unused (every reader's factory takes it, core/backends/readers.py)."""
        return cls(*served_model.client_and_name(settings, "answer_reader", "judge_model"))

    def messages(self, question: str, photos: Sequence[tuple[int, Image.Image]]) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = [{"type": "text", "text": prompts.reader_intro(question)}]
        for pid, image in photos:
            parts.append({"type": "text", "text": f"[{pid}]"})
            parts.append({"type": "image_url", "image_url": {"url": oc.image_data_url(image, max_side=768)}})
        return [{"role": "system", "content": prompts.READER_SYSTEM}, {"role": "user", "content": parts}]

    def read(self, question: str, photos: Sequence[tuple[int, Image.Image]]) -> str:
        with oc.calling("The answer request", self.client, oc.VISION_NOTE):
            response = self.client.chat.completions.create(model=self.model, messages=self.messages(question, photos),
                                                           temperature=0.0, seed=0, max_tokens=self.max_tokens)
        return oc.message_text(response)
