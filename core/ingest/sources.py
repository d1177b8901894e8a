"""Where photos come from: a folder of images, an iNaturalist-style CSV, or a parquet file in the
INQUIRE-Rerank schema. Each source yields SourceItems: a name for reports, a way to read the bytes, and the
metadata known before the image is opened."""
from __future__ import annotations

import csv
import json
import logging
import threading
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Callable

from core.contracts.errors import InputError
from core.contracts.records import Photo, parse_date
from core.imageio import IMAGE_SUFFIXES, sha256_bytes
from core.ingest import downloads, local_files
from core.ingest.iconic import apply_iconic_group, iconic_value

log = logging.getLogger(__name__)

MAX_VALUE_NOTICES = 20  # notices about unreadable values: a few examples, then a count of the rest

_EMPTY_WORDS = ("", "nan", "none", "null", "na", "n/a")  # how exports write a missing coordinate

# iNaturalist-style CSV: our column -> accepted header names (first present wins). Other columns go to extra.
CSV_COLUMNS: dict[str, tuple[str, ...]] = {
    "path": ("path", "image_path", "file", "filename", "image_url", "url"),
    "scientific_name": ("scientific_name", "taxon_name", "species"),
    "common_name": ("common_name", "taxon_common_name"),
    "kingdom": ("kingdom", "taxon_kingdom_name"),
    "phylum": ("phylum", "taxon_phylum_name"),
    "class_name": ("class", "class_name", "taxon_class_name"),
    "order": ("order", "taxon_order_name"),
    "family": ("family", "taxon_family_name"),
    "genus": ("genus", "taxon_genus_name"),
    "observed_on": ("observed_on", "date", "observed_at"),
    "latitude": ("latitude", "lat"),
    "longitude": ("longitude", "lon", "lng"),
    "license": ("license", "licence", "image_license"),
    "rights_holder": ("rights_holder", "user_login", "user_name", "attribution"),
    "caption": ("caption", "description"),
}


@dataclass
class SourceItem:
    name: str  # what the report shows: a path, URL or row reference
    read: Callable[[], bytes]
    photo: Photo  # metadata template (path, names, date, ...); sha256 and size are filled at ingest
    save_to: Path | None = None  # bytes without a file of their own are written here (parquet images)
    # told each item's bytes and content hash once they are read (the camera-trap card step: core.camtrap.card)
    on_read: Callable[["SourceItem", bytes, str], None] | None = None


@dataclass
class SourceScan:
    items: list[SourceItem]
    kind: str
    ignored: list[str] = field(default_factory=list)  # files that are not images by their suffix
    notices: list[str] = field(default_factory=list)  # values that were left out (a longitude of 999)
    # a source with more to do than its items (core.ingest.camtrapdp_source.PackageHooks): bind(policy) instead
    # of downloads.bind, and finish(catalog, camtrap store, run id, report) once its photos are in the catalog
    hooks: object | None = None


def _float(value) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if out != out else out  # NaN -> None


class ValueNotes:
    """Values of a source that cannot be read: each is left empty on the photo, kept in its extra, logged, and
    reported as a notice naming the row, the column, the value and the fix (the first MAX_VALUE_NOTICES;
    then a count of the rest)."""

    def __init__(self):
        self.notices: list[str] = []
        self.count = 0

    def add(self, row: str, column: str, value, problem: str, fix: str) -> None:
        self.count += 1
        log.warning("%s: column %s: %r %s; left empty", row, column, value, problem)
        if self.count <= MAX_VALUE_NOTICES:
            self.notices.append(f"{row}: {column} {str(value)!r} {problem}; it was left empty (how to fix: {fix}, "
                                "then ingest the file again)")

    def all(self) -> list[str]:
        more = self.count - MAX_VALUE_NOTICES
        return self.notices + ([f"... and {more} more values that could not be read (see the log)"] if more > 0 else [])


def _date_value(value, row: str, column: str, extra: dict, notes: ValueNotes) -> date | None:
    """The date of a row, or None; an unreadable one is kept in extra (observed_on_unparsed) and noted."""
    try:
        return parse_date(value)
    except InputError as exc:
        extra["observed_on_unparsed"] = value if isinstance(value, str) else str(value)
        problem = "is not a day of the calendar" if "calendar" in exc.message else "is not a date (YYYY-MM-DD)"
        notes.add(row, column, value, problem, "write the date as YYYY-MM-DD, e.g. 2024-05-31")
        return None


def _coordinate(value, name: str, column: str, limit: float, row: str, extra: dict, notes: ValueNotes) -> float | None:
    """A latitude (|x| <= 90) or longitude (|x| <= 180), or None; a value that is not a number or out of range
    is kept in extra (name_invalid) and noted, so a filter by place never silently matches or misses it."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _EMPTY_WORDS):
        return None
    number = _float(value)
    if number is not None and -limit <= number <= limit:
        return number
    extra[f"{name}_invalid"] = value
    if number is None and not (isinstance(value, float) and value != value):  # NaN: an empty parquet cell
        notes.add(row, column, value, "is not a number",
                  f"write the {name} in decimal degrees, e.g. {'45.52' if name == 'latitude' else '-73.61'}")
    elif number is not None:
        notes.add(row, column, value, f"is outside -{limit:g} to {limit:g}",
                  f"give the {name} in decimal degrees between -{limit:g} and {limit:g}")
    else:
        extra.pop(f"{name}_invalid")
    return None


# what `ingest PATH` reads, as the fix of a path it cannot
SOURCES_HINT = ("give a folder of images (a camera card), a Camtrap DP package (its folder, datapackage.json or .zip), "
                "a .csv or a .parquet file")


def scan(path: str | Path, media_dir: Path) -> SourceScan:
    """Pick the source kind from `path` (folder, .csv, .parquet) and list its items."""
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"{p} does not exist", SOURCES_HINT)
    if p.is_dir():
        return _scan_folder(p)
    if not p.is_file():  # a FIFO's open would wait for a writer; a device's read never ends
        raise InputError(f"{p} is not a regular file (a device, FIFO or socket)",
                         SOURCES_HINT)
    if p.suffix.lower() == ".csv":
        return _scan_csv(p)
    if p.suffix.lower() == ".parquet":
        return _scan_parquet(p, media_dir)
    raise InputError(f"{p} is not a folder, .csv or .parquet file",
                     "point ingest at a folder of images, an iNaturalist-style CSV or an INQUIRE parquet file")


def _file_reader(p: Path) -> Callable[[], bytes]:
    """A regular file of at most limits.MAX_PHOTO_BYTES, read with bounded memory (core.ingest.local_files)."""
    return local_files.reader(p)


def _scan_folder(root: Path) -> SourceScan:
    items, ignored = [], []
    for f in sorted(root.rglob("*")):
        if f.is_dir() or f.name.startswith("."):  # a FIFO, device or dangling link named .jpg is kept: its
            continue  # read is refused with the reason (local_files), so the ingest says why it was skipped
        if f.suffix.lower() not in IMAGE_SUFFIXES:
            ignored.append(str(f))
            continue
        items.append(SourceItem(str(f), _file_reader(f), Photo(path=str(f.resolve()), source="folder")))
    return SourceScan(items, "folder", ignored)


def _url_reader(url: str) -> Callable[[], bytes]:
    """Bounded in time and size, public addresses only (the ingest binds the settings' policy instead)."""
    return downloads.reader(url, downloads.DownloadPolicy())


def _scan_csv(csv_path: Path) -> SourceScan:
    try:
        return _read_csv(csv_path)
    except UnicodeDecodeError as exc:
        raise InputError(f"{csv_path.name} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                         f"{exc.start} cannot be read as UTF-8)",
                         "save the file as 'CSV UTF-8' (or check that it is a CSV at all)") from None
    except csv.Error as exc:
        raise InputError(f"{csv_path.name} is not a readable CSV file ({exc})",
                         "check that the file is a comma-separated text file with a header row") from None


def _read_csv(csv_path: Path) -> SourceScan:
    with csv_path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        headers = reader.fieldnames or []
        chosen = {ours: next((h for h in names if h in headers), None) for ours, names in CSV_COLUMNS.items()}
        if chosen["path"] is None:
            raise InputError(f"{csv_path} has no image column",
                             "add a column named path (relative to the CSV), image_path or image_url")
        used = {h for h in chosen.values() if h}
        items, notes = [], ValueNotes()
        for line, row in enumerate(reader, start=2):
            ref = (row.get(chosen["path"]) or "").strip()
            name = f"{csv_path}:{line}"
            if not ref:
                items.append(SourceItem(name, lambda: b"", Photo(path="", source="inat-csv")))
                continue
            values = {ours: (row.get(h) or "").strip() for ours, h in chosen.items() if h}
            extra = {h: v for h, v in row.items() if h not in used and h is not None and v not in (None, "")}
            if "attributes" in extra:
                try:
                    extra["attributes"] = json.loads(extra["attributes"])
                except json.JSONDecodeError:
                    pass
            observed = _date_value(values.get("observed_on"), name, chosen["observed_on"], extra, notes)
            source = str(extra.pop("source", "") or "inat-csv")  # a CSV may name its photos' source (a world's)
            photo = Photo(
                path=ref, source=source, scientific_name=values.get("scientific_name", ""),
                common_name=values.get("common_name", ""), kingdom=values.get("kingdom", ""),
                phylum=values.get("phylum", ""), class_name=values.get("class_name", ""),
                order=values.get("order", ""), family=values.get("family", ""), genus=values.get("genus", ""),
                observed_on=observed,
                latitude=_coordinate(values.get("latitude"), "latitude", chosen["latitude"], 90, name, extra, notes),
                longitude=_coordinate(values.get("longitude"), "longitude", chosen["longitude"], 180, name, extra,
                                      notes),
                license=values.get("license", ""),
                rights_holder=values.get("rights_holder", ""), caption=values.get("caption", ""), extra=extra)
            apply_iconic_group(photo, iconic_value(extra))  # an iNaturalist export's iconic_taxon_name
            if ref.startswith(("http://", "https://")):
                items.append(SourceItem(ref, _url_reader(ref), photo))
            else:
                f = (csv_path.parent / ref).resolve()
                photo.path = str(f)
                items.append(SourceItem(str(f), _file_reader(f), photo))
    return SourceScan(items, "inat-csv", notices=notes.all())


INQUIRE_EXTRA = ("inat24_image_id", "inat24_file_name", "inat24_species_id", "supercategory", "category",
                 "iconic_group", "location_uncertainty", "clip_score")


class _RowGroupImages:
    """The image column of a parquet file, read one row group at a time when a photo's bytes are asked for
    (the ingest asks in file order): at most one row group's images are held at once."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._group: int | None = None
        self._images: list = []

    def bytes_of(self, group: int, row: int) -> bytes:
        import pyarrow.parquet as pq

        with self._lock:
            if self._group != group:
                table = pq.ParquetFile(self.path).read_row_group(group, columns=["image"])
                self._images, self._group = table.column("image").to_pylist(), group
            img = self._images[row]
        raw = img.get("bytes") if isinstance(img, dict) else img
        return bytes(raw or b"")


def _scan_parquet(path: Path, media_dir: Path) -> SourceScan:
    """The rows of an INQUIRE-Rerank parquet file, read one row group at a time (metadata now; image bytes when
    the ingest reads each photo)."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        cols = set(pf.schema_arrow.names)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"{path.name} is not a readable parquet file ({type(exc).__name__})",
                         "check that the file is a complete parquet file (INQUIRE-Rerank schema)") from None
    if "image" not in cols:
        raise InputError(f"{path} has no 'image' column",
                         "use a parquet file in the INQUIRE-Rerank schema (image, query, relevant, ...)")
    images = _RowGroupImages(path)
    items, notes, i = [], ValueNotes(), 0
    for group in range(pf.num_row_groups):
        try:
            rows = pf.read_row_group(group).to_pylist()
        except (OSError, ValueError) as exc:
            raise InputError(f"{path.name}: row group {group} cannot be read ({type(exc).__name__})",
                             "download the file again (it is damaged or incomplete)") from None
        for row_in_group, row in enumerate(rows):
            items.append(_parquet_item(path, media_dir, cols, row, i, notes,
                                       lambda g=group, r=row_in_group: images.bytes_of(g, r)))
            i += 1
        del rows  # the bytes of this row group are dropped before the next is read
    return SourceScan(items, "inquire-parquet", notices=notes.all())


def _parquet_item(path: Path, media_dir: Path, cols: set, row: dict, i: int, notes: ValueNotes,
                  read_bytes: Callable[[], bytes]) -> SourceItem:
    img = row.get("image")
    raw, ref = (img.get("bytes"), img.get("path")) if isinstance(img, dict) else (img, None)
    if isinstance(raw, str):  # some exports keep a path string instead of bytes
        ref, raw = raw, None
    if raw is None and ref:
        f = (path.parent / ref).resolve()
        read, save_to, photo_path = _file_reader(f), None, str(f)
    else:
        read = read_bytes
        fname = row.get("inat24_file_name") or ref or f"row{i}.jpg"
        save_to = media_dir / Path(str(fname)).name
        photo_path = str(save_to)
    where = f"{path}:row {i}"
    extra = {k: row[k] for k in INQUIRE_EXTRA if k in cols and row.get(k) is not None}
    photo = Photo(
        path=photo_path, source="inquire-parquet", scientific_name=row.get("inat24_species_name") or "",
        observed_on=_date_value(row.get("date"), where, "date", extra, notes),
        latitude=_coordinate(row.get("latitude"), "latitude", "latitude", 90, where, extra, notes),
        longitude=_coordinate(row.get("longitude"), "longitude", "longitude", 180, where, extra, notes),
        license=row.get("license") or "", rights_holder=row.get("rights_holder") or "", extra=extra)
    apply_iconic_group(photo, iconic_value(extra))  # class Aves, kingdom Plantae ...: the catalog's taxonomy
    return SourceItem(where, read, photo, save_to=save_to)


def content_hash(data: bytes) -> str:
    return sha256_bytes(data)
