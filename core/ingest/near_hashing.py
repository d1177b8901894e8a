"""Near-copies at ingest (core.vectors.near_copies): every photo of the catalog without perceptual hashes gets
them (the photos just added, and those of a catalog made before migration 0012: hashed at their next ingest,
not lazily during a search; at most MOST_PER_INGEST a run, the newest first), and the report says how many of
the photos hashed are near-copies of another. An ingest of precomputed vectors reads no picture and hashes
none (core.ingest.ingestor)."""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from core.contracts.catalog import Catalog
from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.imageio import decode_sized
from core.ingest.decode import decode_workers
from core.vectors import near_copies

log = logging.getLogger(__name__)
CHUNK = 512  # photos hashed, then written, at a time
MOST_PER_INGEST = 100_000  # photos one ingest hashes at most, the newest first (an older catalog: over several)
NEIGHBOURS = 20  # embedding neighbours of a new photo checked as crops of it


def hash_photo(photo: Photo, max_pixels: int) -> bytes:
    """The photo's hashes, or b'' when its file is not a readable picture on this machine (a photo kept by URL
    only): it is then never folded, and not tried again."""
    path = photo.path or ""
    if "://" in path or not Path(path).is_file():
        return b""
    try:
        image, _ = decode_sized(Path(path).read_bytes(), name=path, max_pixels=max_pixels,
                                min_side=near_copies.HASH_SIDE)
        return near_copies.hash_image(image)
    except (InputError, OSError, ValueError) as exc:
        log.info("near-copies: %s not hashed (%s)", path, exc)
        return b""


def deployment_lookup(camtrap: Any) -> Callable[[int, int], bool]:
    """apart(a, b): both photos are frames of one camera-trap deployment (never near-copies)."""
    memo: dict[int, int | None] = {}

    def deployment(pid: int) -> int | None:
        if pid not in memo:
            capture = camtrap.captures([pid]).get(pid) if camtrap is not None else None
            memo[pid] = capture.deployment_id if capture is not None else None
        return memo[pid]

    def apart(a: int, b: int) -> bool:
        if camtrap is None:
            return False
        da = deployment(a)
        return da is not None and da == deployment(b)
    return apart


def hash_missing(catalog: Catalog, settings: Any, camtrap: Any = None,
                 neighbours: Callable[[int], Sequence[tuple[int, float]]] = lambda pid: (),
                 most: int = MOST_PER_INGEST) -> tuple[int, int | None, int]:
    """Hash the photos without hashes, the newest first (this ingest's), at most `most`; returns (photos
    hashed, how many of them are near-copies of another photo: None when the catalog is too large to count,
    photos left unhashed for a later ingest). `neighbours(id)`: its embedding neighbours (id, cosine), for
    crops."""
    waiting = catalog.unhashed_ids()
    ids, left = waiting[-most:] if most > 0 else [], max(0, len(waiting) - max(most, 0))
    if not ids:
        return 0, 0, left
    made: dict[int, bytes] = {}
    with ThreadPoolExecutor(max_workers=decode_workers(settings.ingest_workers),
                            thread_name_prefix="ingest-near-hash") as pool:
        for i in range(0, len(ids), CHUNK):
            photos = catalog.get_photos(ids[i:i + CHUNK])
            got = dict(zip((p.id for p in photos),
                           pool.map(lambda p: hash_photo(p, settings.max_image_pixels), photos)))
            catalog.set_near_hashes(got)
            made.update(got)
    new = {pid: h for pid, raw in made.items() if (h := near_copies.unpack(raw)) is not None}
    known = {pid: h for pid, raw in catalog.all_near_hashes().items()
             if pid not in new and (h := near_copies.unpack(raw)) is not None}
    found = near_copies.copies_among(new, known, neighbours, deployment_lookup(camtrap))
    log.info("near-copies: %d photos hashed (%d could not be), %s of them near-copies of another; %d left for a "
             "later ingest", len(made), len(made) - len(new), "uncounted" if found is None else found, left)
    return len(made), found, left


def index_neighbours(index: Any) -> Callable[[int], list[tuple[int, float]]]:
    """neighbours(id) from a vector index (core.vectors.index.VectorIndex): its NEIGHBOURS nearest photos."""
    def neighbours(pid: int) -> list[tuple[int, float]]:
        try:
            vec = np.asarray(index.vectors([pid]), dtype=np.float32)
            scores, found = index.search(vec, NEIGHBOURS + 1)
        except (KeyError, IndexError, ValueError, RuntimeError):
            return []
        return [(int(q), float(s)) for q, s in zip(found[0], scores[0]) if int(q) >= 0]
    return neighbours
