"""The local ingest engine: one process, a pool of threads reading, hashing and decoding several batches
ahead while the embedder works on the current one (PIL and hashlib release the GIL while they decode and
hash, so the threads run in parallel with the forward pass)."""
from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterator

from core.backends.base import Embedder
from core.config import Settings
from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.ingest.decode import ReadItem, decode_for_embedding, decode_workers, load_for_embedding, read_and_hash
from core.ingest.sources import SourceItem
from core.ingest.state import Deduper, EmbeddedBatch, IngestReport


@dataclass
class _Chunk:
    items: list[SourceItem]
    reads: list[Future]
    prepared: Future | None = None  # decoded (and preprocessed) content, set once the chunk is deduplicated


class LocalEngine:
    name = "local"

    def __init__(self, embedder: Embedder, settings: Settings):
        self.embedder, self.settings = embedder, settings
        self.workers = decode_workers(settings.ingest_workers)
        self.split = callable(getattr(embedder, "preprocess_images", None)) and \
            callable(getattr(embedder, "encode_preprocessed", None))

    def batches(self, resume: list[Photo], items: list[SourceItem], dedupe: Deduper,
                report: IngestReport) -> Iterator[EmbeddedBatch]:
        """Re-embed `resume` (catalog photos without a vector), then embed the new content of `items`."""
        size = self.settings.batch_size
        for i in range(0, len(resume), size):
            photos, images = [], []
            for photo in resume[i:i + size]:
                try:
                    images.append(load_for_embedding(photo.path, self.settings.max_image_pixels))
                    photos.append(photo)
                except InputError as exc:
                    report.skipped.append((photo.path, f"{exc.message}; fix the file and ingest again"))
            if photos:
                yield EmbeddedBatch(photos, self.embedder.embed_images(images), False, 0)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        ahead = max(1, self.settings.ingest_prefetch)
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="ingest-decode") as pool, \
                ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-preprocess") as prep:
            window: deque[_Chunk] = deque()
            nxt = 0
            while window or nxt < len(chunks):
                while nxt < len(chunks) and len(window) < ahead + 1:
                    window.append(_Chunk(chunks[nxt], [pool.submit(read_and_hash, it) for it in chunks[nxt]]))
                    nxt += 1
                for pos, chunk in enumerate(window):  # deduplicate in source order, then decode in parallel
                    if chunk.prepared is None:
                        if pos and not all(f.done() for f in chunk.reads):
                            break  # not read yet: deduplicate it on a later turn rather than wait now
                        fresh = dedupe.new_items([f.result() for f in chunk.reads])
                        decodes = [(r, pool.submit(decode_for_embedding, r.data, name=r.item.name,
                                                   max_pixels=self.settings.max_image_pixels)) for r in fresh]
                        chunk.prepared = prep.submit(self._prepare, decodes)
                chunk = window.popleft()
                results, tensor = chunk.prepared.result()
                photos, images = [], []
                for r, decoded, error in results:
                    if error is not None:
                        dedupe.failed(r, f"{error.message}; {error.hint}" if error.hint else error.message)
                        continue
                    photos.append(dedupe.photo_for(r, decoded[1]))
                    images.append(decoded[0])
                vectors = None
                if images:
                    vectors = self.embedder.encode_preprocessed(tensor) if tensor is not None \
                        else self.embedder.embed_images(images)
                yield EmbeddedBatch(photos, vectors, True, len(chunk.items))

    def _prepare(self, decodes: list[tuple[ReadItem, Future]]):
        """Wait for a chunk's decodes; with an embedder that splits preprocessing from its forward pass
        (open_clip), preprocess here too, so that it overlaps the previous batch's forward pass."""
        results = []
        for r, future in decodes:
            try:
                results.append((r, future.result(), None))
            except InputError as exc:
                results.append((r, None, exc))
        images = [d[0] for _, d, e in results if e is None]
        tensor = self.embedder.preprocess_images(images) if images and self.split else None
        return results, tensor
