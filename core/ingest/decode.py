"""Reading, hashing and decoding one photo for embedding, shared by the local and the Ray ingest engines.

JPEGs are decoded reduced by the codec's own DCT scaling (PIL's draft mode) as long as the shorter side
stays at least DECODE_MIN_SIDE pixels: embedders look at 224-448 px, and a 2-3 MP JPEG then decodes two to
four times faster. The photo's stored width and height are always the original ones."""
from __future__ import annotations

import os
from dataclasses import dataclass

from PIL import Image

from core.contracts.errors import InputError
from core.imageio import decode_sized
from core.ingest.downloads import DownloadError
from core.ingest.local_files import FileRefused
from core.ingest.sources import SourceItem, content_hash

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
    except (DownloadError, FileRefused) as exc:  # a URL refused or cut at its time limit, a path that is no
        return ReadItem(item, error=str(exc))  # photo file (a device, FIFO, /proc) or too large: the reason says which
    except OSError as exc:
        return ReadItem(item, error=f"cannot be read ({exc.strerror or exc}); check the path and permissions")
    if not data:
        return ReadItem(item, error="is empty (0 bytes); re-download or re-export the file")
    digest = content_hash(data)
    if item.on_read is not None:  # EXIF capture facts (core.camtrap.card), from the bytes already in memory
        item.on_read(item, data, digest)
    return ReadItem(item, data, digest, nbytes=len(data))


def decode_for_embedding(data: bytes, *, name: str, max_pixels: int) -> tuple[Image.Image, tuple[int, int]]:
    """(RGB image, original (width, height)); raises InputError saying why the bytes cannot be used. A large
    JPEG is decoded reduced: the codec skips the DCT detail that a 224-448 px embedder never sees."""
    return decode_sized(data, name=name, max_pixels=max_pixels, min_side=DECODE_MIN_SIDE)


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
