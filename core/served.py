"""The one folder the web app serves: copies of what a page shows, made on demand and named by content hash.

A page never reads a photo where it lives. It asks for a catalog photo (a thumbnail for galleries, a larger
view for the label and detail panels) or for a picture EcoLens generated, and gets a JPEG/PNG copy in
`folder` (data_dir/served). The web server allows that folder alone, so the data directory, the database
and the index are never reachable, while photos from any folder still show. Copies carry no EXIF (no GPS
coordinates leak through a thumbnail). A photo whose file is gone or unreadable shows a placeholder, and
`Served.missing` says why, for a notice."""
from __future__ import annotations

import errno
import hashlib
import io
import logging
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from PIL import Image, ImageDraw

from core.contracts.errors import InputError, StorageError
from core.contracts.records import Photo
from core.imageio import load_image

log = logging.getLogger(__name__)
SIZES = {"thumb": 320, "view": 1280}  # longer side in pixels
PICTURE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp"}
_HEX = re.compile(r"[0-9a-f]{32,128}")
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
DISK_FULL = "the disk is full, so the copies the page shows cannot be written ({why})"
DISK_FULL_HINT = ("free some space on the disk that holds the data directory (data_dir), then search again; "
                  "nothing in the catalog was lost")


@dataclass(frozen=True)
class Served:
    """A file a page may show. `missing` is empty when it is the real picture, else why it is a placeholder."""

    path: Path
    missing: str = ""


def _box_key(box: dict | None) -> str:
    """The part of a served copy's name that tells a copy with a box drawn from the bare one ('' without)."""
    if not box or not box.get("bbox"):
        return ""
    text = ",".join(f"{float(v):.4f}" for v in box["bbox"]) + f"|{box.get('category')}|{box.get('conf')}"
    return "-box" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _blur_key(boxes: Sequence) -> str:
    """The part of a served copy's name that tells a copy with people blurred from the bare one ('' without)."""
    if not boxes:
        return ""
    text = ";".join(",".join(f"{float(v):.4f}" for v in (b.x, b.y, b.w, b.h)) for b in boxes)
    return "-blur" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _drawn(image: Image.Image, box: dict) -> Image.Image:
    from core.camtrap.boxes import draw

    conf = box.get("conf")
    label = f"{box.get('category') or 'animal'} {round(100 * float(conf))}%" if conf is not None else ""
    return draw(image, [tuple(float(v) for v in box["bbox"])], [label], [str(box.get("category") or "animal")])


def url_host(path: str) -> str | None:
    """The host of a photo whose catalog path is a URL (http, https), else None."""
    from urllib.parse import urlsplit

    parts = urlsplit(str(path or ""))
    return (parts.hostname or "?") if parts.scheme in ("http", "https") else None


def not_fetched(photo_id: int | None, host: str) -> tuple[str, str]:
    """(why, fix) of a photo kept by its URL (a Camtrap DP medium on a host the ingest did not reach): no picture."""
    return (f"photo {photo_id} has no file on this machine: it lies at {host} and was not fetched at ingest",
            "run the ingest again when that host can be reached")


class ServedFiles:
    def __init__(self, folder: Path | str, picture_roots: Sequence[Path | str] = (), max_pixels: int = 80_000_000):
        """`folder`: where copies go (the only folder served); `picture_roots`: folders whose generated pictures
        may be shown (data_dir/generated, data_dir/artefacts); `max_pixels`: larger originals are refused."""
        self.folder = Path(folder).expanduser().resolve()
        self.picture_roots = [Path(r).expanduser().resolve() for r in picture_roots]
        self.max_pixels = int(max_pixels)

    # ---- catalog photos ----------------------------------------------------------------------------
    def photo(self, photo: Photo | None, size: str = "thumb", box: dict | None = None,
              blur: Sequence = (), edit: tuple[str, Callable[[Image.Image], Image.Image]] | None = None) -> Served:
        """A copy of a catalog photo at `size` ('thumb' or 'view'), or a placeholder saying why not. `box`: a
        detection ({"bbox": [x, y, w, h], "category", "conf"}: a search hit's matched_detection) drawn on it;
        `blur`: boxes (normalised x, y, w, h: people, core.camtrap.people) blurred on the copy first; `edit`:
        (tag, function) drawn instead of `box` (the photo view's boxes: core.camtrap.frame_pictures), a copy
        of its own named by the tag."""
        side = SIZES[size]
        if photo is None:
            return Served(self.placeholder(size), "this photo is no longer in the catalog")
        host = url_host(photo.path)
        if host is not None:  # kept without its file (a Camtrap DP medium on a host the ingest did not reach)
            return Served(self.placeholder(size), "{} ({})".format(*not_fetched(photo.id, host)))
        source = Path(photo.path)
        if not source.is_file():
            return Served(self.placeholder(size), f"the file of photo {photo.id} is missing ({source.name}); "
                                                  "it was moved or deleted after ingest")
        key = photo.sha256 if _HEX.fullmatch(photo.sha256 or "") else \
            _digest(f"{source.resolve()}|{source.stat().st_mtime_ns}")
        # a photo smaller than the size asked for has one copy for every size (one file, one URL to cache)
        side = min(side, max(photo.width, photo.height)) if photo.width and photo.height else side
        drawn = f"-box{_digest(edit[0])[:12]}" if edit else _box_key(box)  # a copy with boxes drawn: "-box..."
        blurred = _blur_key(blur)
        target = self.folder / f"{key}-{side}{blurred}{drawn}.jpg"
        if target.is_file():
            return Served(target)
        try:
            image = load_image(source, max_pixels=self.max_pixels, max_side=side)
            if blurred:
                from core.camtrap.people import blur_people

                image = blur_people(image, blur)
            if edit:
                image = edit[1](image)
            elif drawn:
                image = _drawn(image, box)
        except InputError as exc:
            log.warning("photo %s cannot be shown: %s", photo.id, exc.message)
            return Served(self.placeholder(size), f"photo {photo.id} cannot be shown: its file is damaged or "
                                                  "not an image any more")
        except OSError as exc:
            log.warning("photo %s cannot be read: %s", photo.id, exc)
            return Served(self.placeholder(size), f"photo {photo.id} cannot be read ({exc.strerror or 'error'})")
        try:
            self._write(target, lambda tmp: Path(tmp).write_bytes(_encoded(image, "JPEG", quality=85)))
        except StorageError as exc:  # the disk is full: a placeholder (if there is room for one) and the fix
            return Served(self.placeholder(size), f"photo {photo.id} cannot be shown: {exc.message}; {exc.hint}")
        return Served(target)

    # ---- generated pictures ------------------------------------------------------------------------
    def picture(self, path: Path | str) -> Served:
        """A copy of a picture EcoLens generated (under one of `picture_roots`); anything else is refused
        with a placeholder, so a path in a request can never name another file."""
        try:
            source = Path(path).expanduser().resolve()
        except (OSError, ValueError):
            return Served(self.placeholder("view"), "a picture could not be found")
        inside = any(source.is_relative_to(root) for root in self.picture_roots)
        if not inside or source.suffix.lower() not in PICTURE_SUFFIXES:
            log.warning("refused to serve %s: not a generated picture", source)
            return Served(self.placeholder("view"), "a picture could not be shown")
        if not source.is_file():
            return Served(self.placeholder("view"), "a generated picture is gone (the cache was cleared); "
                                                    "search again to draw it anew")
        data = source.read_bytes()
        target = self.folder / f"{_digest(data)}{source.suffix.lower()}"
        if not target.is_file():
            self._write(target, lambda tmp: Path(tmp).write_bytes(data))
        return Served(target)

    # ---- placeholder -------------------------------------------------------------------------------
    def placeholder(self, size: str = "thumb") -> Path:
        """A grey picture with a crossed frame, shown where a photo cannot be."""
        side = SIZES[size]
        target = self.folder / f"placeholder-{side}.png"
        if not target.is_file():
            image = Image.new("RGB", (side, side * 3 // 4), (225, 225, 225))
            draw = ImageDraw.Draw(image)
            w, h = image.size
            draw.rectangle([4, 4, w - 5, h - 5], outline=(150, 150, 150), width=3)
            draw.line([4, 4, w - 5, h - 5], fill=(180, 180, 180), width=2)
            draw.line([4, h - 5, w - 5, 4], fill=(180, 180, 180), width=2)
            draw.text((12, 12), "photo unavailable", fill=(80, 80, 80))
            self._write(target, lambda tmp: Path(tmp).write_bytes(_encoded(image, "PNG")))
        return target

    def _write(self, target: Path, write) -> None:
        """Write through a temporary name and rename, so a page never sees half a file."""
        tmp = target.with_name(f".{target.stem}.{uuid.uuid4().hex}{target.suffix}")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write(tmp)
            os.replace(tmp, target)
        except OSError as exc:
            if exc.errno not in _FULL:
                raise
            log.warning("cannot write %s: %s", target.name, exc)
            raise StorageError(DISK_FULL.format(why=exc.strerror or "no space left"), DISK_FULL_HINT) from None
        finally:
            tmp.unlink(missing_ok=True)


def _encoded(image: Image.Image, fmt: str, **options) -> bytes:
    """The image encoded in memory: written with Python's own file writes, a full disk (or a file size limit)
    raises instead of leaving a truncated picture that PIL's encoder reports as saved."""
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def _digest(value: str | bytes) -> str:
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    return hashlib.sha256(data).hexdigest()
