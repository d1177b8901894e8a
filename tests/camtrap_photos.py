"""JPEGs with EXIF written by Pillow, for the camera-trap tests (the tags are the EXIF 2.32 ones the reader
reads: core.camtrap.exif)."""
from __future__ import annotations

import io
from pathlib import Path

from PIL import Image
from PIL.TiffImagePlugin import IFDRational


def exif_jpeg(taken: str | None = None, offset: str | None = None, *, make: str = "", model: str = "",
              serial: str = "", gps: tuple[float, float] | None = None, colour=(90, 90, 90), size=(48, 32)) -> bytes:
    """A small JPEG whose EXIF says `taken` ('2024:05:31 14:02:11') and the rest, each only when given."""
    ex = Image.Exif()
    if make:
        ex[0x010F] = make
    if model:
        ex[0x0110] = model
    sub = ex.get_ifd(0x8769)
    if taken:
        sub[0x9003] = taken
    if offset:
        sub[0x9011] = offset
    if serial:
        sub[0xA431] = serial
    if gps:
        g = ex.get_ifd(0x8825)
        for ref_tag, tag, value, refs in ((1, 2, gps[0], "NS"), (3, 4, gps[1], "EW")):
            whole = abs(value)
            degrees = int(whole)
            minutes = int((whole - degrees) * 60)
            seconds = round(((whole - degrees) * 60 - minutes) * 60 * 1000)
            g[ref_tag] = refs[0] if value >= 0 else refs[1]
            g[tag] = (IFDRational(degrees), IFDRational(minutes), IFDRational(seconds, 1000))
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "JPEG", exif=ex)
    return out.getvalue()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
