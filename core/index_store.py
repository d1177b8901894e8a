"""Where each vector set's FAISS index lives, and the start-up check that index and catalog agree."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core.catalog import Catalog, VectorSet
from core.index import VectorIndex


@dataclass
class Reconciliation:
    """What the check found and repaired."""

    marked: list[int] = field(default_factory=list)  # in the index file but not recorded: now recorded
    unmarked: list[int] = field(default_factory=list)  # recorded but missing from the index: to re-embed
    removed: list[int] = field(default_factory=list)  # in the index but not in the catalog: dropped

    def notices(self) -> list[str]:
        out = []
        if self.marked:
            out.append(f"index check: {len(self.marked)} indexed photo(s) were not recorded in the catalog; recorded now")
        if self.unmarked:
            out.append(f"index check: {len(self.unmarked)} photo(s) recorded as indexed were missing from the "
                       "index; they will be embedded again by the next ingest")
        if self.removed:
            out.append(f"index check: {len(self.removed)} vector(s) without a catalog photo were removed")
        return out


class IndexStore:
    def __init__(self, data_dir: Path):
        self.root = Path(data_dir) / "index"

    def path_for(self, vs: VectorSet) -> Path:
        return self.root / f"vectors-{vs.id}.faiss"

    def open(self, vs: VectorSet, catalog: Catalog) -> tuple[VectorIndex, Reconciliation]:
        """Load the index of `vs` and make it agree with the catalog (repairs are saved and reported)."""
        index = VectorIndex.load(self.path_for(vs), vs.dim)
        report = reconcile(index, vs, catalog)
        if report.removed:
            index.save(self.path_for(vs))
        return index, report


def reconcile(index: VectorIndex, vs: VectorSet, catalog: Catalog) -> Reconciliation:
    """The index file is the truth about which vectors exist: the catalog's records follow it."""
    in_index = {int(i) for i in index.ids()}
    recorded = catalog.indexed_ids(vs.id)
    report = Reconciliation()
    orphans = in_index - recorded
    if orphans:
        known = {p.id for p in catalog.get_photos(sorted(orphans))}
        report.removed = sorted(orphans - known)
        report.marked = sorted(orphans & known)
        if report.removed:
            index.remove(report.removed)
        if report.marked:
            catalog.mark_indexed(vs.id, report.marked)
    report.unmarked = sorted(recorded - in_index)
    if report.unmarked:
        catalog.unmark_indexed(vs.id, report.unmarked)
    return report
