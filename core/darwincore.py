"""Photos as Darwin Core occurrences: a Darwin Core Archive (a zip of `occurrence.txt`, `multimedia.txt` in
GBIF's Simple Multimedia extension, `meta.xml` saying which column is which term, and `eml.xml` describing
the dataset) that GBIF's data validator reads, one occurrence per exported photo.

What each term is filled from (docs/reference/formats.md, "Darwin Core"):
- occurrenceID: the source's own identifier (a column `occurrenceID`, iNaturalist's observation URL, INQUIRE's
  iNat24 image id), else `urn:sha256:<the photo's content hash>`, which stays the same across catalogs;
- basisOfRecord: a column `basisOfRecord` (or `basis_of_record`; `camera_trap` = true means
  MachineObservation); MachineObservation for a camera-trap frame of the data model (a photo with a capture
  in a deployment); else the `dwc_basis_of_record` setting (HumanObservation by default);
- license (dcterms): the licence's URL (core.licences.licence_url); rightsHolder (dcterms) as the source
  wrote it; a record whose licence GBIF cannot publish gets a warning (core.dwc.eml.gbif_licence);
- references (dcterms): the source's web page of the observation; modified (dcterms): a source column
  `modified` or iNaturalist's `updated_at`, as ISO 8601;
- countryCode: a source column `countryCode` / `country_code` holding an ISO 3166-1 alpha-2 code, else empty
  (GBIF fills it from the coordinates); individualCount: a source column `individualCount`, else the count
  of the camera-trap observations of the frame (media level, else its event's) naming the photo's taxon;
- associatedMedia / the multimedia identifier: the photo's URL when it came from the web, else its path
  relative to the collection (or, outside it, to the folder all exported files share), so camA/IMG_0001.JPG
  and camB/IMG_0001.JPG stay apart (a local file has no public address: publish the photos and rewrite it);
- photos of a synthetic world (its demo folder) say so in occurrenceRemarks, and the archive's metadata too.
Values go into the archive as they are (only tabs and line breaks inside a value become spaces): the
spreadsheet formula guard of core.exports is for CSV files people open in spreadsheets, not for the data
GBIF publishes.
"""
from __future__ import annotations

import io
import logging
import mimetypes
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable, Collection, Mapping, Sequence
from xml.etree import ElementTree as ET

from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.dwc.eml import GBIF_LICENCES, Contact, dataset_licence, eml_xml, gbif_licence
from core.dwc.values import country_code, individual_count, media_names, modified
from core.exports import public_name
from core.licences import assumed_version, licence_url, parse_licence
from core.plugins.registry import worlds

log = logging.getLogger(__name__)

DWC = "http://rs.tdwg.org/dwc/terms/"
DC = "http://purl.org/dc/terms/"
OCCURRENCE_ROW = DWC + "Occurrence"
MULTIMEDIA_ROW = "http://rs.gbif.org/terms/1.0/Multimedia"
BASES = ("HumanObservation", "MachineObservation")
OCCURRENCE_TERMS = ("occurrenceID", "basisOfRecord", "scientificName", "taxonRank", "vernacularName", "kingdom",
                    "phylum", "class", "order", "family", "genus", "eventDate", "year", "month", "day",
                    "countryCode", "decimalLatitude", "decimalLongitude", "geodeticDatum",
                    "coordinateUncertaintyInMeters", "individualCount", "license", "rightsHolder", "associatedMedia",
                    "references", "modified", "occurrenceRemarks")
# Dublin Core terms among them (http://purl.org/dc/terms/...); every other is Darwin Core's
DC_TERMS = frozenset({"license", "rightsHolder", "references", "modified"})
# GBIF Simple Multimedia: the first column is the core id (the occurrence the photo belongs to)
MULTIMEDIA_TERMS = ("coreid", "type", "format", "identifier", "references", "title", "license", "rightsHolder")
_RANKS = (("genus", "genus"), ("family", "family"), ("order", "order"), ("class_name", "class"),
          ("phylum", "phylum"), ("kingdom", "kingdom"))
_TRUE = ("1", "true", "yes", "y")


def term_iri(term: str) -> str:
    """A term's IRI: Dublin Core's for DC_TERMS, else Darwin Core's."""
    return (DC if term in DC_TERMS else DWC) + term


@dataclass(frozen=True)
class Occurrence:
    """One photo to export, and why (e.g. 'judged relevant to “...” by ana'), which goes to occurrenceRemarks."""

    photo: Photo
    remarks: str = ""


def occurrence_id(photo: Photo) -> str:
    extra = photo.extra or {}
    for key in ("occurrenceID", "occurrence_id"):
        if str(extra.get(key) or "").strip():
            return str(extra[key]).strip()
    url = str(extra.get("url") or "").strip()
    if url.startswith(("http://", "https://")):
        return url
    if str(extra.get("inat24_image_id") or "").strip():
        return f"urn:inat24:image:{str(extra['inat24_image_id']).strip()}"
    if photo.sha256:
        return f"urn:sha256:{photo.sha256}"
    return f"urn:ecolens:photo:{photo.id}"


def basis_of_record(photo: Photo, default: str = "HumanObservation", camera_trap: bool = False) -> str:
    """The source's own basisOfRecord; MachineObservation for a camera-trap frame; else `default`."""
    extra = photo.extra or {}
    for key in ("basisOfRecord", "basis_of_record"):
        given = str(extra.get(key) or "").strip().lower()
        match = next((b for b in BASES if b.lower() == given), None)
        if match:
            return match
    if camera_trap or str(extra.get("camera_trap") or "").strip().lower() in _TRUE:
        return "MachineObservation"
    return default


def taxon_rank(photo: Photo) -> str:
    """The rank of the name in scientificName: species for a binomial, subspecies for a trinomial, else the
    rank whose field holds that name; '' when there is no name."""
    name = photo.scientific_name.strip()
    if not name:
        return ""
    words = name.split()
    if len(words) == 2:
        return "species"
    if len(words) >= 3:
        return "subspecies"
    return next((rank for field, rank in _RANKS if getattr(photo, field).strip().lower() == name.lower()), "")


def _cell(value: object) -> object:
    """A value for a tab-separated file: no tabs or line breaks inside; otherwise the value as it is (the
    archive is data, not a spreadsheet: no formula guard)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return " ".join(value.split())
    return value


def occurrence_row(item: Occurrence, roots: Sequence[Path | str], synthetic: str = "",
                   default_basis: str = "HumanObservation", camera_trap: bool = False, media: str | None = None,
                   counts: Mapping[int, int] | None = None) -> dict[str, object]:
    """One photo as an occurrence; `media`: its name in the archive (media_names), else public_name's."""
    p, extra = item.photo, item.photo.extra or {}
    lic = parse_licence(p.license)
    when = p.observed_on
    has_place = p.latitude is not None and p.longitude is not None
    media = media if media is not None else public_name(p, roots)
    url = str(extra.get("url") or "")
    remarks = [r for r in (item.remarks, synthetic) if r]
    if assumed_version(lic):
        remarks.append(f"licence written as {p.license!r} without a version: "
                       f"{licence_url(lic)} assumed")
    uncertainty = extra.get("location_uncertainty", extra.get("positional_accuracy", ""))
    return {"occurrenceID": occurrence_id(p), "basisOfRecord": basis_of_record(p, default_basis, camera_trap),
            "scientificName": p.scientific_name, "taxonRank": taxon_rank(p), "vernacularName": p.common_name,
            "kingdom": p.kingdom, "phylum": p.phylum, "class": p.class_name, "order": p.order, "family": p.family,
            "genus": p.genus, "eventDate": when.isoformat() if when else "", "year": when.year if when else "",
            "month": when.month if when else "", "day": when.day if when else "",
            "countryCode": country_code(p),
            "decimalLatitude": p.latitude if has_place else "", "decimalLongitude": p.longitude if has_place else "",
            "geodeticDatum": "EPSG:4326" if has_place else "",
            "coordinateUncertaintyInMeters": uncertainty if _is_number(uncertainty) else "",
            "individualCount": individual_count(p, counts or {}),
            "license": licence_url(lic) or p.license, "rightsHolder": p.rights_holder, "associatedMedia": media,
            "references": url if url.startswith(("http://", "https://")) else "", "modified": modified(p),
            "occurrenceRemarks": "; ".join(remarks)}


def multimedia_row(occurrence: dict[str, object], photo: Photo) -> dict[str, object]:
    media = str(occurrence["associatedMedia"])
    kind = mimetypes.guess_type(media.split("?")[0])[0] or "image/jpeg"
    return {"coreid": occurrence["occurrenceID"], "type": "StillImage", "format": kind, "identifier": media,
            "references": occurrence["references"], "title": photo.common_name or photo.scientific_name,
            "license": occurrence["license"], "rightsHolder": occurrence["rightsHolder"]}


def _is_number(value: object) -> bool:
    try:
        float(str(value))
    except ValueError:
        return False
    return str(value).strip() != ""


def _table(columns: Sequence[str], rows: Sequence[dict[str, object]]) -> str:
    lines = ["\t".join(columns)]
    lines += ["\t".join(str(_cell(row.get(c, ""))) for c in columns) for row in rows]
    return "\n".join(lines) + "\n"


def _meta_xml() -> bytes:
    archive = ET.Element("archive", {"xmlns": "http://rs.tdwg.org/dwc/text/", "metadata": "eml.xml"})
    layout = {"encoding": "UTF-8", "fieldsTerminatedBy": "\\t", "linesTerminatedBy": "\\n", "fieldsEnclosedBy": "",
              "ignoreHeaderLines": "1"}
    core = ET.SubElement(archive, "core", {**layout, "rowType": OCCURRENCE_ROW})
    ET.SubElement(ET.SubElement(core, "files"), "location").text = "occurrence.txt"
    ET.SubElement(core, "id", {"index": "0"})
    for i, term in enumerate(OCCURRENCE_TERMS):
        ET.SubElement(core, "field", {"index": str(i), "term": term_iri(term)})
    ext = ET.SubElement(archive, "extension", {**layout, "rowType": MULTIMEDIA_ROW})
    ET.SubElement(ET.SubElement(ext, "files"), "location").text = "multimedia.txt"
    ET.SubElement(ext, "coreid", {"index": "0"})
    for i, term in enumerate(MULTIMEDIA_TERMS[1:], start=1):
        ET.SubElement(ext, "field", {"index": str(i), "term": DC + term})
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(archive, encoding="utf-8")


def write_archive(path: Path | str, items: Sequence[Occurrence], roots: Sequence[Path | str] = (),
                  synthetic: Callable[[Photo], str] = lambda p: "", default_basis: str = "HumanObservation",
                  title: str = "Photos exported from EcoLens", camera_traps: Collection[int] = (),
                  counts: Mapping[int, int] | None = None, contact: Contact = Contact(),
                  published: date | None = None, notices: list[str] | None = None) -> int:
    """Write a Darwin Core Archive of `items` (one occurrence and one multimedia row per photo; a photo listed
    twice is written once, its reasons joined) to `path`; returns the number of occurrences.
    `synthetic(photo)`: the note for a photo that is not a real observation ('' for a real one);
    `camera_traps`: the ids of camera-trap frames (MachineObservation); `counts`: photo id -> individuals
    counted (camera-trap observations); `contact`: the dataset's contact; `published`: its pubDate (today,
    UTC, by default). `notices` (when given) receives what the user should know before publishing: one
    warning per record whose licence GBIF cannot take, and a missing contact."""
    if default_basis not in BASES:
        raise InputError(f"Unknown basisOfRecord {default_basis!r}", "use one of: " + ", ".join(BASES))
    if not items:
        raise InputError("No photo to export", "judge photos relevant or mark photos first")
    merged: dict[int | str, Occurrence] = {}
    for item in items:
        key = item.photo.id if item.photo.id is not None else item.photo.path
        if key in merged:
            reasons = [r for r in (merged[key].remarks, item.remarks) if r]
            item = Occurrence(item.photo, "; ".join(dict.fromkeys(reasons)))
        merged[key] = item
    occurrences, media, synthetic_count, said = [], [], 0, []
    kept = list(merged.values())
    names = media_names([item.photo for item in kept], roots)
    for i, item in enumerate(kept):
        note = synthetic(item.photo)
        synthetic_count += bool(note)
        row = occurrence_row(item, roots, note, default_basis, item.photo.id in camera_traps, names[i], counts)
        occurrences.append(row)
        media.append(multimedia_row(row, item.photo))
        if not gbif_licence(item.photo.license):
            said.append(f"{row['occurrenceID']}: licence {item.photo.license or 'not given'!r} is not one GBIF "
                        f"publishes ({', '.join(GBIF_LICENCES.values())}): ask the rights holder for one of them, "
                        "or leave this record out before publishing")
    if len(set(names.values())) < len(names):
        log.warning("two exported photos have the same name in the Darwin Core Archive: %s", names)
    licence = dataset_licence([gbif_licence(item.photo.license) for item in kept])
    if not contact.name.strip():
        said.append("the archive names no contact person: set dwc_contact and dwc_contact_email before publishing")
    for line in said:
        log.warning("Darwin Core export: %s", line)
    if notices is not None:
        notices.extend(said)
    abstract = f"{len(occurrences)} photos exported from EcoLens as occurrences, each with its photo."
    if synthetic_count:
        abstract += (f" {synthetic_count} of them are synthetic pictures of a demo world, not real observations "
                     "(occurrenceRemarks says which): do not publish them as biodiversity data.")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("occurrence.txt", _table(OCCURRENCE_TERMS, occurrences))
        zf.writestr("multimedia.txt", _table(MULTIMEDIA_TERMS, media))
        zf.writestr("meta.xml", _meta_xml())
        zf.writestr("eml.xml", eml_xml(title, abstract, licence, contact,
                                       published or datetime.now(timezone.utc).date()))
    path.write_bytes(buf.getvalue())
    return len(occurrences)


def synthetic_note(settings: object) -> Callable[[Photo], str]:
    """The note for photos inside a registered world's demo folder under the data directory (e.g. the
    field-guide world): '' for every other photo."""
    folders = []
    for w in worlds().values():
        if w.demo_folder:
            try:
                folders.append((Path(settings.path(w.demo_folder)).resolve(), w.title or w.name))
            except OSError:
                continue

    def note(photo: Photo) -> str:
        if not photo.path or photo.path.startswith(("http://", "https://")):
            return ""
        try:
            where = Path(photo.path).resolve()
        except OSError:
            return ""
        for folder, name in folders:
            if where.is_relative_to(folder):
                return f"synthetic picture of EcoLens's {name} demo world: not a real observation"
        return ""

    return note


def marked_occurrences(marks: Sequence[dict], photos: dict[int, Photo]) -> list[Occurrence]:
    """Marked photos (dicts with id, query, preset, and `like` for a 'more like this' search) as occurrences
    that say which search they were marked from; photos no longer in the catalog are left out."""
    out = []
    for m in marks:
        photo = photos.get(int(m["id"]))
        if photo is None:
            continue
        found = str(m.get("query") or "")
        out.append(Occurrence(photo, f"marked from the search “{found}”" + (f" ({m['preset']})" if m.get("preset")
                                                                              else "")))
    return out


def options(settings: object) -> dict:
    """write_archive's options from the settings: which photos are synthetic, the default basisOfRecord."""
    return {"synthetic": synthetic_note(settings), "default_basis": settings.dwc_basis_of_record,
            "contact": Contact(settings.dwc_contact, settings.dwc_contact_email)}
