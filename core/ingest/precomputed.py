"""Precomputed embeddings: a parquet of (photo path or URL, metadata columns, vector) made elsewhere
(clip-retrieval's inference output joined with its metadata, INQUIRE's released CLIP features), ingested
without running the embedder over the photos.

The vectors must come from the configured embedder's model: searches embed the query with it, and two
models' spaces do not mix. The file says which model made them (parquet key-value metadata `model_id`
or `model`, or a `model_id` column), or the user states it (`ingest --model ID`); the model and the
dimension are checked against the vector set before anything is written."""
from __future__ import annotations

import hashlib
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import numpy as np
from PIL import Image

from core.backends.base import Embedder
from core.config import Settings
from core.contracts.catalog import Catalog, VectorSet
from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.ingest import local_files
from core.ingest.arrow_rows import ArrowRows
from core.ingest.decode import read_and_hash
from core.ingest.sources import SourceItem, ValueNotes
from core.ingest.state import EmbeddedBatch, IngestReport

log = logging.getLogger(__name__)

VECTOR_COLUMNS = ("embedding", "vector", "image_embedding", "clip_embedding", "img_emb", "emb")
REF_COLUMNS = ("path", "image_path", "filepath", "file", "filename", "url", "image_url")
MODEL_KEYS = (b"model_id", b"model", b"ecolens.model_id")
# rows read, committed to the catalog and added to the index at a time. Why 16,384 and not 4,096: each commit
# writes every index page its rows touched, and the rows of a batch land on random pages of the date, hash and
# place indexes; four times the rows share more of those pages, so the catalog's insert took 21% less CPU for
# the first 786k rows of the 5M file (31.8 against 40.4 s, session 11). A commit holds the catalog's write lock
# for well under a second (a label from the web app waits that long at most).
ROWS_PER_BATCH = 16_384


def _vector_column(names: list[str]) -> str | None:
    return next((c for c in VECTOR_COLUMNS if c in names), None)


def is_precomputed(path: Path) -> bool:
    """A parquet file with a vector column and no image bytes column."""
    if Path(path).suffix.lower() != ".parquet" or not Path(path).is_file():
        return False
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except Exception:  # not a parquet file at all: the INQUIRE reader reports it
        return False
    return "image" not in names and _vector_column(names) is not None


def base_model(model_id: str) -> str:
    """A model id without the library version suffix ('open_clip:ViT-B-32/x#open_clip=3.3.0' -> before '#')."""
    return model_id.split("#", 1)[0].strip()


def declared_model(path: Path, names: list[str], table_meta: dict | None, first_row: dict | None) -> str | None:
    for key in MODEL_KEYS:
        if table_meta and key in table_meta:
            return table_meta[key].decode("utf-8", "replace")
    for col in ("model_id", "model"):
        if col in names and first_row and first_row.get(col):
            return str(first_row[col])
    return None


def precomputed_batches(path: Path, embedder: Embedder, catalog: Catalog, vs: VectorSet, report: IngestReport,
                        model: str | None, settings: Settings,
                        known: list[tuple[int, Photo]] | None = None) -> Iterator[EmbeddedBatch]:
    """Embedded batches straight from the file: new photos, and catalog photos of the file whose vector in
    this set is missing (a resumed run). Raises InputError when the vectors do not fit the vector set.
    `known` collects (id, the file's record) of photos already indexed, for their metadata to be updated."""
    import pyarrow.parquet as pq

    # why pre_buffer off: with it, the reader kept every row group it had read (the file's size in memory by the
    # end: 0.9 GB after 800k rows of 512 float16, measured by bench/scale.py); read batch by batch it stays flat
    pf = pq.ParquetFile(path, pre_buffer=False)
    names = pf.schema_arrow.names
    vec_col = _vector_column(names)
    ref_col = next((c for c in REF_COLUMNS if c in names), None)
    if ref_col is None:
        raise InputError(f"{path} has a vector column ({vec_col}) but no photo column",
                         "add a column named path (relative to the parquet file), image_path or url")
    first = pf.read_row_group(0, columns=[c for c in ("model_id", "model") if c in names]).slice(0, 1).to_pylist() \
        if pf.num_row_groups and any(c in names for c in ("model_id", "model")) else []
    stated = declared_model(path, names, pf.schema_arrow.metadata, first[0] if first else None)
    if model and stated and base_model(model) != base_model(stated):
        raise InputError(f"--model {model} disagrees with the model the file names ({stated})",
                         "leave out --model, or fix the file's model_id")
    stated = model or stated
    if not stated:
        raise InputError(f"{path} does not say which model made its vectors",
                         f"add parquet metadata model_id, or pass --model (the configured embedder is "
                         f"{base_model(embedder.model_id)})")
    if base_model(stated) != base_model(vs.model_id):
        raise InputError(f"The vectors in {path} were made by {stated}, the configured embedder is "
                         f"{base_model(vs.model_id)}; vectors of two models cannot be searched together",
                         f"set embedder so that it matches {stated}, or embed the photos themselves with "
                         "`python app.py ingest FOLDER`")
    unindexed = set(catalog.unindexed_ids(vs.id))
    # Why no set of every hash seen: at millions of rows it would grow with the file. Each batch is committed
    # before the next is read, so the catalog itself answers for earlier batches; a known photo whose id is at
    # least the first id this run added is a repeat within the file, not a photo of an earlier run.
    first_new_id: int | None = None
    notes = ValueNotes()
    reader = ArrowRows(path, names, ref_col, vec_col)
    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="precomputed-hash") as pool:
        for rb in pf.iter_batches(batch_size=ROWS_PER_BATCH, columns=[*reader.columns(), vec_col]):
            vectors = _vectors(rb, vec_col, vs.dim, path)
            refs, photos = reader.photos(rb, notes)
            local = [p.path and not p.path.startswith(("http://", "https://")) for p in photos]
            if any(local):
                items = [SourceItem(name, local_files.reader(p.path) if is_local else (lambda: b""), p)
                         for name, p, is_local in zip(refs, photos, local)]
                digests = list(pool.map(_digest, items))
            else:  # (a hash of each reference: a URL's bytes are not fetched)
                digests = [_ref_digest(name) for name in refs]
            known_ids = catalog.ids_for_hashes([d for d in digests if d])
            norms = np.linalg.norm(vectors, axis=1)
            usable = np.isfinite(norms) & (norms > 0)
            seen: set[str] = set()
            new_photos, new_rows, old_ids, old_rows = [], [], [], []
            for i, (photo, digest) in enumerate(zip(photos, digests)):
                if not usable[i]:
                    report.skipped.append((refs[i], "its vector is zero or not finite; recompute it"))
                elif digest in seen:
                    report.duplicates += 1
                elif digest in known_ids:
                    if known_ids[digest] in unindexed:
                        old_ids.append(known_ids[digest])
                        old_rows.append(i)
                        unindexed.discard(known_ids[digest])
                    elif first_new_id is not None and known_ids[digest] >= first_new_id:
                        report.duplicates += 1
                    else:
                        report.already += 1
                        if known is not None:
                            known.append((known_ids[digest], photo))
                else:
                    photo.sha256 = digest
                    new_photos.append(photo)
                    new_rows.append(i)
                seen.add(digest)
            if old_ids:
                yield EmbeddedBatch(catalog.get_photos(old_ids), _unit(vectors[old_rows]), False, 0)
            fresh = vectors if len(new_rows) == len(vectors) else vectors[new_rows]
            yield EmbeddedBatch(new_photos, _unit(fresh), True, len(photos))
            if first_new_id is None and new_photos and new_photos[0].id is not None:
                first_new_id = int(new_photos[0].id)  # (the committer gave the photos their ids)
    report.notices += notes.all()


def row_count(path: Path) -> int:
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)


def training_sample(path: Path, dim: int, size: int, seed: int = 0) -> np.ndarray:
    """About `size` unit vectors drawn from across the file (whole row groups picked at random, then rows
    within them), for training a compressed index before the vectors are added."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path, pre_buffer=False)
    vec_col = _vector_column(pf.schema_arrow.names)
    rng = np.random.default_rng(seed)
    total = max(1, pf.metadata.num_rows)
    share = min(1.0, size / total)
    parts, got = [], 0
    for g in rng.permutation(pf.num_row_groups):
        if got >= size:
            break
        batch = pf.read_row_group(int(g), columns=[vec_col])
        mat = _vectors(batch, vec_col, dim, path)
        take = rng.random(len(mat)) < min(1.0, 2 * share) if share < 0.5 else np.ones(len(mat), bool)
        mat = mat[take]
        norms = np.linalg.norm(mat, axis=1)
        mat = mat[np.isfinite(norms) & (norms > 0)]
        parts.append(_unit(mat))
        got += len(mat)
    out = np.concatenate(parts) if parts else np.zeros((0, dim), np.float32)
    return out[:size]


def _vectors(batch, col: str, dim: int, path: Path) -> np.ndarray:
    """The vector column of an Arrow batch (or table) as a float32 matrix, read in Arrow's own buffers (no
    Python object per number: a million rows of 512 floats would be half a billion of them)."""
    import pyarrow as pa

    arr = batch.column(col)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    bad = InputError(f"The {col} column of {path} is not a list of numbers of one length per row",
                     "write each vector as a fixed-length list of floats")
    if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)
            or pa.types.is_fixed_size_list(arr.type)) or arr.null_count:
        raise bad
    if not (pa.types.is_floating(arr.type.value_type) or pa.types.is_integer(arr.type.value_type)):
        raise bad
    if len(arr) == 0:
        return np.zeros((0, dim), np.float32)
    if pa.types.is_fixed_size_list(arr.type):
        lengths = np.full(len(arr), arr.type.list_size)
    else:
        offsets = arr.offsets.to_numpy()
        lengths = np.diff(offsets)
    if len(set(lengths.tolist())) != 1:
        raise bad
    flat = arr.flatten()
    if flat.null_count:
        raise bad
    mat = flat.to_numpy(zero_copy_only=False).astype(np.float32, copy=False).reshape(len(arr), int(lengths[0]))
    if mat.ndim != 2 or mat.shape[1] != dim:
        got = mat.shape[1] if mat.ndim == 2 else "mixed"
        raise InputError(f"The vectors in {path} have dimension {got}, the vector set has {dim}",
                         "use vectors made by the configured embedder's model")
    return mat


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32, copy=False) if len(x) else x


def _digest(item: SourceItem) -> str:
    """The content hash of a local photo (so later ingests of the same file dedupe against it), else a hash
    of its reference (a URL's bytes are not fetched: the vector is all that is needed)."""
    if item.photo.path and not item.photo.path.startswith(("http://", "https://")):
        r = read_and_hash(item)
        if r.digest:
            item.photo.bytes = r.nbytes
            try:
                with Image.open(item.photo.path) as im:  # the header only: no decoding
                    item.photo.width, item.photo.height = im.size
            except Exception:  # not an image we can read: the vector still stands; sizes stay 0
                log.warning("precomputed ingest: cannot read the size of %s", item.photo.path)
            return r.digest
    return _ref_digest(item.name)


def _ref_digest(name: str) -> str:
    return hashlib.sha256(b"precomputed-ref\0" + name.encode()).hexdigest()
