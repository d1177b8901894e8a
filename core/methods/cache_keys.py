"""Cache keys: a sha256 of the JSON of a call's inputs (pictures and arrays hashed by their content), and a
photo's identity for keys (its content hash, else its path, size and time on disk)."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np
from PIL import Image


def key_of(*parts: Any) -> str:
    """sha256 of the JSON of the parts (images and arrays hashed by content)."""
    def enc(x: Any) -> Any:
        if isinstance(x, Image.Image):
            return "img:" + image_hash(x)
        if isinstance(x, np.ndarray):
            return "arr:" + hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()
        return x
    text = json.dumps([enc(p) for p in parts], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def image_hash(image: Image.Image) -> str:
    h = hashlib.sha256(f"{image.mode}{image.size}".encode())
    h.update(image.tobytes())
    return h.hexdigest()


def photo_key(photo) -> str:
    """A photo's identity for cache keys: its content hash when known, else path and size on disk."""
    if photo.sha256:
        return "sha:" + photo.sha256
    try:
        st = os.stat(photo.path)
        return f"path:{photo.path}:{st.st_size}:{int(st.st_mtime)}"
    except OSError:
        return f"path:{photo.path}"
