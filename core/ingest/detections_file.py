"""`ingest FOLDER --detections FILE.json`: a MegaDetector / SpeciesNet results file applied to the photos of
FOLDER that are in the catalog (after the folder's own ingest, so new frames are there and known ones are not
embedded again).

Each entry's file is found under FOLDER (core.camtrap.megadetector.match_folder) and its photo by content
hash; its boxes replace that model's earlier boxes on the photo (unchanged boxes are left alone, so their
crops are not embedded again); every frame the detector processed is marked as looked at, so that one
without a box at or above `detection_threshold` can be called empty. Entries that match no photo, failures
and skipped entries are reported with counts and the first few names."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from core.camtrap.megadetector import Entry, Results, match_folder
from core.ingest.sources import content_hash

log = logging.getLogger(__name__)

NAMES_SHOWN = 5
MAX_FILE_BYTES = 1 << 30  # a photo larger than this is not hashed here (the folder's ingest refused it anyway)


@dataclass
class Applied:
    frames: int = 0  # entries matched to a catalog photo (failures excluded)
    boxes: int = 0  # boxes written (new or changed)
    unchanged: int = 0  # frames whose boxes were already stored
    empty: int = 0  # frames with no box at or above the threshold
    unmatched: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    removed_ids: list[int] = field(default_factory=list)  # earlier boxes replaced (their crops are dropped)
    notices: list[str] = field(default_factory=list)

    def summary(self, source: str, threshold: float) -> list[str]:
        out = [f"detections from {source}: {self.frames} frame(s) matched, {self.boxes} box(es) stored"
               + (f", {self.unchanged} frame(s) already had the same boxes" if self.unchanged else "")
               + f"; {self.empty} frame(s) have no box at or above {threshold:g} (empty)"]
        if self.unmatched:
            one = len(self.unmatched) == 1
            out.append(f"{len(self.unmatched)} entr{'y' if one else 'ies'} of the detections file "
                       f"match{'es' if one else ''} no photo of the folder: {_names(self.unmatched)} (paths in "
                       "the file must be "
                       "relative to the folder given to ingest, or absolute paths inside it)")
        if self.failures:
            out.append(f"the detector failed on {len(self.failures)} frame(s), which are not called empty: "
                       + _names([f"{n} ({r})" for n, r in self.failures]))
        return out + self.notices


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")


def photo_ids_for(folder: Path, names: Sequence[str], catalog) -> dict[str, int]:
    """Relative name -> catalog photo id, by the file's content hash (the catalog's own identity)."""
    hashes: dict[str, str] = {}
    for name in names:
        path = folder / name
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            hashes[name] = content_hash(path.read_bytes())
        except OSError:
            continue
    ids = catalog.ids_for_hashes(list(set(hashes.values())))
    return {name: ids[h] for name, h in hashes.items() if h in ids}


def apply_results(results: Results, folder: str | Path, catalog, store, threshold: float) -> Applied:
    """Write the results' boxes and looked-at marks for the photos of `folder` (store: CamtrapStore)."""
    from core.contracts.camtrap import Detection

    folder = Path(folder)
    out = Applied(notices=list(results.notices))
    out.failures = [(e.file, e.failure or "") for e in results.failures]
    out.notices += [f"{name} was skipped: {why}" for name, why in results.skipped[:NAMES_SHOWN]]
    found, missing = match_folder(results, folder)
    failed = {e.file for e in results.failures}
    out.unmatched = [name for name in missing if name not in failed]
    looked = {name: e for name, e in found.items() if not e.failure}
    ids = photo_ids_for(folder, list(looked), catalog)
    out.unmatched += [name for name in looked if name not in ids]
    stored = store.detections(list(ids.values()))
    seen = {i for i, c in store.captures(list(ids.values())).items() if c.detector_looked}
    writes: list = []
    for name, photo_id in ids.items():
        entry: Entry = looked[name]
        out.frames += 1
        if not any(b.conf >= threshold for b in entry.boxes):
            out.empty += 1
        mine = [d for d in stored.get(photo_id, []) if d.model == results.model]
        if _same(mine, entry) and (mine or photo_id in seen):  # a first look at an empty frame is not 'unchanged'
            out.unchanged += 1
            continue
        out.removed_ids += [int(d.id) for d in mine if d.id is not None]
        writes += [Detection(x=b.x, y=b.y, w=b.w, h=b.h, category=b.category, conf=b.conf, model=results.model,
                             photo_id=photo_id, label=b.label, label_conf=b.label_conf) for b in entry.boxes]
        if not entry.boxes and mine:  # the store replaces a model's boxes only by new ones: say so
            out.notices.append(f"{name} has no box in this file but kept {len(mine)} earlier box(es) of the same "
                               "model")
    if writes:
        store.add_detections(writes, replace_model=results.model)
        out.boxes = len(writes)
    store.mark_looked(list(ids.values()))
    log.info("detections file applied to %s: %d frames, %d boxes, %d unmatched, %d failures", folder, out.frames,
             out.boxes, len(out.unmatched), len(out.failures))
    return out


def _same(stored: list, entry: Entry) -> bool:
    def key(x, y, w, h, category, conf, label):
        return (round(x, 4), round(y, 4), round(w, 4), round(h, 4), category, round(conf, 4), label or None)

    return sorted(key(d.x, d.y, d.w, d.h, d.category, d.conf, d.label) for d in stored) == \
        sorted(key(b.x, b.y, b.w, b.h, b.category, b.conf, b.label) for b in entry.boxes)
