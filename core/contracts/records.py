"""Plain dataclasses shared by core, storage and ui: photos, filters and search hits, and how a filter's text (a
box, a date) is read into them."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any

from core.contracts.camtrap import CamtrapFilters
from core.contracts.errors import InputError
from core.licences import parse_licence, url_of

RANKS = ("kingdom", "phylum", "class_name", "order", "family", "genus")
# what every search result says about its camera-trap facts when it has none (a plain photo)
CAMTRAP_FACTS_NONE: dict[str, Any] = {"deployment_id": None, "event_id": None, "timestamp": None, "detections": [],
                                      "matched_detection": None}


@dataclass
class Photo:
    """One photo of the corpus with its metadata. `id` is the catalog row id (= the FAISS id)."""

    path: str  # local path (absolute, or relative to the corpus root) or an http(s) URL
    sha256: str = ""
    id: int | None = None
    width: int = 0
    height: int = 0
    bytes: int = 0
    scientific_name: str = ""
    common_name: str = ""
    kingdom: str = ""
    phylum: str = ""
    class_name: str = ""
    order: str = ""
    family: str = ""
    genus: str = ""
    observed_on: date | None = None
    latitude: float | None = None
    longitude: float | None = None
    license: str = ""
    rights_holder: str = ""
    caption: str = ""
    source: str = ""  # e.g. "folder", "inat-csv", "inquire-parquet", "fieldguide"
    extra: dict[str, Any] = field(default_factory=dict)  # source-specific fields (ground truth, ids)

    def taxon_names(self) -> list[str]:
        """Every taxon name this photo belongs to, species first, lower-cased."""
        names = [self.scientific_name, self.common_name, *(getattr(self, r) for r in reversed(RANKS))]
        return [n.lower() for n in names if n]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["observed_on"] = self.observed_on.isoformat() if self.observed_on else None
        return d


@dataclass(frozen=True)
class Filters:
    """What narrows the pool of one search. All parts are optional and combine with AND."""

    taxon: str = ""  # any rank or common name, case-insensitive
    date_from: date | None = None
    date_to: date | None = None
    months: tuple[int, ...] = ()  # 1-12, any year
    bbox: tuple[float, float, float, float] | None = None  # west, south, east, north (degrees)
    license: str = ""  # a licence code (core.licences): "cc-by" exactly, "cc-by-4.0", "cc-by*" family, "nc"
    ids: tuple[int, ...] | None = None  # an explicit pool (a benchmark's candidate list)
    camtrap: CamtrapFilters | None = None  # camera-trap filters (deployments, time of day, empty frames, ...)

    def is_empty(self) -> bool:
        return self == Filters()

    def to_json(self) -> dict[str, Any]:
        """The parts that are set, JSON-ready (an explicit id pool is given as its size)."""
        out: dict[str, Any] = {}
        for name in ("taxon", "license"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        for name in ("date_from", "date_to"):
            if getattr(self, name):
                out[name] = getattr(self, name).isoformat()
        if self.months:
            out["months"] = list(self.months)
        if self.bbox:
            out["bbox"] = list(self.bbox)
        if self.ids is not None:
            out["ids"] = len(self.ids)
        if self.camtrap is not None:
            out["camtrap"] = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self.camtrap).items()
                              if v != getattr(CamtrapFilters(), k)}
        return out


def parse_bbox(text: str | None) -> tuple[float, float, float, float] | None:
    """'WEST,SOUTH,EAST,NORTH' (commas or semicolons) as four floats; None for empty text. Ranges are
    checked where the pool is built (core.search.corpus)."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        parts = tuple(float(p) for p in text.replace(";", ",").split(","))
    except ValueError:
        parts = ()
    if len(parts) != 4:
        raise InputError(f"Bounding box {text!r} is not four numbers",
                         "write WEST,SOUTH,EAST,NORTH in degrees, e.g. -10,35,30,60")
    return parts  # type: ignore[return-value]


# a date, optionally with the time of day and a zone as exports write them ("2024-05-31 14:02:11 UTC")
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                   r"\s*(?:Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?)?")


def parse_date(text: str | None) -> date | None:
    """YYYY-MM-DD, optionally followed by a time of day and a zone (which are ignored), or None for an empty
    value; InputError for anything else: a date that is not in the calendar (2024-02-30) or one followed by
    other text ("2024-05-31 approx") is refused, never cut to its first ten characters."""
    if text is None or str(text).strip() in ("", "nan", "NaT", "None"):
        return None
    if isinstance(text, (date, datetime)):
        return text if isinstance(text, date) and not isinstance(text, datetime) else text.date()
    raw = str(text).strip()
    m = _DATE.fullmatch(raw)
    if not m:
        raise InputError(f"Date {raw!r} is not in the form YYYY-MM-DD", "write dates like 2024-05-31") from None
    try:
        return date.fromisoformat(m.group(1))
    except ValueError:
        raise InputError(f"Date {raw!r} is not a day of the calendar",
                         "check the month and day (2024-02-30 does not exist); write dates like 2024-05-31") from None


@dataclass
class Hit:
    """One ranked result."""

    rank: int  # 1-based
    photo_id: int
    score: float
    photo: Photo | None = None
    covers: list[str] | None = None  # coverage: the parts of the query this photo shows (None: not a cover photo)
    # cosine of the photo with the query's words (feedback applied), or with the example photo when there are
    # no words: one scale for every search, whatever its ranking score is (RRF, judge %)
    similarity: float | None = None
    # the detection the match went through ({"bbox", "category", "conf", "model"}); None: the whole frame matched
    matched_detection: dict[str, Any] | None = None
    # camera-trap facts (core.camtrap.hit_facts): deployment_id, event_id, timestamp, detections, and with
    # by_event event_frames, event_frame_ids; None: the photo has none
    camtrap: dict[str, Any] | None = None
    # the ids of the near-copies folded into this result (core.vectors.near_copies), best-ranked first; None: none
    near_copies: list[int] | None = None

    def to_json(self) -> dict[str, Any]:
        p = self.photo
        out: dict[str, Any] = {"rank": self.rank, "id": self.photo_id, "score": round(float(self.score), 6),
                               "matched_detection": self.matched_detection}
        if self.similarity is not None:
            out["similarity"] = round(float(self.similarity), 6)
        if self.covers is not None:
            out["covers"] = list(self.covers)
        if self.near_copies:
            out["near_copies"] = list(self.near_copies)
        if p is not None:
            out.update(path=p.path, taxon=p.scientific_name, common_name=p.common_name,
                       observed_on=p.observed_on.isoformat() if p.observed_on else None,
                       latitude=p.latitude, longitude=p.longitude, license=p.license,
                       license_code=parse_licence(p.license).code, license_url=url_of(p.license),
                       rights_holder=p.rights_holder, caption=p.caption)
        out.update(CAMTRAP_FACTS_NONE)
        out.update({k: (list(v) if isinstance(v, list) else v) for k, v in (self.camtrap or {}).items()})
        out["matched_detection"] = self.matched_detection  # set by the crop search only (core.methods.run)
        return out
