"""What a photo's EXIF says about its capture: when (DateTimeOriginal, with OffsetTimeOriginal when the camera
wrote one), with what (make, model, serial) and where (GPS). Read with Pillow's getexif and its sub-IFDs from
the bytes the ingest has read anyway; only the header is parsed, the pixels are never decoded.

Tags (EXIF 2.32, CIPA DC-008): IFD0 Make 0x010F, Model 0x0110, DateTime 0x0132; Exif IFD (0x8769)
DateTimeOriginal 0x9003, DateTimeDigitized 0x9004, OffsetTimeOriginal 0x9011, OffsetTimeDigitized 0x9012,
BodySerialNumber 0xA431; GPS IFD (0x8825) GPSLatitudeRef 1, GPSLatitude 2, GPSLongitudeRef 3, GPSLongitude 4.
DNG's CameraSerialNumber 0xC62F in IFD0 stands in for a missing BodySerialNumber."""
from __future__ import annotations

import io
import logging
import math
import re
from dataclasses import dataclass
from datetime import datetime

from PIL import Image, UnidentifiedImageError

log = logging.getLogger(__name__)

EXIF_IFD, GPS_IFD = 0x8769, 0x8825
MAKE, MODEL, DATETIME, CAMERA_SERIAL = 0x010F, 0x0110, 0x0132, 0xC62F
ORIGINAL, DIGITIZED, OFFSET_ORIGINAL, OFFSET_DIGITIZED, BODY_SERIAL = 0x9003, 0x9004, 0x9011, 0x9012, 0xA431
GPS_LAT_REF, GPS_LAT, GPS_LON_REF, GPS_LON = 1, 2, 3, 4

# "YYYY:MM:DD HH:MM:SS" as EXIF writes it (some cameras write '-' in the date or 'T' between)
_STAMP = re.compile(r"\s*(\d{4})[:\-](\d{2})[:\-](\d{2})[ T](\d{2}):(\d{2}):(\d{2})")
_OFFSET = re.compile(r"\s*([+-])(\d{2}):(\d{2})\s*")


@dataclass(frozen=True, slots=True)
class ExifFacts:
    """The capture facts of one photo's EXIF; empty values where it said nothing (or nothing readable).
    `taken` is the wall time the camera recorded (naive); `offset` its OffsetTimeOriginal as written
    ('+02:00'), checked later (core.camtrap.capture_time); `unreadable` the raw date text that was not a time."""

    taken: datetime | None = None
    offset: str = ""
    make: str = ""
    model: str = ""
    serial: str = ""
    latitude: float | None = None
    longitude: float | None = None
    unreadable: str = ""

    def is_empty(self) -> bool:
        return self == ExifFacts()


def _text(value) -> str:
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    return str(value or "").replace("\x00", "").strip()


def parse_stamp(text: str) -> datetime | None:
    """'2024:05:31 14:02:11' as a naive datetime; None for blanks ('0000:00:00 00:00:00', '    :  :  ') and for
    anything that is not a time of the calendar."""
    m = _STAMP.match(text or "")
    if not m:
        return None
    try:
        return datetime(*(int(g) for g in m.groups()))
    except ValueError:
        return None


def parse_offset(text: str) -> tuple[int, int, int] | None:
    """'+02:00' -> (sign, hours, minutes); None when it is not written as ±HH:MM."""
    m = _OFFSET.fullmatch(text or "")
    if not m:
        return None
    return (1 if m.group(1) == "+" else -1), int(m.group(2)), int(m.group(3))


def _degrees(dms, ref) -> float | None:
    """A GPS rational triple (degrees, minutes, seconds) with its N/S/E/W reference as signed decimal degrees."""
    try:
        d, m, s = (float(x) for x in dms)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    value = d + m / 60 + s / 3600
    if math.isnan(value):  # a rational with a zero denominator
        return None
    return -value if _text(ref).upper() in ("S", "W") else value


def _place(gps) -> tuple[float | None, float | None]:
    lat, lon = _degrees(gps.get(GPS_LAT), gps.get(GPS_LAT_REF)), _degrees(gps.get(GPS_LON), gps.get(GPS_LON_REF))
    if lat is None or lon is None or not (-90 <= lat <= 90 and -180 <= lon <= 180) or (lat == 0 and lon == 0):
        return None, None  # 0,0: a camera without a fix writes zeros
    return lat, lon


def read_exif(data: bytes, name: str = "") -> ExifFacts:
    """The capture facts of a photo's bytes (ExifFacts() when it has no EXIF or is no readable image: the
    ingest's decoding says why a file cannot be used, not this)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            exif = image.getexif()
            sub = exif.get_ifd(EXIF_IFD)
            gps = exif.get_ifd(GPS_IFD)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, TypeError, KeyError) as exc:
        log.debug("%s: no EXIF read (%s)", name, exc)
        return ExifFacts()
    raw = next((t for t in (_text(sub.get(ORIGINAL)), _text(sub.get(DIGITIZED)), _text(exif.get(DATETIME))) if t), "")
    taken = parse_stamp(raw)
    offset = _text(sub.get(OFFSET_ORIGINAL)) or (_text(sub.get(OFFSET_DIGITIZED)) if not sub.get(ORIGINAL) else "")
    offset = offset if any(c.isdigit() for c in offset) else ""  # '   :  ': the camera did not know it
    unknown = not any(c in "123456789" for c in raw)  # EXIF's blanks ('    :  :  ') or zeros: no date at all
    lat, lon = _place(gps) if gps else (None, None)
    return ExifFacts(taken=taken, offset=offset if taken else "", make=_text(exif.get(MAKE)),
                     model=_text(exif.get(MODEL)),
                     serial=_text(sub.get(BODY_SERIAL)) or _text(exif.get(CAMERA_SERIAL)),
                     latitude=lat, longitude=lon, unreadable=raw if taken is None and not unknown else "")
