"""Opening photos safely: EXIF orientation, odd modes (CMYK, 16-bit, palette, animated) to RGB, and
clear reasons for files that cannot be used; an example photo checked against the request bounds before it is
decoded (`example_photo`)."""
from __future__ import annotations

import hashlib
import io
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from core.contracts import bounds
from core.contracts.errors import InputError

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff"}


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def to_rgb(image: Image.Image) -> Image.Image:
    """Any PIL image as 8-bit RGB: first frame of an animation, EXIF rotation applied, 16-bit scaled."""
    if getattr(image, "is_animated", False):
        image.seek(0)
    image = ImageOps.exif_transpose(image) or image
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        arr = np.asarray(image, dtype=np.float64)
        top = arr.max() if arr.size else 1.0
        scale = 255.0 / (65535.0 if top > 255 else max(top, 1.0))
        image = Image.fromarray(np.clip(arr * scale, 0, 255).astype(np.uint8), "L")
    elif image.mode == "F":
        arr = np.asarray(image, dtype=np.float64)
        rng = (arr.max() - arr.min()) or 1.0
        image = Image.fromarray(((arr - arr.min()) / rng * 255).astype(np.uint8), "L")
    if image.mode in ("P", "PA") and "transparency" in image.info:
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA"):
        background = Image.new("RGB", image.size, (255, 255, 255))
        background.paste(image.convert("RGBA"), mask=image.convert("RGBA").getchannel("A"))
        return background
    return image.convert("RGB")


def decode_image(data: bytes, *, name: str = "image", max_pixels: int = 80_000_000,
                 max_side: int | None = None, too_large_hint: str = "") -> Image.Image:
    """Decode bytes into an RGB image or raise InputError saying why it cannot be used. The pixel count is
    checked from the header, before any pixel is decoded. With `max_side`, the result is at most that many
    pixels on its longer side, and a JPEG is decoded reduced (PIL draft: 1/2 to 1/8 scale), so a huge photo
    never costs its full size in memory."""
    return decode_sized(data, name=name, max_pixels=max_pixels, max_side=max_side, too_large_hint=too_large_hint)[0]


def decode_sized(data: bytes, *, name: str = "image", max_pixels: int = 80_000_000, max_side: int | None = None,
                 min_side: int | None = None, too_large_hint: str = "") -> tuple[Image.Image, tuple[int, int]]:
    """(RGB image, the file's own (width, height)), checked and decoded as decode_image does. With `min_side`,
    a JPEG whose shorter side is at least twice that is decoded reduced, keeping the shorter side at least
    `min_side` (for embedders, which look at a few hundred pixels), and is not resized further."""
    if not data:
        raise InputError(f"{name} is empty (0 bytes)", "re-download or re-export the file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            probe = Image.open(io.BytesIO(data))
            width, height = probe.size
            if width * height > max_pixels:
                raise InputError(f"{name} has {width}x{height} pixels, over the limit of {max_pixels}",
                                 too_large_hint or "downscale it or raise the max_image_pixels setting")
            if max_side and probe.format == "JPEG" and max(width, height) > max_side:
                probe.draft("RGB", _draft_box(width, height, max_side))
            elif min_side and probe.format == "JPEG" and min(width, height) >= 2 * min_side:
                probe.draft("RGB", (min_side, min_side))
            probe.load()
            image = to_rgb(probe)
            if max_side and max(image.size) > max_side:
                image.thumbnail((max_side, max_side))
            return image, (width, height)
    except InputError:
        raise
    except UnidentifiedImageError:
        raise InputError(f"{name} is not a readable image", "check that the file is a JPEG, PNG, WebP, GIF, BMP or "
                         "TIFF") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(f"{name} is not a readable image (far too many pixels for its size)",
                         "check the file; re-export it at a normal size") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(f"{name} is damaged or truncated ({exc})", "re-download or re-export the file") from None


def _draft_box(width: int, height: int, max_side: int) -> tuple[int, int]:
    """The size to ask PIL's draft for so that the longer side stays at least `max_side` (draft never goes
    below the requested size, so the final thumbnail keeps its quality)."""
    scale = max_side / max(width, height)
    return max(1, int(width * scale)), max(1, int(height * scale))


def load_image(path: str | Path, *, max_pixels: int = 80_000_000, max_side: int | None = None,
               shown: str | None = None) -> Image.Image:
    """Open a local image file as RGB, or raise InputError (missing, empty, broken, too large); `max_side`
    as in decode_image. `shown`: how messages name the file (default its path; a catalog photo's messages,
    which reach the browser, name the photo and its file name, never the folder on the server)."""
    p = Path(path)
    if not p.is_file():
        if shown is not None:
            raise InputError(f"The file of {shown} is missing; it was moved or deleted after ingest",
                             "put the file back, or ingest its folder again")
        raise InputError(f"Image {p} does not exist", "check the path")
    return decode_image(p.read_bytes(), name=shown or str(p), max_pixels=max_pixels, max_side=max_side)


def example_photo(path: str | Path, max_mb: float) -> Image.Image:
    """An example photo (a web upload or `search --image`) as RGB, at most bounds.EXAMPLE_SIDE pixels on its longer
    side. Checked before any pixel is decoded: file type, file size (`max_mb`, the max_upload_mb setting) and
    the pixel count in its header (bounds.MAX_EXAMPLE_PIXELS for JPEG, bounds.MAX_FULL_DECODE_PIXELS for formats
    that must be decoded in full). Messages name the file, never the folder it was uploaded to."""
    p = Path(path)
    name = p.name
    if p.suffix.lower() not in bounds.EXAMPLE_SUFFIXES:
        raise InputError(f"The file {name} is not a photo EcoLens can read",
                         "use a JPEG, PNG, WebP, GIF, BMP or TIFF file")
    if not p.is_file():
        if p.exists():  # a FIFO, a device, a folder: there, but no photo file
            raise InputError(f"The photo {name} is not a regular file (a folder, device, FIFO or socket)",
                             "give a photo file (JPEG, PNG, ...) saved on disk")
        raise InputError(f"The photo {name} does not exist", "check the file name and folder")
    mb = p.stat().st_size / 1_000_000
    if mb > max_mb:
        raise InputError(f"The photo {name} is {mb:.1f} MB, more than the {max_mb:g} MB allowed",
                         "use a smaller photo (resize or re-export it first)")
    data = p.read_bytes()
    limit = bounds.MAX_FULL_DECODE_PIXELS
    try:
        with Image.open(io.BytesIO(data)) as probe:  # reads the header only
            if probe.format == "JPEG":
                limit = bounds.MAX_EXAMPLE_PIXELS
    except Exception:  # not an image at all: decode_image says so in its own words
        pass
    hint = (f"use a photo of at most {bounds.MAX_FULL_DECODE_PIXELS // 1_000_000} megapixels "
            f"({bounds.MAX_EXAMPLE_PIXELS // 1_000_000} for a JPEG); resize it first")
    return decode_image(data, name=f"The photo {name}", max_pixels=limit, max_side=bounds.EXAMPLE_SIDE,
                        too_large_hint=hint)
