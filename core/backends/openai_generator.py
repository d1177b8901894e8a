"""Text-to-image through the OpenAI images API (generator='openai:MODEL', e.g. openai:gpt-image-1).

The API offers a few fixed sizes, so the smallest one that covers the requested side is asked for and the
picture is scaled to size x size. The API takes no seed: the seed is recorded but does not make the
picture repeatable."""
from __future__ import annotations

import base64
import io
from typing import Any, Sequence

from PIL import Image

from core.backends import openai_common as oc
from core.backends.base import GeneratedImage, ReferenceImage
from core.backends.reference_collage import instructions_text
from core.contracts.errors import BackendError


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
        return self._picture(response, prompt, seed, size)

    def generate_from_references(self, prompt: str, references: Sequence[ReferenceImage], *, seed: int,
                                 size: int = 224) -> GeneratedImage:
        """Multi-image input through the images edit endpoint (gpt-image-1 takes several pictures): the
        references as PNG files, the prompt followed by each picture's instruction in the same order."""
        if self.model.startswith("dall-e"):
            raise BackendError(f"{self.model} takes at most one picture to edit, not several references",
                               "use generator=openai:gpt-image-1 for reference-guided generation")
        files = []
        for i, ref in enumerate(references, start=1):
            buf = io.BytesIO()
            ref.image.convert("RGB").save(buf, format="PNG")
            files.append((f"reference-{i}.png", buf.getvalue(), "image/png"))
        text = instructions_text(prompt, references)
        with oc.calling("The image edit request", self.client):
            response = self.client.images.edit(model=self.model, image=files, prompt=text,
                                               size=api_size(self.model, size), n=1)
        return self._picture(response, text, seed, size)

    def _picture(self, response: Any, prompt: str, seed: int, size: int) -> GeneratedImage:
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
