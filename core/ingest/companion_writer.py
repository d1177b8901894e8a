"""The writer of companion vectors (`python app.py export vectors --out FILE.parquet`): each photo's vector
from the collection's index, in the layout core/ingest/companion_vectors.py reads beside a hub dataset. A
deployer writes the file once where the photos were embedded (a laptop, a GPU machine), uploads it to their
own dataset repository as `vectors/<split>.parquet` and names that repository in the setting `vectors_repo`;
a Space then takes the vectors from it instead of running the image encoder on every photo.

The file: one key column naming each photo as INQUIRE does (`inat24_image_id`, else `inat24_file_name`: the
columns kept on each photo of a hub dataset), an `embedding` column of float32 lists, and the embedder's model
id in the parquet key-value metadata (`model_id`), which the reader compares with its own embedder's."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.ingest.companion_vectors import KEY_COLUMNS

log = logging.getLogger(__name__)
BATCH = 4096  # photos read from the catalog and written at a time


@dataclass(frozen=True)
class Written:
    rows: int  # photos written
    key: str  # the key column used
    skipped: int  # photos in the index without that key (not in the file)


def key_column(photos: Sequence[Photo]) -> str | None:
    """The first key column (KEY_COLUMNS order) that any of `photos` carries, or None."""
    for key in KEY_COLUMNS:
        if any((p.extra or {}).get(key) is not None for p in photos):
            return key
    return None


def write(path: Path, model_id: str, ids: np.ndarray, matrix: np.ndarray,
          photos: Callable[[Sequence[int]], list[Photo]]) -> Written:
    """Write the vectors of photo `ids` (row i of `matrix` is ids[i]'s) made by `model_id` to `path`.
    InputError when no photo of the index carries a key the reader can match (photos that did not come from
    a hub dataset in INQUIRE's layout)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) == 0:
        raise InputError("The collection has no embedded photos, so there are no vectors to write",
                         "ingest the collection first (python app.py ingest, or start the app once)")
    sample = photos([int(i) for i in ids[:BATCH]])
    key = key_column(sample)
    if key is None:
        raise InputError(f"The collection's photos carry none of the columns {', '.join(KEY_COLUMNS)}, so a "
                         "hub dataset's photos could not be matched to these vectors",
                         "export vectors of a collection ingested from a hub dataset in INQUIRE's layout "
                         "(corpus = hf://datasets/OWNER/NAME:SPLIT)")
    dim = int(matrix.shape[1])
    schema = pa.schema([(key, pa.int64() if key == "inat24_image_id" else pa.string()),
                        ("embedding", pa.list_(pa.float32()))], metadata={"model_id": model_id})
    rows = skipped = 0
    path = Path(path)
    part = path.with_name(path.name + ".part")  # a reader never sees half a file
    with pq.ParquetWriter(part, schema) as out:
        for start in range(0, len(ids), BATCH):
            chunk = ids[start:start + BATCH]
            found = {p.id: p for p in photos([int(i) for i in chunk])}
            keys, vectors = [], []
            for row, pid in enumerate(chunk, start):
                value = (found[int(pid)].extra or {}).get(key) if int(pid) in found else None
                if value is None:
                    skipped += 1
                    continue
                keys.append(int(value) if key == "inat24_image_id" else str(value))
                vectors.append(np.asarray(matrix[row], dtype=np.float32))
            if keys:
                flat = pa.array(np.concatenate(vectors), type=pa.float32())
                offsets = pa.array(np.arange(0, (len(keys) + 1) * dim, dim, dtype=np.int32))
                table = pa.table([pa.array(keys, type=schema.field(key).type),
                                  pa.ListArray.from_arrays(offsets, flat)], schema=schema)
                out.write_table(table)
                rows += len(keys)
    part.replace(path)
    log.info("wrote %d vectors of %s to %s (key %s, %d photos without it)", rows, model_id, path, key, skipped)
    return Written(rows, key, skipped)
