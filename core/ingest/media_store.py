"""Keeping the bytes of remote photos: a photo named by an http(s) URL (a CSV `image_url` column) is stored at
ingest under data_dir/media/remote/, named by its content hash, and the catalog points at that file, so
every later stage (the judge, the captioner, the served copies) reads it locally, offline, and the same
picture at two URLs is stored once. The URL stays in the photo's extra metadata (`image_url`)."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

from core.contracts.records import Photo

REMOTE = ("http://", "https://")
_MAGIC = ((b"\xff\xd8\xff", ".jpg"), (b"\x89PNG\r\n\x1a\n", ".png"), (b"GIF87a", ".gif"), (b"GIF89a", ".gif"),
          (b"BM", ".bmp"), (b"II*\x00", ".tif"), (b"MM\x00*", ".tif"))


def is_remote(path: str) -> bool:
    return str(path or "").lower().startswith(REMOTE)


def suffix_of(data: bytes) -> str:
    """The image file suffix that the bytes' signature says ('.img' when unknown)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return next((suffix for magic, suffix in _MAGIC if data.startswith(magic)), ".img")


def keep_local(photo: Photo, data: bytes, digest: str, media_dir: Path) -> str:
    """The local path `photo` should have in the catalog: unchanged for a local file; for a remote photo, the
    stored copy of `data` (content hash `digest`), written once. Records the URL in photo.extra."""
    if not is_remote(photo.path):
        return photo.path
    target = Path(media_dir) / "remote" / digest[:2] / f"{digest}{suffix_of(data)}"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, target)  # an interrupted ingest never leaves half a photo under the final name
        finally:
            tmp.unlink(missing_ok=True)
    photo.extra = {**(photo.extra or {}), "image_url": photo.path}
    return str(target.resolve())
