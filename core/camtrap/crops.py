"""Embedding the animals: every detection at or above `detection_threshold` without a crop vector in the
current vector set is cut out of its frame (grown by `crop_margin` of the box's size, clipped to the frame)
and embedded by the same embedder as the frames, in batches of `batch_size`, into the crop index
(core.camtrap.crop_index). Runs at the end of every ingest that has a camera-trap store, so boxes added by
a results file, a Camtrap DP package or a detector, and a new embedder's set, all get their crops.

Frames are decoded at most once per batch, on a few threads (PIL releases the GIL), and large JPEGs are
decoded reduced only as far as the smallest box keeps CROP_SIDE pixels (a fox 80 pixels wide in a 4000-pixel
frame stays 80 pixels wide)."""
from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from PIL import Image

from core.camtrap.boxes import crop
from core.camtrap.crop_index import CropIndex
from core.contracts.errors import InputError
from core.imageio import decode_sized

log = logging.getLogger(__name__)

CROP_SIDE = 224  # the shorter side a box keeps when its frame is decoded reduced (embedders look at 224-448)
MAX_SKIP_NAMES = 5


@dataclass
class CropReport:
    embedded: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (photo path, reason)
    seconds: float = 0.0

    def notices(self) -> list[str]:
        out = []
        if self.embedded:
            out.append(f"{self.embedded} detection crop{'s' if self.embedded != 1 else ''} embedded "
                       f"(searched beside the whole frames) in {self.seconds:.1f} s")
        if self.skipped:
            names = "; ".join(f"{n}: {r}" for n, r in self.skipped[:MAX_SKIP_NAMES])
            out.append(f"{len(self.skipped)} frame(s) with boxes could not be read, their crops were not embedded "
                       f"({names}{' ...' if len(self.skipped) > MAX_SKIP_NAMES else ''})")
        return out


def min_side_for(frame_min_side_fraction: float) -> int:
    """The shorter side (pixels) a reduced decode must keep so that a box whose shorter side is this fraction
    of the frame's shorter side keeps CROP_SIDE pixels."""
    return int(math.ceil(CROP_SIDE / max(frame_min_side_fraction, 1e-3)))


def load_frame(path: str, boxes: Sequence[tuple[float, float, float, float]], max_pixels: int) -> Image.Image:
    """A frame decoded for cutting out `boxes` (InputError when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror or exc})", "check the path") from None
    smallest = min(min(w, h) for _, _, w, h in boxes)
    return decode_sized(data, name=str(path), max_pixels=max_pixels, min_side=min_side_for(smallest))[0]


def reconcile(store, crops: CropIndex, vector_set_id: int) -> list[str]:
    """Make the store's record of crop vectors follow the crop index files (the truth, as for photo vectors):
    recorded crops missing from the files (a damaged or lost file) are forgotten, so they are embedded again;
    crops in the files whose detection is gone (replaced boxes) are removed from the index. Notices."""
    recorded = np.asarray(store.crop_ids(vector_set_id), dtype=np.int64)
    held = np.unique(crops.detection_ids())
    lost = np.setdiff1d(recorded, held, assume_unique=True)
    stray = np.setdiff1d(held, recorded, assume_unique=True)
    out = []
    if len(lost):
        store.unmark_crops(vector_set_id, lost.tolist())
        out.append(f"crop index: {len(lost)} crop vector(s) recorded in the catalog were missing from the crop "
                   "index; they are embedded again now")
    if len(stray):
        crops.remove(stray.tolist())
        crops.save()
    if len(lost) or len(stray):
        log.warning("crop index of vector set %d: %d recorded crops missing (re-embedded), %d strays removed",
                    vector_set_id, len(lost), len(stray))
    return out


def embed_crops(store, crops: CropIndex, embedder, vector_set_id: int, photo_paths: Callable[[list[int]], dict],
                *, threshold: float, margin: float, batch_size: int, max_pixels: int, workers: int = 2,
                checkpoint_s: float = 60.0) -> CropReport:
    """Embed the unindexed crops of `vector_set_id` (store: core.contracts.camtrap.CamtrapStore). `photo_paths`:
    photo ids -> {id: file path}. The crop index is written and the crops recorded after each checkpoint."""
    started = time.perf_counter()
    report = CropReport()
    todo = store.unindexed_detections(vector_set_id, threshold)
    if not todo:
        return report
    by_photo: dict[int, list] = defaultdict(list)
    for d in todo:
        by_photo[int(d.photo_id)].append(d)
    photos = list(by_photo)
    paths = photo_paths(photos)
    pending: list[int] = []
    last = time.monotonic()

    def cut(photo_id: int):
        dets = by_photo[photo_id]
        path = paths.get(photo_id)
        if not path or str(path).startswith(("http://", "https://")):
            return photo_id, None, "its file is not on this machine"
        try:
            frame = load_frame(str(path), [(d.x, d.y, d.w, d.h) for d in dets], max_pixels)
        except InputError as exc:
            return photo_id, None, exc.message
        return photo_id, [crop(frame, (d.x, d.y, d.w, d.h), margin) for d in dets], None

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="crop-decode") as pool:
        batch_dets: list = []
        batch_images: list[Image.Image] = []
        for photo_id, images, error in pool.map(cut, photos):
            if images is None:
                report.skipped.append((str(paths.get(photo_id) or photo_id), error))
                continue
            batch_dets += by_photo[photo_id]
            batch_images += images
            if len(batch_images) >= batch_size:
                pending += _embed(crops, embedder, batch_dets, batch_images)
                report.embedded += len(batch_dets)
                batch_dets, batch_images = [], []
                if time.monotonic() - last >= checkpoint_s:
                    _checkpoint(store, crops, vector_set_id, pending)
                    last = time.monotonic()
        if batch_images:
            pending += _embed(crops, embedder, batch_dets, batch_images)
            report.embedded += len(batch_dets)
    _checkpoint(store, crops, vector_set_id, pending)
    report.seconds = time.perf_counter() - started
    log.info("crops of vector set %d: %d embedded, %d frames unreadable, %.1f s", vector_set_id, report.embedded,
             len(report.skipped), report.seconds)
    return report


def _embed(crops: CropIndex, embedder, dets: list, images: list[Image.Image]) -> list[int]:
    """One forward pass over a batch of crops; their vectors join the crop index."""
    vectors = np.asarray(embedder.embed_images(images), dtype=np.float32)
    crops.add([d.id for d in dets], [d.photo_id for d in dets], np.array([(d.x, d.y, d.w, d.h) for d in dets]),
              vectors, [getattr(d, "conf", 1.0) for d in dets])
    return [int(d.id) for d in dets]


def _checkpoint(store, crops: CropIndex, vector_set_id: int, pending: list[int]) -> None:
    """Write the crop index, then record its crops (a crash between the two re-embeds them, never loses them)."""
    if not pending:
        return
    crops.save()
    store.mark_crops_indexed(vector_set_id, list(pending))
    pending.clear()
