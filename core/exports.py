"""Files about photos for people outside EcoLens: the marked photos of a session as CSV or JSONL, and how a
photo is named in any export (its URL, its benchmark file name, or its path relative to the photo collection
or the data directory; never an absolute path on the server)."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.licences import url_of

MARK_FORMATS = ("csv", "jsonl")
MARK_COLUMNS = ("id", "species", "common_name", "path", "latitude", "longitude", "date", "month", "license",
                "license_url", "rights_holder", "query", "preset")
# a spreadsheet reads a cell that begins with one of these as a formula (OWASP, "CSV Injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(value: Any) -> Any:
    """A CSV cell that no spreadsheet runs as a formula: text beginning with =, +, -, @, a tab or a carriage
    return gets a leading apostrophe (OWASP's advice for CSV injection; spreadsheets hide the apostrophe).
    Numbers, and text that is only a plain number (a label of -1, a longitude of -3.5 read from a source as
    text), are written as they are: a number is no formula, and altering it would corrupt the column."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS) or _PLAIN_NUMBER.fullmatch(value):
        return value
    return "'" + value


def write_csv(path: Path, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """Write `rows` under a header of `columns`, every text cell made spreadsheet_safe. (JSONL exports keep
    the raw text: they are read by programs, not opened in spreadsheets.)"""
    with Path(path).open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows([{k: spreadsheet_safe(v) for k, v in row.items()} for row in rows])


def public_name(photo: Photo, roots: Sequence[Path | str] = ()) -> str:
    """How an export names the photo's file: an http(s) URL as it is; the INQUIRE file name when the photo came
    from that benchmark; else the path relative to the first of `roots` (collection folder, data directory)
    that holds it; else the bare file name."""
    path = photo.path or ""
    if path.startswith(("http://", "https://")):
        return path
    named = (photo.extra or {}).get("inat24_file_name")
    if named:
        return str(named)
    p = Path(path)
    for root in roots:
        try:
            return p.resolve().relative_to(Path(root).expanduser().resolve()).as_posix()
        except (ValueError, OSError):
            continue
    return p.name


def collection_roots(settings: Any) -> list[Path]:
    """The folders exports name photo files relative to: the configured collection (a folder, or the folder
    of its CSV / parquet file), then the data directory (the synthetic world, downloaded media)."""
    roots: list[Path] = []
    if settings.corpus:
        p = Path(settings.corpus).expanduser()
        roots.append(p if p.is_dir() else p.parent)
    roots.append(settings.path())
    return roots


def mark_row(photo: Photo | None, photo_id: int, query: str, preset: str, roots: Sequence[Path | str]) -> dict:
    """One marked photo as an export row (a photo no longer in the catalog keeps its id, query and preset)."""
    p = photo or Photo(path="")
    when = p.observed_on
    return {"id": int(photo_id), "species": p.scientific_name, "common_name": p.common_name,
            "path": public_name(p, roots) if photo else "",
            "latitude": p.latitude, "longitude": p.longitude, "date": when.isoformat() if when else "",
            "month": when.month if when else "", "license": p.license, "license_url": url_of(p.license),
            "rights_holder": p.rights_holder,
            "query": query, "preset": preset}


def export_marks(marks: Sequence[Mapping[str, Any]], photos: Mapping[int, Photo], fmt: str, path: Path | str,
                 roots: Sequence[Path | str] = ()) -> int:
    """Write the marked photos (dicts with id, query, preset) to `path` as csv or jsonl; returns the rows."""
    if fmt not in MARK_FORMATS:
        raise InputError(f"Unknown export format {fmt!r}", "choose one of: " + ", ".join(MARK_FORMATS))
    if not marks:
        raise InputError("No photo is marked", "mark photos first (open a photo and press Mark)")
    rows = [mark_row(photos.get(int(m["id"])), int(m["id"]), str(m.get("query", "")), str(m.get("preset", "")),
                     roots) for m in marks]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        write_csv(path, MARK_COLUMNS, [{k: ("" if v is None else v) for k, v in row.items()} for row in rows])
    return len(rows)
