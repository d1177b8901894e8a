"""The crop index of one vector set: every detection at or above the threshold embedded on its own, searched
beside the whole frames (issue 34, "search inside the animal").

It is the photos' own index class (core.vectors.index.VectorIndex, exact flat) with detection ids as FAISS
ids, written with the same checksum records (core.vectors.integrity), plus a side table (crops-N.owners.npy: detection
id, photo id, box x, y, w, h, detector confidence) that turns a crop back into its photo and box, and leaves out boxes
under a raised detection_threshold, without a database query at search time. Which detections have a vector is recorded
in the store (crop_vectors), after the files are written, as photo vectors are."""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from core.vectors.index import VectorIndex
from core.vectors.integrity import read_checked, write_checked

log = logging.getLogger(__name__)

COLUMNS = 7  # of the side table
CROP_DEPTH = 3  # crops asked per photo wanted: a photo's several boxes can fill the short list


class CropIndex:
    def __init__(self, root: Path, vector_set_id: int, dim: int):
        self.path = Path(root) / f"crops-{vector_set_id}.faiss"
        self.owners_path = Path(root) / f"crops-{vector_set_id}.owners.npy"
        self.dim = dim
        self.index = VectorIndex(dim)
        self.table = np.zeros((0, COLUMNS), np.float64)  # detection id, photo id, x, y, w, h, conf; by detection id
        self.damage: str | None = None
        self._stamp: tuple | None = None

    # ---- files ------------------------------------------------------------------------------------
    def load(self) -> "CropIndex":
        """Read the files (absent: empty). A damaged or disagreeing pair is set aside as empty, with
        `damage` saying why: the crops are embedded again by the next ingest (their membership is dropped
        by the caller)."""
        self._stamp = self.stamp()
        flat, damage = read_checked(self.path, self.dim)
        table = None
        if self.owners_path.exists():
            try:
                table = np.load(self.owners_path, allow_pickle=False)
            except (OSError, ValueError) as exc:
                damage = damage or f"{self.owners_path.name} cannot be read ({exc})"
        if damage is None and flat is not None and (table is None or table.ndim != 2 or table.shape[1] != COLUMNS
                                                     or len(table) != flat.ntotal):
            damage = f"{self.owners_path.name} does not match {self.path.name} (an interrupted write)"
        if damage is not None:
            self.damage = str(getattr(damage, "reason", damage))
            log.error("crop index %s is damaged: %s; its crops will be embedded again", self.path, self.damage)
            return self
        if flat is not None:
            self.index = VectorIndex(self.dim, flat)
            self.table = table
        return self

    def save(self) -> None:
        """Write the side table, then the index (each atomically): a reader checks that they agree."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.owners_path.with_name(self.owners_path.name + ".part.npy")
        np.save(tmp, self.table, allow_pickle=False)
        os.replace(tmp, self.owners_path)
        write_checked(self.index.flat, self.path)
        self._stamp = self.stamp()

    def stamp(self) -> tuple | None:
        """(mtime, size) of the files: changed when another process's ingest wrote them."""
        try:
            a, b = os.stat(self.path), os.stat(self.owners_path)
        except OSError:
            return None
        return a.st_mtime_ns, a.st_size, b.st_mtime_ns, b.st_size

    def changed_on_disk(self) -> bool:
        return self.stamp() != self._stamp

    # ---- content ----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.table)

    def detection_ids(self) -> np.ndarray:
        return self.table[:, 0].astype(np.int64)

    def add(self, detection_ids: Sequence[int], photo_ids: Sequence[int], boxes: np.ndarray,
            vectors: np.ndarray, confs: Sequence[float] | None = None) -> None:
        """Add crops (a detection already present is replaced, so an interrupted run can add it again);
        `confs`: the detector's confidence of each (1 when not given)."""
        ids = np.asarray(detection_ids, dtype=np.int64)
        self.remove(ids[np.isin(ids, self.detection_ids())])
        self.index.add(ids, vectors)
        conf = np.ones(len(ids)) if confs is None else np.asarray(confs, np.float64)
        rows = np.column_stack([ids, np.asarray(photo_ids, np.int64), np.asarray(boxes, np.float64).reshape(-1, 4),
                                conf])
        self.table = np.concatenate([self.table, rows.astype(np.float64)])
        self.table = self.table[np.argsort(self.table[:, 0], kind="stable")]

    def remove(self, detection_ids: Sequence[int]) -> int:
        ids = np.asarray(detection_ids, dtype=np.int64)
        if not len(ids):
            return 0
        removed = self.index.remove(ids)
        self.table = self.table[~np.isin(self.detection_ids(), ids)]
        return removed

    def box(self, detection_id: int) -> tuple[int, tuple[float, float, float, float]] | None:
        """(photo id, box) of a crop, or None."""
        row = np.searchsorted(self.table[:, 0], detection_id)
        if row < len(self.table) and int(self.table[row, 0]) == int(detection_id):
            return int(self.table[row, 1]), tuple(float(v) for v in self.table[row, 2:6])
        return None

    # ---- search -----------------------------------------------------------------------------------
    def _allowed(self, rows: np.ndarray | None, min_conf: float) -> np.ndarray | None:
        """Row mask of the crops at or above `min_conf` among `rows` (a mask; None: all rows); None when that is
        every row (no selection needed)."""
        if min_conf > 0 and (self.table[:, 6] < min_conf).any():
            keep = self.table[:, 6] >= min_conf
            return keep if rows is None else (keep & rows)
        return rows

    def best(self, vector: np.ndarray, k: int, pool: np.ndarray | None = None,
             min_conf: float = 0.0) -> list[tuple[int, int, float]]:
        """(photo id, detection id, cosine) of the best crop of up to `k` photos (photos restricted to `pool`,
        crops to those of confidence at least `min_conf`: a threshold raised after they were embedded), best
        first."""
        if not len(self.table) or k <= 0:
            return []
        rows = np.isin(self.table[:, 1].astype(np.int64), pool) if pool is not None else None
        rows = self._allowed(rows, min_conf)
        crops = None
        if rows is not None:
            crops = self.table[rows, 0].astype(np.int64)
            if not len(crops):
                return []
        scores, ids = self.index.search(np.asarray(vector, np.float32)[None, :], k * CROP_DEPTH, crops)
        found = [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]
        if not found:
            return []
        rows = np.searchsorted(self.table[:, 0], [i for i, _ in found])
        out, seen = [], set()
        for (det, score), row in zip(found, rows):
            photo = int(self.table[row, 1])
            if photo not in seen:
                seen.add(photo)
                out.append((photo, det, score))
        return out[:k]

    def best_of(self, photo_ids: np.ndarray, score_of, min_conf: float = 0.0) -> np.ndarray:
        """Per photo of `photo_ids`, the best score_of(crop vectors) among its crops (-inf for a photo without
        one): Cover's dense score over frames and crops together."""
        photo_ids = np.asarray(photo_ids, dtype=np.int64)
        out = np.full(len(photo_ids), -np.inf)
        if not len(self.table) or not len(photo_ids):
            return out
        owners = self.table[:, 1].astype(np.int64)
        rows = self._allowed(np.isin(owners, photo_ids), min_conf)
        if not rows.any():
            return out
        scores = np.asarray(score_of(self.index.vectors(self.table[rows, 0].astype(np.int64))), dtype=np.float64)
        order = np.argsort(photo_ids, kind="stable")
        where = order[np.searchsorted(photo_ids, owners[rows], sorter=order)]
        np.maximum.at(out, where, scores)
        return out


def merge(frames: Sequence[tuple[int, float]], crops: Sequence[tuple[int, int, float]], k: int,
          matched: dict[int, int] | None = None) -> list[tuple[int, float]]:
    """The first-stage ranking over frames and crops: a photo's score is the better of its frame's and its best
    crop's. Photos whose crop won are recorded in `matched` (photo id -> detection id)."""
    score = dict(frames)
    via: dict[int, int] = {}
    for photo, det, s in crops:
        if s > score.get(photo, -np.inf):
            score[photo] = s
            via[photo] = det
    ranked = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    if matched is not None:
        for photo, _ in ranked:
            if photo in via:
                matched[photo] = via[photo]
    return ranked
