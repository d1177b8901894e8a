"""Where each vector set's FAISS index lives, the start-up check that the files are sound and agree with
the catalog, and what is done when they are not.

Damage is repaired automatically where nothing can be lost: a damaged approximate twin is set aside and
rebuilt from the flat copy; a damaged flat copy is set aside and written again from the sound copy a running
server holds in memory (`known`: the index it loaded before the file changed), or rebuilt from an HNSW twin's
full vectors, or else its photos are marked for embedding again (by `python app.py repair` or the next ingest). A
damaged file is moved aside (never deleted) and every action is reported as a notice and a log line."""
from __future__ import annotations

import fcntl
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import faiss
import numpy as np

from core.contracts.catalog import Catalog, VectorSet
from core.vectors.index import VectorIndex, new_flat
from core.vectors.integrity import Damage, checksum_path, read_checked, write_checked

log = logging.getLogger(__name__)

REPAIR_HINT = "run `python app.py repair` to embed them again now (any later ingest also does it)"


@dataclass
class Reconciliation:
    """What the check found and repaired."""

    marked: list[int] = field(default_factory=list)  # in the index file but not recorded: now recorded
    unmarked: list[int] = field(default_factory=list)  # recorded but missing from the index: to re-embed
    removed: list[int] = field(default_factory=list)  # in the index but not in the catalog: dropped
    damage: list[str] = field(default_factory=list)  # what was wrong with the files and what was done
    repair_needed: bool = False  # damage found by a reader that may not write: `app.py repair` fixes it

    def notices(self) -> list[str]:
        out = list(self.damage)
        if self.marked:
            out.append(f"index check: {len(self.marked)} indexed photo(s) were not recorded in the catalog; "
                       "recorded now")
        if self.unmarked:
            out.append(f"index check: {len(self.unmarked)} photo(s) recorded as indexed were missing from the "
                       f"index; they will be embedded again by the next ingest ({REPAIR_HINT})")
        if self.removed:
            out.append(f"index check: {len(self.removed)} vector(s) without a catalog photo were removed")
        return out


class IndexStore:
    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)
        self.root = self.data_dir / "index"

    def path_for(self, vs: VectorSet) -> Path:
        return self.root / f"vectors-{vs.id}.faiss"

    def store_path_for(self, vs: VectorSet) -> Path:
        """The float16 re-scoring store of a compressed index (core.vectors.half_store)."""
        return self.root / f"vectors-{vs.id}.faiss.f16"

    def lists_path_for(self, vs: VectorSet) -> Path:
        """The file of an on-disk IVF index's inverted lists."""
        return self.root / f"vectors-{vs.id}.faiss.ivfdata"

    def save(self, vs: VectorSet, index: VectorIndex) -> None:
        """Write the index atomically, each file with its checksum record."""
        path = self.path_for(vs)
        index.save(path, write_checked)
        for _, part in index.parts(path):
            if not part.exists() and checksum_path(part).exists():
                checksum_path(part).unlink()

    def open(self, vs: VectorSet, catalog: Catalog, *, writer: bool = False,
             known: VectorIndex | None = None) -> tuple[VectorIndex, Reconciliation]:
        """Load the index of `vs`, check it, repair what can be repaired without loss, and make it agree with
        the catalog. `writer`: the caller holds the ingest lock; others take it for a repair, or, if an
        ingest is running, only report. `known`: a sound index of `vs` loaded earlier (a running server's),
        the first source for a damaged flat copy (photos added since it was loaded are then embedded again)."""
        report = Reconciliation()
        path, approx_path = self.path_for(vs), Path(str(self.path_for(vs)) + ".approx")
        flat, flat_damage = read_checked(path, vs.dim)
        approx, approx_damage = read_checked(approx_path, vs.dim, flags=faiss.IO_FLAG_ONDISK_SAME_DIR)
        if approx is not None and flat is not None and approx.ntotal != flat.ntotal:
            approx_damage, approx = Damage(approx_path, f"it holds {approx.ntotal} vectors, the flat copy "
                                                        f"{flat.ntotal} (an interrupted write)"), None
        damaged = [d for d in (flat_damage, approx_damage) if d is not None]
        if not damaged:
            index = VectorIndex(vs.dim, flat, approx)
            index.attach_store(self.store_path_for(vs), writer=writer)
            return index, self._reconcile(index, vs, catalog, writer)
        with _repair_lock(self.data_dir, writer) as may_write:
            if not may_write:
                report.repair_needed = True
                for d in damaged:
                    log.error("index file %s is damaged: %s (an ingest is running; not repaired now)", d.path, d.reason)
                    report.damage.append(f"index check: {d.path.name} is damaged ({d.reason}); an ingest is "
                                         "running, so it was not repaired now: run `python app.py repair` after it")
                some = flat is not None or approx is not None
                index = VectorIndex(vs.dim, flat, approx) if some else VectorIndex(vs.dim)
                return index, report
            index = self._repair(vs, flat, approx, flat_damage, approx_damage, report, known)
            self.save(vs, index)
            rec = self._reconcile(index, vs, catalog, True)
            rec.damage = report.damage
            return index, rec

    def _repair(self, vs, flat, approx, flat_damage, approx_damage, report: Reconciliation,
                known: VectorIndex | None = None) -> VectorIndex:
        for d in (flat_damage, approx_damage):
            if d is not None:
                aside = _move_aside(d.path)
                log.error("index file %s is damaged: %s; moved to %s", d.path, d.reason, aside)
                report.damage.append(f"index check: {d.path.name} was damaged ({d.reason}); it was moved to "
                                     f"{aside.name}")
        if flat_damage is None:
            if approx_damage is not None:
                report.damage.append("index check: searches use the exact flat index until the approximate index "
                                     "is rebuilt from it (by the next ingest or `python app.py repair`)")
            return VectorIndex(vs.dim, flat, approx) if flat is not None else VectorIndex(vs.dim)
        if known is not None and known.has_flat:
            report.damage.append(f"index check: the flat index was written again from the copy this server had "
                                 f"loaded ({len(known)} photos)")
            return VectorIndex(vs.dim, known.flat, approx if approx_damage is None else known.approx)
        if approx is not None and _exact_vectors(approx):
            index = VectorIndex(vs.dim, None, approx)
            rebuilt = new_flat(vs.dim)
            rebuilt.add_with_ids(index.matrix_from_approx(), index.ids())
            report.damage.append(f"index check: the flat index was rebuilt from the {index.approx_kind} index's "
                                 f"stored vectors ({rebuilt.ntotal} photos)")
            return VectorIndex(vs.dim, rebuilt, approx)
        if approx is not None:  # IVF-PQ codes are lossy: not a source for exact vectors; retrained afterwards
            report.damage.append("index check: the ivfpq index keeps only compressed vectors, so it is rebuilt "
                                 "after the photos are embedded again")
        report.damage.append(f"index check: no stored copy of the vectors is left; the photos must be embedded "
                             f"again ({REPAIR_HINT})")
        return VectorIndex(vs.dim)

    def _reconcile(self, index: VectorIndex, vs: VectorSet, catalog: Catalog, writer: bool) -> Reconciliation:
        report = reconcile(index, vs, catalog)
        if report.removed and (writer or _lock_free(self.data_dir)):
            self.save(vs, index)
        return report


def _exact_vectors(approx: faiss.Index) -> bool:
    """HNSW keeps full-precision vectors; IVF-PQ keeps lossy codes."""
    return isinstance(approx, faiss.IndexIDMap2) and "HNSW" in type(faiss.downcast_index(approx.index)).__name__


def _move_aside(path: Path) -> Path:
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    path.replace(aside)
    check = checksum_path(path)
    if check.exists():
        check.replace(Path(str(aside) + ".check"))
    return aside


class _repair_lock:
    """The ingest lock, taken without waiting unless the caller already holds it (then: may write)."""

    def __init__(self, data_dir: Path, held: bool):
        self.path, self.held, self.fh = Path(data_dir) / "ingest.lock", held, None

    def __enter__(self) -> bool:
        if self.held:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "w")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            self.fh.close()
            self.fh = None
            return False

    def __exit__(self, *exc) -> None:
        if self.fh is not None:
            fcntl.flock(self.fh, fcntl.LOCK_UN)
            self.fh.close()


def _lock_free(data_dir: Path) -> bool:
    with _repair_lock(data_dir, False) as free:
        return free


def reconcile(index: VectorIndex, vs: VectorSet, catalog: Catalog) -> Reconciliation:
    """The index file is the truth about which vectors exist: the catalog's records follow it."""
    # (sorted int64 arrays, not sets of Python ints: at millions of photos the sets took ~70 bytes a photo)
    in_index = np.unique(index.ids())
    recorded = np.unique(np.asarray(catalog.indexed_id_array(vs.id), dtype=np.int64))
    report = Reconciliation()
    if np.array_equal(in_index, recorded):
        return report
    orphans = np.setdiff1d(in_index, recorded, assume_unique=True).tolist()
    if orphans:
        known = {p.id for p in catalog.get_photos(orphans)}
        report.removed = sorted(set(orphans) - known)
        report.marked = sorted(set(orphans) & known)
        if report.removed:
            index.remove(report.removed)
        if report.marked:
            catalog.mark_indexed(vs.id, report.marked)
    report.unmarked = np.setdiff1d(recorded, in_index, assume_unique=True).tolist()
    if report.unmarked:
        catalog.unmark_indexed(vs.id, report.unmarked)
    return report
