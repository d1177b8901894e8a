"""Offline stand-in image generator (generator='standin'): a smooth colour pattern that depends only on
(prompt, seed), so the same request always gives the same picture. It draws nothing the prompt says;
every word is reported in `ignored_words`."""
from __future__ import annotations

import hashlib
import re
from typing import Any, Sequence

import numpy as np
from PIL import Image

from core.backends.base import GeneratedImage, ReferenceImage
from core.backends.reference_collage import collage, instructions_text

_GRID = 6  # coarse random grid, scaled up smoothly


def _rng(prompt: str, seed: int) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}\x00{prompt}".encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def pattern(prompt: str, seed: int, size: int) -> Image.Image:
    """The deterministic picture for (prompt, seed), size x size RGB."""
    rng = _rng(prompt, seed)
    coarse = (rng.random((_GRID, _GRID, 3)) * 255).astype(np.uint8)
    image = Image.fromarray(coarse, "RGB").resize((size, size), Image.BICUBIC)
    grain = rng.integers(-12, 13, size=(size, size, 3))
    pixels = np.clip(np.asarray(image, dtype=np.int16) + grain, 0, 255).astype(np.uint8)
    return Image.fromarray(pixels, "RGB")


class StandinGenerator:
    model_id = "standin-generator@v1"
    is_standin = True

    @classmethod
    def from_settings(cls, settings: Any = None, spec: str = "standin") -> "StandinGenerator":
        return cls()

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage:
        size = max(1, int(size))
        words = re.findall(r"[\w'-]+", prompt)
        return GeneratedImage(image=pattern(prompt, seed, size), prompt=prompt, seed=seed,
                              model_id=self.model_id, ignored_words=words)

    def generate_from_references(self, prompt: str, references: Sequence[ReferenceImage], *, seed: int,
                                 size: int = 224) -> GeneratedImage:
        """The references side by side under a light veil of this (prompt, seed)'s pattern: a composition of the
        given pictures, nothing drawn from the words (all listed as ignored)."""
        size = max(1, int(size))
        text = instructions_text(prompt, references)
        image = Image.blend(collage(references, size), pattern(text, seed, size), 0.15)
        return GeneratedImage(image=image, prompt=text, seed=seed, model_id=self.model_id,
                              ignored_words=re.findall(r"[\w'-]+", text))
