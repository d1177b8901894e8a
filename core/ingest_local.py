"""The local ingest engine: one process, a pool of threads reading, hashing and decoding several batches
ahead while the embedder works on the current one (PIL and hashlib release the GIL while they decode and
hash, so the threads run in parallel with the forward pass)."""
from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterator

from core.backends.base import Embedder
from core.errors import InputError
from core.ingest_decode import (ReadItem, decode_for_embedding, decode_workers, load_for_embedding,
                                read_and_hash)
from core.ingest_state import Deduper, EmbeddedBatch, IngestReport
from core.records import Photo
from core.settings import Settings
from core.sources import SourceItem


@dataclass
class _Chunk:
    items: list[SourceItem]
    reads: list[Future]
    decodes: list[tuple[ReadItem, Future]] | None = None  # set once the chunk is deduplicated


class LocalEngine:
    name = "local"

    def __init__(self, embedder: Embedder, settings: Settings):
        self.embedder, self.settings = embedder, settings
        self.workers = decode_workers(settings.ingest_workers)

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
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="ingest-decode") as pool:
            window: deque[_Chunk] = deque()
            nxt = 0
            while window or nxt < len(chunks):
                while nxt < len(chunks) and len(window) < ahead + 1:
                    window.append(_Chunk(chunks[nxt], [pool.submit(read_and_hash, it) for it in chunks[nxt]]))
                    nxt += 1
                for pos, chunk in enumerate(window):  # deduplicate in source order, then decode in parallel
                    if chunk.decodes is None:
                        if pos and not all(f.done() for f in chunk.reads):
                            break  # not read yet: deduplicate it on a later turn rather than wait now
                        fresh = dedupe.new_items([f.result() for f in chunk.reads])
                        chunk.decodes = [(r, pool.submit(decode_for_embedding, r.data, name=r.item.name,
                                                         max_pixels=self.settings.max_image_pixels))
                                         for r in fresh]
                chunk = window.popleft()
                photos, images = [], []
                for r, future in chunk.decodes or []:
                    try:
                        image, original = future.result()
                    except InputError as exc:
                        dedupe.failed(r, f"{exc.message}; {exc.hint}" if exc.hint else exc.message)
                        continue
                    photos.append(Deduper.photo_for(r, original))
                    images.append(image)
                vectors = self.embedder.embed_images(images) if images else None
                yield EmbeddedBatch(photos, vectors, True, len(chunk.items))
