"""Precomputed vectors beside a photo collection: a hub dataset may publish, next to the parquet files of a
split, a parquet of each photo's vector made by one embedder model (folder `vectors/` or `embeddings/` of the
dataset repository, named for the split: `vectors/validation.parquet`). When its model is the configured
embedder's, the ingest takes each photo's vector from it instead of running the image encoder (on a free
Space's two cores that is minutes saved for 4,000 photos); when it is another model's, or the file cannot be
used, a notice says so and the photos are embedded here.

The file's layout follows the local precomputed ingest (core/ingest/precomputed.py): a vector column
(`embedding`, `vector`, ...), the model in the parquet key-value metadata (`model_id`) or a `model_id` column,
and one key column that names the photo: `inat24_image_id` or `inat24_file_name` (INQUIRE's own columns, kept
on each photo). Photos the file has no vector for are embedded as usual."""
from __future__ import annotations

import io
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np
from PIL import Image

from core.contracts.catalog import VectorSet
from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.ingest.decode import read_and_hash
from core.ingest.precomputed import _unit, _vector_column, _vectors, base_model, declared_model
from core.ingest.sources import SourceItem
from core.ingest.state import Deduper, EmbeddedBatch

log = logging.getLogger(__name__)
FOLDERS = ("vectors", "embeddings")  # top-level folders of a dataset repository that hold vector files
KEY_COLUMNS = ("inat24_image_id", "inat24_file_name")
MARKER = "complete.json"  # written by core.ingest.hub_dataset beside the downloaded files
MAX_MARKER_DEPTH = 4  # how many folders above a parquet file its dataset's marker may be


def is_vector_file(path: str) -> bool:
    """A path of a dataset repository that holds vectors (not photos)."""
    return path.endswith(".parquet") and path.split("/", 1)[0] in FOLDERS and "/" in path


@dataclass
class Lookup:
    """Photo key -> unit vector, from one vector file whose model is the embedder's."""

    key: str  # the key column
    vectors: dict[object, np.ndarray]
    source: str  # the file, for notices
    used: int = 0
    missing: list[str] = field(default_factory=list)

    def vector_for(self, item: SourceItem) -> np.ndarray | None:
        return self.vector_of(item.photo)

    def vector_of(self, photo: Photo) -> np.ndarray | None:
        value = (photo.extra or {}).get(self.key)
        return None if value is None else self.vectors.get(value)


def beside(parquet: Path) -> list[Path]:
    """The vector files downloaded with the hub dataset that `parquet` belongs to ([] for any other file):
    its marker (complete.json, a few folders up) lists them."""
    parquet = Path(parquet).resolve()
    for folder in list(parquet.parents)[:MAX_MARKER_DEPTH]:
        marker = folder / MARKER
        if marker.is_file():
            try:
                record = json.loads(marker.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return []
            mine = {str((folder / f["path"]).resolve()) for f in record.get("files", [])}
            if str(parquet) not in mine:
                return []
            return [folder / v["path"] for v in record.get("vectors", [])
                    if (folder / v["path"]).is_file() and (folder / v["path"]).stat().st_size == int(v["size"])]
    return []


def load(files: list[Path], vs: VectorSet) -> tuple[Lookup | None, list[str]]:
    """The lookup from the first of `files` made by the vector set's model, and notices for the files that
    cannot be used (another model, no model named, no key column, another dimension)."""
    notices = []
    for path in files:
        try:
            lookup = _read(path, vs)
        except InputError as exc:
            notice = (f"the precomputed vectors {path.name} beside the dataset were not used: {exc.message}; "
                      "the photos are embedded here instead (slower)")
            log.warning("%s", notice)
            notices.append(notice)
            continue
        log.info("precomputed vectors from %s: %d photos (model %s)", path, len(lookup.vectors), vs.model_id)
        return lookup, notices
    return None, notices


def _read(path: Path, vs: VectorSet) -> Lookup:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, pre_buffer=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"it is not a readable parquet file ({type(exc).__name__})", "") from None
    names = pf.schema_arrow.names
    vec_col = _vector_column(names)
    key = next((c for c in KEY_COLUMNS if c in names), None)
    if vec_col is None or key is None:
        raise InputError(f"it has no {'vector' if vec_col is None else 'key'} column (a vector column and one of "
                         f"{', '.join(KEY_COLUMNS)} are needed)", "")
    first = pf.read_row_group(0, columns=[c for c in ("model_id", "model") if c in names]).slice(0, 1).to_pylist() \
        if pf.num_row_groups and any(c in names for c in ("model_id", "model")) else []
    stated = declared_model(path, names, pf.schema_arrow.metadata, first[0] if first else None)
    if not stated:
        raise InputError("it does not say which model made its vectors (parquet metadata model_id)", "")
    if base_model(stated) != base_model(vs.model_id):
        raise InputError(f"they were made by {base_model(stated)}, the embedder is {base_model(vs.model_id)}", "")
    vectors: dict[object, np.ndarray] = {}
    for batch in pf.iter_batches(columns=[key, vec_col], batch_size=4096):
        try:
            mat = _vectors(batch, vec_col, vs.dim, path)
        except InputError as exc:
            raise InputError(exc.message.replace(f" in {path}", ""), "") from None
        norms = np.linalg.norm(mat, axis=1)
        ok = np.isfinite(norms) & (norms > 0)
        unit = _unit(mat[ok]) if ok.any() else mat[:0]
        keys = [k for k, good in zip(batch.column(0).to_pylist(), ok) if good]
        vectors.update(zip(keys, unit))
    return Lookup(key, vectors, path.name)


def batches(items: list[SourceItem], lookup: Lookup, dedupe: Deduper, batch_size: int
            ) -> Iterator[EmbeddedBatch]:
    """Batches of the items the lookup has a vector for (read and hashed, deduplicated like any ingest, the
    image's size read from its header: nothing decoded, nothing embedded)."""
    for i in range(0, len(items), batch_size):
        chunk = items[i:i + batch_size]
        photos, vectors = [], []
        for r in dedupe.new_items([read_and_hash(it) for it in chunk]):
            try:
                with Image.open(io.BytesIO(r.data)) as im:  # the header only
                    size = im.size
            except Exception as exc:  # not an image: skipped with the reason, as the embedding path would
                dedupe.failed(r, f"is not an image that can be read ({type(exc).__name__}); fix or remove it")
                continue
            photos.append(dedupe.photo_for(r, size))
            vectors.append(lookup.vector_for(r.item))
        lookup.used += len(photos)
        yield EmbeddedBatch(photos, np.stack(vectors).astype(np.float32) if vectors else
                            np.zeros((0, 0), np.float32), True, len(chunk))


def resumed(photos: list[Photo], lookup: Lookup) -> tuple[list[EmbeddedBatch], list[Photo]]:
    """Catalog photos without a vector yet (an ingest stopped half-way): (a batch of those the lookup has a
    vector for, the others, to embed)."""
    have = [p for p in photos if lookup.vector_of(p) is not None]
    if not have:
        return [], photos
    lookup.used += len(have)
    rest = [p for p in photos if lookup.vector_of(p) is None]
    return [EmbeddedBatch(have, np.stack([lookup.vector_of(p) for p in have]).astype(np.float32), False, 0)], rest


def split(items: list[SourceItem], lookup: Lookup) -> tuple[list[SourceItem], list[SourceItem]]:
    """(items the lookup has a vector for, the others)."""
    have, rest = [], []
    for it in items:
        (have if lookup.vector_for(it) is not None else rest).append(it)
    return have, rest
