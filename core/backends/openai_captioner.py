"""Captioner through an OpenAI-compatible vision-language model (captioner='openai'): one sentence per
photo. The model name is the `judge_model` setting (the same VLM as the judge)."""
from __future__ import annotations

from typing import Any

from PIL import Image

from core.backends import openai_common as oc
from core.backends import served_model
from core.contracts.records import Photo
from core.prompts import judge as prompts

MAX_TOKENS = 80


def _hint(photo: Photo | None) -> str:
    if photo is None:
        return ""
    names = [n for n in (photo.common_name, photo.scientific_name) if n]
    return " / ".join(names)


class OpenAICaptioner:
    is_standin = False

    def __init__(self, client: Any, model: str):
        self.client = client
        self.model = model
        self.max_tokens = MAX_TOKENS
        self.model_id = f"openai-captioner:{model}@{oc.server_name(client)}"

    @classmethod
    def from_settings(cls, settings: Any, spec: str = "openai") -> "OpenAICaptioner":
        return cls(*served_model.client_and_name(settings, "captioner", "judge_model"))

    def caption(self, image: Image.Image, photo: Photo | None = None) -> str:
        messages = [
            {"role": "system", "content": prompts.CAPTION_SYSTEM},
            {"role": "user", "content": [
                {"type": "text", "text": prompts.caption_text(_hint(photo))},
                {"type": "image_url", "image_url": {"url": oc.image_data_url(image)}},
            ]},
        ]
        with oc.calling("The caption request", self.client, oc.VISION_NOTE):
            response = self.client.chat.completions.create(
                model=self.model, messages=messages, temperature=0.0, seed=0, max_tokens=self.max_tokens)
        text = oc.message_text(response)
        return text.splitlines()[0].strip() if text else ""
