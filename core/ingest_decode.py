"""Reading, hashing and decoding one photo for embedding, shared by the local and the Ray ingest engines.

JPEGs are decoded reduced by the codec's own DCT scaling (PIL's draft mode) as long as the shorter side
stays at least DECODE_MIN_SIDE pixels: embedders look at 224-448 px, and a 2-3 MP JPEG then decodes two to
four times faster. The photo's stored width and height are always the original ones."""
from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

from core.errors import InputError
from core.imageio import to_rgb
from core.sources import SourceItem, content_hash

DECODE_MIN_SIDE = 512  # the shorter side a reduced JPEG decode keeps (covers embedders up to 512 px input)


@dataclass
class ReadItem:
    """An item's bytes and content hash, or why they could not be read."""

    item: SourceItem
    data: bytes = b""
    digest: str = ""
    error: str = ""
    nbytes: int = 0  # kept when `data` is dropped early (the Ray driver hands a path on, not the bytes)


def read_and_hash(item: SourceItem) -> ReadItem:
    try:
        data = item.read()
    except OSError as exc:
        return ReadItem(item, error=f"cannot be read ({exc.strerror or exc}); check the path and permissions")
    if not data:
        return ReadItem(item, error="is empty (0 bytes); re-download or re-export the file")
    return ReadItem(item, data, content_hash(data), nbytes=len(data))


def decode_for_embedding(data: bytes, *, name: str, max_pixels: int) -> tuple[Image.Image, tuple[int, int]]:
    """(RGB image, original (width, height)); raises InputError saying why the bytes cannot be used."""
    if not data:
        raise InputError(f"{name} is empty (0 bytes)", "re-download or re-export the file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            size = image.size
            if size[0] * size[1] > max_pixels:
                raise InputError(f"{name} has {size[0]}x{size[1]} pixels, over the limit of {max_pixels}",
                                 "downscale it or raise the max_image_pixels setting")
            if image.format == "JPEG" and min(size) >= 2 * DECODE_MIN_SIDE:
                # why draft: the codec skips the DCT detail that a 224-448 px embedder never sees
                image.draft("RGB", (DECODE_MIN_SIDE, DECODE_MIN_SIDE))
            image.load()
            return to_rgb(image), size
    except InputError:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise InputError(f"{name} is not a readable image ({type(exc).__name__})",
                         "check that the file is a JPEG, PNG, WebP, GIF, BMP or TIFF") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(f"{name} is damaged or truncated ({exc})", "re-download or re-export the file") from None


def load_for_embedding(path: str, max_pixels: int) -> Image.Image:
    """A catalog photo's file decoded as a new one would be (resumed and repaired photos embed alike)."""
    try:
        data = open(path, "rb").read()
    except OSError as exc:
        raise InputError(f"Image {path} cannot be read ({exc.strerror or exc})", "check the path") from None
    return decode_for_embedding(data, name=str(path), max_pixels=max_pixels)[0]


def decode_workers(setting: int) -> int:
    """Decoding threads for the local engine: the setting, or the machine's cores (at most 8)."""
    return setting if setting > 0 else max(2, min(8, os.cpu_count() or 2))
