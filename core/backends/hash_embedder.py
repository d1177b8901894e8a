"""A deterministic, meaningless stand-in embedder: colour statistics and hashed words, randomly projected.

It exists so that ingest and search run anywhere with no model; its rankings carry no meaning beyond colour."""
from __future__ import annotations

import hashlib
import re
from typing import Sequence

import numpy as np
from PIL import Image

from core.backends.base import l2_normalise

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    is_standin = True
    max_text_tokens = 64

    def __init__(self, dim: int = 64, seed: int = 0):
        self.dim = dim
        self.model_id = f"hash-standin@v1/{dim}"
        rng = np.random.default_rng(seed)
        self._colour_proj = rng.standard_normal((48, dim)).astype(np.float32)

    @classmethod
    def from_settings(cls, settings, spec: str) -> "HashEmbedder":
        return cls()

    def _image_features(self, image: Image.Image) -> np.ndarray:
        small = np.asarray(image.convert("RGB").resize((4, 4)), dtype=np.float32) / 255.0
        return small.reshape(-1) - 0.5

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        if not images:
            return np.zeros((0, self.dim), np.float32)
        feats = np.stack([self._image_features(im) for im in images])
        return l2_normalise(feats @ self._colour_proj)

    def _word_vector(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)

    def tokens(self, text: str) -> list[str]:
        return _WORD.findall(text.lower())

    def count_tokens(self, text: str) -> int:
        return len(self.tokens(text))

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            words = self.tokens(text)[: self.max_text_tokens]
            rows.append(np.sum([self._word_vector(w) for w in words], axis=0) if words else np.zeros(self.dim))
        return l2_normalise(np.array(rows, dtype=np.float32).reshape(len(texts), self.dim))
