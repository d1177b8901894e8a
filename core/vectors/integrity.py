"""Is an index file what was written? A checksum file beside each FAISS file (size, SHA-256, vector count,
dimension), FAISS's own header parsing, and a look at the vectors themselves: the flat copy holds unit
vectors, so a truncated file, random bytes or a flipped exponent bit (scores like 2.4e37) all show.

The IVF lists of an on-disk index (the .ivfdata file) change in place and are not checksummed; their count
is checked against the flat copy instead."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np

log = logging.getLogger(__name__)

NORM_TOLERANCE = 1e-2  # stored rows are L2-normalised; anything further from 1 was not written by us
_CHUNK = 1 << 20


@dataclass
class Damage:
    path: Path
    reason: str


def checksum_path(path: Path) -> Path:
    return Path(str(path) + ".check")


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def write_checked(index: faiss.Index, path: Path) -> None:
    """Write `index` to `path` atomically with its checksum record. The file is hashed before it is renamed
    into place and the record follows the rename at once, so a reader sees a mismatch only for the moment
    between two renames (read_checked looks again before calling it damage)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        faiss.write_index(index, tmp)
        record = {"bytes": os.path.getsize(tmp), "sha256": file_sha256(Path(tmp)), "ntotal": int(index.ntotal),
                  "dim": int(index.d)}
        target = checksum_path(path)
        rec_tmp = target.with_name(target.name + ".tmp")
        rec_tmp.write_text(json.dumps(record))
        os.replace(tmp, path)
        os.replace(rec_tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_checked(path: Path, dim: int, *, flags: int = 0,
                 attempts: int = 3) -> tuple[faiss.Index | None, Damage | None]:
    """(index, None) when `path` is sound, (None, Damage) when it is not, (None, None) when it is absent.
    A mismatch is looked at again after a pause: a writer may be between its two renames."""
    for attempt in range(attempts):
        index, damage = _read_checked_once(path, dim, flags)
        if damage is None or attempt == attempts - 1:
            return index, damage
        time.sleep(0.3)
    return None, None


def _read_checked_once(path: Path, dim: int, flags: int) -> tuple[faiss.Index | None, Damage | None]:
    path = Path(path)
    if not path.exists():
        return None, None
    size = path.stat().st_size
    if size == 0:
        return None, Damage(path, "the file is empty")
    record = None
    check = checksum_path(path)
    if check.exists():
        try:
            record = json.loads(check.read_text())
        except (OSError, ValueError):
            log.warning("unreadable checksum file %s; checking the index by its content only", check)
    if record is not None:
        if record.get("bytes") != size:
            return None, Damage(path, f"the file has {size} bytes, {record.get('bytes')} were written "
                                      "(truncated or overwritten)")
        if record.get("sha256") != file_sha256(path):
            return None, Damage(path, "its checksum differs from the one recorded when it was written "
                                      "(changed bytes)")
    try:
        index = faiss.read_index(str(path), flags)
    except Exception as exc:  # FAISS raises RuntimeError with its C++ message for any malformed file
        return None, Damage(path, f"FAISS cannot read it ({str(exc).splitlines()[0][:160]})")
    if index.d != dim:
        return None, Damage(path, f"it holds vectors of dimension {index.d}, the embedder gives {dim}")
    if record is not None and record.get("ntotal") != index.ntotal:
        return None, Damage(path, f"it holds {index.ntotal} vectors, {record.get('ntotal')} were written")
    reason = _content_problem(index)
    if reason:
        return None, Damage(path, reason)
    return index, None


def _content_problem(index: faiss.Index) -> str:
    """A reason when the stored vectors or ids cannot be ours; '' when they look right."""
    if isinstance(index, faiss.IndexIDMap2):
        ids = faiss.vector_to_array(index.id_map)
        if len(ids) != index.ntotal or (len(ids) and ids.min() < 0):
            return "its photo ids are inconsistent"
        inner = faiss.downcast_index(index.index)
        if isinstance(inner, faiss.IndexFlat):
            n = int(inner.ntotal)
            mat = faiss.rev_swig_ptr(inner.get_xb(), n * index.d).reshape(n, index.d) if n else None
            for i in range(0, n, 65_536):
                norms = np.linalg.norm(mat[i:i + 65_536].astype(np.float64), axis=1)
                bad = ~np.isfinite(norms) | (np.abs(norms - 1.0) > NORM_TOLERANCE)
                if bad.any():
                    return (f"{int(bad.sum())} or more stored vectors are not unit length (e.g. norm "
                            f"{norms[bad][0]:.3g}): flipped bits or foreign data")
    else:
        ivf = faiss.try_extract_index_ivf(index)
        if ivf is not None:
            centroids = ivf.quantizer.reconstruct_n(0, ivf.nlist)
            if not np.isfinite(centroids).all() or np.abs(centroids).max() > 1e3:
                return "its IVF centroids are not finite or far too large: flipped bits or foreign data"
    return ""
