"""Text-to-image through the OpenAI images API (generator='openai:MODEL', e.g. openai:gpt-image-1).

The API offers a few fixed sizes, so the smallest one that covers the requested side is asked for and the
picture is scaled to size x size. The API takes no seed: the seed is recorded but does not make the
picture repeatable."""
from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image

from core.backends import openai_common as oc
from core.backends.base import GeneratedImage
from core.errors import BackendError


def api_size(model: str, size: int) -> str:
    """The requested size string: dall-e-2 has 256/512/1024 squares, the other models 1024 and up."""
    if model.startswith("dall-e-2"):
        side = next((s for s in (256, 512, 1024) if s >= size), 1024)
        return f"{side}x{side}"
    return "1024x1024"


class OpenAIGenerator:
    is_standin = False

    def __init__(self, client: Any, model: str):
        if not model:
            raise BackendError("generator='openai:' needs a model name", "e.g. generator=openai:gpt-image-1")
        self.client = client
        self.model = model
        self.model_id = f"openai-images:{model}@{oc.server_name(client)}"

    @classmethod
    def from_settings(cls, settings: Any, spec: str) -> "OpenAIGenerator":
        if spec in ("", "openai:"):  # the registry passes the bare prefix through unchanged
            cls(None, "")  # raises the error that names the setting
        return cls(oc.make_client(settings, "generator"), spec)

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage:
        kwargs: dict[str, Any] = dict(model=self.model, prompt=prompt, size=api_size(self.model, size), n=1)
        if self.model.startswith("dall-e"):
            kwargs["response_format"] = "b64_json"  # newer models always answer in base64
        with oc.calling("The image generation request", self.client):
            response = self.client.images.generate(**kwargs)
        data = getattr(response, "data", None) or []
        b64 = getattr(data[0], "b64_json", None) if data else None
        if not b64:
            raise BackendError(f"The image server sent no picture data for model {self.model}",
                               "use a model that returns base64 images (e.g. gpt-image-1)")
        try:
            image = Image.open(io.BytesIO(base64.b64decode(b64)))
            image.load()
        except Exception as exc:
            raise BackendError(f"The image server's picture could not be decoded: {exc}",
                               "check the generator model") from None
        image = image.convert("RGB")
        if image.size != (size, size):
            image = image.resize((size, size), Image.LANCZOS)
        return GeneratedImage(image=image, prompt=prompt, seed=seed, model_id=self.model_id)
