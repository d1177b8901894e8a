"""The one way out for every export format that the API's `/export` and `python app.py export` write: a query's
relevance labels (csv, jsonl, keypresses, inquire-rerank, dwc: core.labels), the camera-trap data as a Camtrap
DP package (camtrap-dp: core.camtrap.camtrapdp_write), the detections as MegaDetector results
(megadetector) and the collection's vectors as companion vectors for a hub dataset (vectors:
core.ingest.companion_writer). The web app's label view and the command line both call `export`, so one format means the
same file wherever it is asked for.

What each caller hands in is an `ExportSources`: the settings, the session log (labels), a photo lookup and,
for the camera-trap formats, the camera-trap store. Nothing here opens a database."""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from core import darwincore
from core.contracts import bounds
from core.contracts.camtrap import Observation
from core.contracts.errors import EcoLensError, InputError
from core.contracts.records import Photo
from core.contracts.sessionlog import Label, SessionLog
from core.exports import collection_roots
from core.labels import EXPORT_FORMATS, export_labels, same_annotator

log = logging.getLogger(__name__)

LABEL_FORMATS = EXPORT_FORMATS  # a query's labels: --query needed
FOLDER_FORMATS = ("camtrap-dp",)  # written as a new folder, not one file
COLLECTION_FORMATS = ("vectors",)  # the whole collection's: no query, no labels
FORMATS = LABEL_FORMATS + FOLDER_FORMATS + ("megadetector",) + COLLECTION_FORMATS
# the file name ending a download or a default name takes ('' for a folder)
SUFFIX = {"csv": "csv", "jsonl": "jsonl", "keypresses": "keypresses.csv", "inquire-rerank": "inquire-rerank.csv",
          "dwc": "dwc.zip", "camtrap-dp": "", "megadetector": "megadetector.json", "vectors": "vectors.parquet"}


@dataclass
class ExportSources:
    """What an export reads: settings (roots, Darwin Core options, package metadata), the session log (labels),
    photos by id, and the camera-trap store (None where the catalog has none)."""

    settings: Any
    log: SessionLog | None
    photos: Callable[[Sequence[int]], list[Photo]]
    camtrap: Any = None
    all_ids: Callable[[], Sequence[int]] | None = None  # every photo id of the catalog (megadetector)
    # (model id, photo ids, their vectors) of the index searched now (vectors); None where not offered
    vectors: Callable[[], tuple[str, Any, Any]] | None = None


@dataclass(frozen=True)
class Exported:
    path: Path
    rows: int  # rows written (labels, occurrences, media of a package, images of a detections file)
    format: str
    notices: tuple[str, ...] = ()
    summary: str = ""  # what was written, in words ('' : `rows` says it)


def check_format(fmt: str) -> str:
    fmt = (fmt or "").strip().lower()
    if fmt not in FORMATS:
        raise InputError(f"Unknown export format {fmt!r}", "choose one of: " + ", ".join(FORMATS))
    return fmt


def query_labels(source: SessionLog, query: str, annotator: str = "") -> list[Label]:
    """The labels of `query`, everyone's or one annotator's (names matched as core.labels does); InputError
    when there are none."""
    if not (query or "").strip():
        raise InputError("No query to export", "type the query whose labels you want, or load its photos")
    who = bounds.name(annotator or "")
    labels = source.labels(query=query)
    if who:
        labels = [lb for lb in labels if same_annotator(lb.annotator, who)]
    if not labels:
        raise InputError(f"No labels for “{query}”" + (f" by {who}" if who else ""),
                         "judge some photos of this query first")
    return labels


def check_target(fmt: str, out: Path | str) -> Path:
    """The path to write `fmt` to, refused before any work when it cannot be: a file format's path that is a
    folder, a package folder that exists and is not empty, or a place that cannot be written."""
    path = Path(out).expanduser()
    if fmt in FOLDER_FORMATS:
        if path.exists() and not path.is_dir():
            raise InputError(f"{path} is a file; a {fmt} package is written as a new folder",
                             "give --out the name of a new (or empty) folder")
        if path.is_dir() and any(path.iterdir()):
            raise InputError(f"The folder {path} exists and is not empty; a {fmt} package is written into a new "
                             "folder", "give --out a new folder name, or empty that folder first")
    elif path.is_dir():
        raise InputError(f"{path} is a folder; {fmt} is written as one file",
                         f"give --out a file name, e.g. {path / ('export.' + SUFFIX[fmt])}")
    parent = next((p for p in [path, *path.parents] if p.exists()), None)
    if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{path} cannot be written: {parent or path} is not a folder this user may write to",
                         "choose an --out path inside a folder you can write to")
    return path


def export(sources: ExportSources, fmt: str, out: Path | str, query: str = "", annotator: str = "",
           scores: dict[int, float] | None = None) -> Exported:
    """Write `fmt` to `out`. Label formats need `query` (and take `annotator`); camtrap-dp without a query
    writes every camera-trap photo with its observations, with one the photos its labels judged relevant."""
    fmt = check_format(fmt)
    path = check_target(fmt, out)
    if fmt in LABEL_FORMATS and not (query or "").strip():
        raise InputError(f"The {fmt} export writes a query's labels: no query was given",
                         "name the query whose labels you want (--query \"...\")")
    if (annotator or "").strip() and not (query or "").strip():
        raise InputError("An annotator was named without a query: an annotator's labels belong to a query",
                         "add --query \"...\" (the photos that annotator judged relevant), or leave out --annotator")
    try:
        if fmt in LABEL_FORMATS:
            return _labels(sources, fmt, path, query, annotator, scores or {})
        if fmt in COLLECTION_FORMATS:
            return _vectors(sources, path, query, annotator)
        return _camtrap(sources, fmt, path, query, annotator)
    except EcoLensError:
        raise
    except OSError as exc:  # a disk or permission failure while writing: the path and the reason
        log.warning("export to %s failed: %s", path, exc)
        raise InputError(f"{path} could not be written ({exc.strerror or exc})",
                         "choose an --out path on a disk with room, in a folder you can write to") from exc


def _labels(sources: ExportSources, fmt: str, path: Path, query: str, annotator: str,
            scores: dict[int, float]) -> Exported:
    if sources.log is None:
        raise InputError("No labels can be read here", "label photos in the web app's Label view first")
    labels = query_labels(sources.log, query, annotator)
    photos = {p.id: p for p in sources.photos(sorted({lb.photo_id for lb in labels}))}
    notices: list[str] = []  # a Darwin Core export's warnings (licences GBIF cannot take, no contact)
    dwc = {**dwc_options(sources, list(photos)), "notices": notices} if fmt == "dwc" else {}
    rows = export_labels(labels, fmt, path, photos=photos, scores=scores,
                         roots=collection_roots(sources.settings), dwc=dwc)
    return Exported(path, rows, fmt, tuple(notices))


def few(notices: Sequence[str], shown: int = 3) -> list[str]:
    """At most `shown` notices, and how many more there are (the log file names each): what a page shows of
    an export's warnings, one per record, without a toast per record."""
    more = len(notices) - shown
    return list(notices[:shown]) + ([f"... and {more} more like these (data/logs/ecolens.log names each)"]
                                    if more > 0 else [])


def _vectors(sources: ExportSources, path: Path, query: str, annotator: str) -> Exported:
    """The collection's vectors as companion vectors (core.ingest.companion_writer)."""
    from core.ingest import companion_writer

    if (query or "").strip() or (annotator or "").strip():
        raise InputError("The vectors export writes the whole collection's vectors: a query or an annotator does "
                         "not apply to it", "leave out --query and --annotator")
    if sources.vectors is None:
        raise InputError("The vectors of the collection cannot be read here", "use `python app.py export vectors`")
    model_id, ids, matrix = sources.vectors()
    done = companion_writer.write(path, model_id, ids, matrix, sources.photos)
    notices = (f"{done.skipped} photos carry no {done.key} and are not in the file",) if done.skipped else ()
    summary = (f"{done.rows} vectors of {model_id} keyed by {done.key} (upload it to your dataset repository as "
               "vectors/SPLIT.parquet and set vectors_repo: docs/deployment.md)")
    return Exported(path, done.rows, "vectors", notices, summary)


def camera_trap_ids(store: Any, photo_ids: Sequence[int]) -> frozenset[int]:
    """Which of `photo_ids` are camera-trap frames of the data model (a capture in a deployment)."""
    if store is None or not photo_ids:
        return frozenset()
    return frozenset(pid for pid, c in store.captures(list(photo_ids)).items() if c.deployment_id is not None)


def individual_counts(store: Any, photos: Sequence[Photo]) -> dict[int, int]:
    """photo id -> individuals counted on the frame by its camera-trap observations, of the photo's taxon where
    both name one (observations of another species on the same frame are not this occurrence's): a person's
    count of the frame (the newest person's media-level observations, summed; people's answers are not added
    up), else a person's count of its event (the newest: people identifying one event give answers, not
    individuals to add up; it is the event's MaxN),
    else the frame's other media-level observations, else its event's; photos without a count left out."""
    if store is None or not photos:
        return {}
    ids = [int(p.id) for p in photos if p.id is not None]
    captures = store.captures(ids)
    events = sorted({c.event_id for c in captures.values() if c.event_id is not None})
    # one call: a media-level observation carries its event too (Camtrap DP's eventID), and two calls' lists added
    # together held it twice, so a frame's count was summed double
    observed = store.observations(photo_ids=ids, event_ids=events)
    out: dict[int, int] = {}
    for p in photos:
        name = p.scientific_name.strip().lower()
        event = captures[p.id].event_id if p.id in captures else None

        def counted(level: str, *, _p=p, _event=event, _name=name) -> list[Observation]:
            return [o for o in observed if o.level == level and o.count is not None
                    and (o.photo_id == _p.id if level == "media" else (_event is not None and o.event_id == _event))
                    and (not _name or not o.scientific_name or o.scientific_name.strip().lower() == _name)]
        media, whole = counted("media"), counted("event")
        people = [o for o in media if o.method == "human"]
        said = sorted((o for o in whole if o.method == "human"), key=lambda o: (o.classified_at or "", o.id or 0))
        if people:
            out[int(p.id)] = _newest_persons_total(people)
        elif said:
            out[int(p.id)] = said[-1].count
        elif media or whole:
            out[int(p.id)] = sum(o.count for o in media or whole)
    return out


def _newest_persons_total(people: Sequence[Observation]) -> int:
    """The newest person's count of one frame: one person's (or one unnamed import's) several boxes or
    observations of the frame are added up; two people's are two answers to the same question, so the one who
    said theirs last (their newest classifiedAt, then the later stored) gives the frame's count."""
    by: dict[str, list[Observation]] = {}
    for o in people:
        by.setdefault((o.annotator or o.classified_by or "").strip().lower(), []).append(o)
    newest = max(by.values(), key=lambda said: max((o.classified_at or "", o.id or 0) for o in said))
    return sum(o.count for o in newest)


def dwc_options(sources: ExportSources, photo_ids: Sequence[int]) -> dict:
    """darwincore.write_archive's options: the settings' (core.darwincore.options), which photos are
    camera-trap frames (basisOfRecord MachineObservation) and how many individuals each shows."""
    counts = individual_counts(sources.camtrap, sources.photos(list(photo_ids))) if sources.camtrap else {}
    return {**darwincore.options(sources.settings), "camera_traps": camera_trap_ids(sources.camtrap, photo_ids),
            "counts": counts}


def relevant_ids(sources: ExportSources, query: str, annotator: str = "") -> list[int]:
    """The photos `query`'s labels judged relevant (an adjudicator's word deciding), in first-labelled order."""
    labels = query_labels(sources.log, query, annotator) if sources.log is not None else []
    from core.labels import relevant_occurrences

    found = relevant_occurrences(labels, {lb.photo_id: Photo(path="", id=lb.photo_id) for lb in labels})
    return list(dict.fromkeys(int(o.photo.id) for o in found))


def _camtrap(sources: ExportSources, fmt: str, path: Path, query: str, annotator: str) -> Exported:
    if sources.camtrap is None:
        raise InputError(f"This catalog has no camera-trap data to write as {fmt}",
                         "ingest a Camtrap DP package, a camera card or a MegaDetector results file first")
    ids = relevant_ids(sources, query, annotator) if (query or "").strip() else None
    if ids is not None and not ids:
        raise InputError(f"No photo of “{query}” is judged relevant",
                         f"a {fmt} export with --query holds the photos judged relevant: judge some first")
    if fmt == "camtrap-dp":
        from core.camtrap import camtrapdp_write

        written = camtrapdp_write.write_package(path, sources.camtrap, sources.photos, sources.settings, ids)
        summary = (f"{written.deployments} deployments, {written.media} media ({written.copied} files copied), "
                   f"{written.observations} observations")
        return Exported(path, written.media, fmt, tuple(written.notices), summary)
    return _megadetector(sources, path, ids)


def _megadetector(sources: ExportSources, path: Path, ids: list[int] | None) -> Exported:
    """The detections as a MegaDetector results file (core.camtrap.megadetector), each frame named relative to
    the folder all of them lie in (the folder to give `ingest FOLDER --detections FILE`); a URL as it is."""
    from core.camtrap.megadetector import write_megadetector
    from core.camtrap.observation_boxes import is_imported

    candidates = list(ids) if ids is not None else [int(i) for i in (sources.all_ids() if sources.all_ids else [])]
    captures = sources.camtrap.captures(candidates)
    # only a detector's results: boxes made from imported Camtrap DP observations are not a detector's
    detections = {pid: kept for pid, dets in sources.camtrap.detections(candidates).items()
                  if (kept := [d for d in dets if not is_imported(d)])}
    looked = sorted(pid for pid in set(captures) | set(detections)
                    if pid in detections or captures[pid].detector_looked)
    if not looked:
        raise InputError("No photo to export has been looked at by a detector",
                         "ingest a folder with its results: `python app.py ingest FOLDER --detections FILE.json`")
    photos = {p.id: p for p in sources.photos(looked)}
    local = [Path(p.path).resolve().parent for p in photos.values() if p.path and "://" not in p.path]
    root = Path(os.path.commonpath([str(f) for f in local])) if local else None

    def name(p: Photo) -> str:
        if root is None or not p.path or "://" in p.path:
            return p.path
        return Path(p.path).resolve().relative_to(root).as_posix()
    frames = [(name(photos[pid]), detections.get(pid, [])) for pid in looked if pid in photos]
    write_megadetector(frames, path)
    notices = (f"file names are relative to {root}: `python app.py ingest {root} --detections {path}` reads "
               "them back",) if root is not None else ()
    return Exported(path, len(frames), "megadetector", notices)
