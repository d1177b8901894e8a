"""Checking and repairing the vector indexes (what `python app.py repair` runs).

The check reads every vector set's files (checksum, FAISS header, the vectors themselves) and compares the
vector counts with the catalog, writing nothing. The repair opens each index through IndexStore.open, which
sets damaged files aside and rebuilds what can be rebuilt from stored vectors, then embeds again the
current embedder's photos that have no vector (re-embedding), and trains the approximate index again when
asked (or when it was lost)."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import faiss

from core.contracts.catalog import Catalog
from core.vectors.index_store import IndexStore
from core.vectors.integrity import read_checked

log = logging.getLogger(__name__)


@dataclass
class IndexHealth:
    vector_set_id: int
    model_id: str
    vectors: int  # in the flat copy (or the approximate index when there is no flat copy)
    recorded: int  # photos the catalog records as having a vector in this set
    photos: int  # photos in the catalog
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        return {"vector_set": self.vector_set_id, "model": self.model_id, "vectors": self.vectors,
                "recorded_in_catalog": self.recorded, "catalog_photos": self.photos, "problems": self.problems,
                "ok": self.ok}


def check_indexes(catalog: Catalog, store: IndexStore, current_model: str = "") -> list[IndexHealth]:
    """The state of every vector set's index files, read-only. For the current embedder's set, catalog photos
    without a vector count as a problem too (searches would miss them)."""
    out = []
    photos = catalog.count()
    for vs in catalog.vector_sets():
        path = store.path_for(vs)
        flat, flat_damage = read_checked(path, vs.dim)
        approx, approx_damage = read_checked(Path(str(path) + ".approx"), vs.dim,
                                             flags=faiss.IO_FLAG_ONDISK_SAME_DIR)
        health = IndexHealth(vs.id, vs.model_id, 0, len(catalog.indexed_ids(vs.id)), photos)
        for d in (flat_damage, approx_damage):
            if d is not None:
                health.problems.append(f"{d.path.name} is damaged: {d.reason}")
        store_of = flat if flat is not None else approx
        health.vectors = int(store_of.ntotal) if store_of is not None else 0
        if flat is not None and approx is not None and approx.ntotal != flat.ntotal:
            health.problems.append(f"the approximate index holds {approx.ntotal} vectors, the flat copy "
                                   f"{flat.ntotal}")
        if flat_damage is None and approx_damage is None and health.vectors != health.recorded:
            health.problems.append(f"the index holds {health.vectors} vectors, the catalog records "
                                   f"{health.recorded} as indexed")
        missing = health.photos - health.recorded
        if vs.model_id == current_model and missing > 0 and not health.problems:
            missing = len(catalog.unindexed_ids(vs.id))  # not the media kept without a file (nothing to embed)
        if vs.model_id == current_model and missing > 0 and not health.problems:
            health.problems.append(f"{missing} catalog photo(s) have no vector from the current embedder "
                                   "(searches miss them until they are embedded)")
        out.append(health)
    return out


def repair_indexes(catalog: Catalog, store: IndexStore, ingestor, *, retrain: bool = False,
                   progress=None) -> tuple[list[str], object]:
    """Repair every vector set (notices), then re-embed the current embedder's photos without a vector and
    (re)build its approximate index. Returns (notices, the re-embedding's IngestReport)."""
    notices: list[str] = []
    current = ingestor.embedder.model_id
    for vs in catalog.vector_sets():
        if vs.model_id == current:
            continue  # opened, repaired and completed below, under the ingest lock
        _, rec = store.open(vs, catalog)
        notices += [f"{vs.model_id}: {n}" for n in rec.notices()]
        missing = len(catalog.unindexed_ids(vs.id))
        if missing:
            notices.append(f"{vs.model_id}: {missing} photo(s) have no vector from this model; set embedder to it "
                           "and run `python app.py repair` again to embed them")
    report = ingestor.reembed(progress, retrain=retrain)
    notices += report.notices
    log.info("repair: %d photo(s) embedded again, %d skipped", report.reembedded, len(report.skipped))
    return notices, report
