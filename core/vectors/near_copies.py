"""Near-copies (issue 35): re-encodes, greyscale or CMYK copies, rotations by 90/180/270 degrees, resizes and
crops of one frame are one result, shown once with "+2 near-copies".

What is compared: each photo's perceptual hashes, kept in the catalog (migration 0012): pHash (the sign of the
lowest 16 x 16 frequencies of a 64 x 64 greyscale copy's discrete cosine transform against their median, as
ImageHash's phash with hash_size 16 computes it: 256 bits that a re-encode, a colour change or a resize
barely moves) of the whole picture at 0, 90, 180 and 270 degrees, and of WINDOWS, parts of it. Two photos are
near-copies when
- one's whole picture is within FULL_BITS of the other's at some rotation (a copy, resized, recoloured,
  rotated), or
- one's whole picture (at some rotation) is within WINDOW_BITS of a window of the other (a crop), and, where
  both have a vector, their embeddings agree to at least CROP_COSINE (the embedding distance rules out a
  chance match of a window).
Measured (tests/integration/test_near_copies.py, and the demo world's drawn pictures, which are much alike):
copies 0-8 bits apart; crops that coincide with a window 2-4 bits; the demo's distinct pictures 42 bits or
more apart, the test photos 94 or more. A crop that cuts the picture elsewhere than a window (a few per cent
off) is not recognised: the windows are a ladder of sizes and places, not every crop. 256-bit hashes,
because 64-bit ones put many of the demo world's distinct drawings within a copy's distance.

Frames of one camera-trap deployment never fold: a fixed camera's frames share their background (their
hashes are a few bits apart) and a burst is an event, not a copy (core.camtrap.events)."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
from PIL import Image

ROTATIONS = (0, 90, 180, 270)
# windows (left, top, width, height) as shares of the picture: squares of three sizes centred and against each
# edge and corner (a 3 x 3 grid), and full-height and full-width strips at either end and in the middle
_SIZES = ((0.8, 0.8), (0.65, 0.65), (0.5, 0.5), (0.6, 1.0), (0.75, 1.0), (1.0, 0.6), (1.0, 0.75))
WINDOWS = tuple((x, y, w, h) for w, h in _SIZES for x in sorted({0.0, (1 - w) / 2, 1 - w})
                for y in sorted({0.0, (1 - h) / 2, 1 - h}))
BITS = 16  # hash side: BITS x BITS = 256 bits a hash
WORDS = BITS * BITS // 64
FULL_BITS = 24
WINDOW_BITS = 24
CROP_COSINE = 0.3  # a weak guard: the stand-in encoder gives the test crops 0.46-0.97, a real one more
HASH_SIDE = 128  # the picture is hashed from a copy this many pixels on its longer side (twice the pHash input)
SCAN_FACTOR, SCAN_EXTRA = 4, 50  # a search folds among its first max(4 k, k + 50) photos
FLAT_STD = 2.0  # grey levels: a picture whose brightness varies less than this has no structure to compare
CHUNK = 32_768  # photos compared at once when an ingest counts near-copies (bounds its memory)


def phashes(pictures: Sequence[Image.Image]) -> np.ndarray:
    """pHash of each picture (ImageHash's phash, hash_size BITS, computed for all at once): (n, WORDS) uint64."""
    from scipy.fft import dct

    side = BITS * 4  # ImageHash's highfreq_factor 4
    grey = np.stack([np.asarray(p.convert("L").resize((side, side), Image.Resampling.LANCZOS), dtype=np.float64)
                     for p in pictures])
    low = dct(dct(grey, axis=1), axis=2)[:, :BITS, :BITS].reshape(len(pictures), -1)
    bits = low > np.median(low, axis=1, keepdims=True)
    return np.frombuffer(np.packbits(bits, axis=1).tobytes(), dtype=">u8").astype(np.uint64).reshape(-1, WORDS)


def hash_image(image: Image.Image) -> bytes:
    """The hashes of a picture: its whole at ROTATIONS, then WINDOWS, BITS x BITS / 8 bytes each; b'' for a
    picture with almost no structure (a blank or uniform frame: its hash would match every other such
    frame's, whatever its colour), which never folds."""
    small = image.convert("RGB")
    small.thumbnail((HASH_SIDE, HASH_SIDE))
    if float(np.asarray(small.convert("L"), dtype=np.float32).std()) < FLAT_STD:
        return b""
    w, h = small.size
    parts = [small.rotate(a, expand=True) for a in ROTATIONS]
    for x, y, ww, hh in WINDOWS:
        parts.append(small.crop((round(x * w), round(y * h), max(round(x * w) + 1, round((x + ww) * w)),
                                 max(round(y * h) + 1, round((y + hh) * h)))))
    return phashes(parts).astype(">u8").tobytes()


def unpack(raw: bytes | None) -> np.ndarray | None:
    """The hashes as (whole at each rotation, then windows) x WORDS uint64; None for a photo not (or not)
    hashed, or hashed in another layout."""
    if not raw or len(raw) != 8 * WORDS * (len(ROTATIONS) + len(WINDOWS)):
        return None
    return np.frombuffer(raw, dtype=">u8").astype(np.uint64).reshape(-1, WORDS)


def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bits apart of every hash of `a` (m, WORDS) with every hash of `b` (n, WORDS): (m, n). Word by word, added
    up (a sum over the short last axis took three times as long: a search folds among ~80 photos)."""
    out = np.bitwise_count(a[:, None, 0] ^ b[None, :, 0]).astype(np.uint16)
    for w in range(1, a.shape[1]):
        out += np.bitwise_count(a[:, None, w] ^ b[None, :, w])
    return out


def _closest(a: np.ndarray, b: np.ndarray) -> int:
    return int(distances(a, b).min())


def near(a: np.ndarray, b: np.ndarray, cosine: float | None = None) -> bool:
    """Whether two photos' hashes (unpack) make them near-copies; `cosine`: their embeddings' cosine (None: not
    known, the hashes decide alone)."""
    r = len(ROTATIONS)
    if _closest(a[:1], b[:r]) <= FULL_BITS:
        return True
    if cosine is not None and cosine < CROP_COSINE:
        return False
    return _closest(a[:r], b[r:]) <= WINDOW_BITS or _closest(b[:r], a[r:]) <= WINDOW_BITS


def _first_near(pid: int, mine: np.ndarray, kept: list[int], stack: np.ndarray,
                cosine: Callable[[int, int], float | None], apart: Callable[[int, int], bool]) -> int | None:
    """The first of the `kept` photos (hashes `stack`: n x hashes x WORDS) that `pid` (hashes `mine`) is a
    near-copy of and not kept apart from, as near() decides for each pair, compared with all of them at once
    (one comparison per photo instead of one per pair: a Fast search folds among ~80 photos)."""
    r, n = len(ROTATIONS), len(kept)
    whole = distances(mine[:1], stack[:, :r].reshape(-1, WORDS)).reshape(n, r).min(axis=1) <= FULL_BITS
    if not whole.all():
        # a crop of theirs in my whole picture at some rotation, or a crop of mine in theirs
        windows = len(mine) - r
        theirs = distances(mine[:r], stack[:, r:].reshape(-1, WORDS)).reshape(r, n, windows).min(axis=(0, 2))
        ours = distances(stack[:, :r].reshape(-1, WORDS), mine[r:]).reshape(n, r, windows).min(axis=(1, 2))
        crop = ((theirs <= WINDOW_BITS) | (ours <= WINDOW_BITS)) & ~whole
        for i in np.flatnonzero(crop):  # the guard, asked only where it decides (a cosine may cost a read)
            c = cosine(pid, kept[i])
            whole[i] = c is None or c >= CROP_COSINE
    return next((q for q, hit in zip(kept, whole) if hit and not apart(pid, q)), None)


def fold(ranked: Sequence[tuple[int, float]], k: int, hashes: Mapping[int, np.ndarray | None],
         cosine: Callable[[int, int], float | None], apart: Callable[[int, int], bool] = lambda a, b: False,
         ) -> tuple[list[tuple[int, float]], dict[int, list[int]]]:
    """`ranked` with each near-copy folded into the best-ranked photo of its group, until k photos are kept (the
    photos in `hashes` are the ones looked at; the rest follow as they were). Returns the ranking and, per
    kept photo with copies, the ids folded into it in rank order. `apart(a, b)`: never fold these two (frames
    of one camera-trap deployment)."""
    kept: list[tuple[int, float]] = []
    copies: dict[int, list[int]] = {}
    folded: set[int] = set()
    hashed: list[int] = []  # the kept photos with hashes, in rank order, and their hashes stacked
    stack: np.ndarray | None = None
    for pid, score in ranked:
        if len(kept) >= k or pid not in hashes:
            break
        mine = hashes.get(pid)
        home = None
        if mine is not None and hashed:
            home = _first_near(pid, mine, hashed, stack, cosine, apart)
        if home is None:
            kept.append((pid, score))
            if mine is not None:
                hashed.append(pid)
                stack = mine[None] if stack is None else np.concatenate([stack, mine[None]])
        else:
            copies.setdefault(home, []).append(pid)
            folded.add(pid)
    seen = {pid for pid, _ in kept} | folded
    return kept + [(pid, s) for pid, s in ranked if pid not in seen], copies


def copies_among(new: Mapping[int, np.ndarray], known: Mapping[int, np.ndarray],
                 neighbours: Callable[[int], Sequence[tuple[int, float]]], apart: Callable[[int, int], bool],
                 budget: int = 20_000_000) -> int | None:
    """How many of the `new` photos are near-copies of another photo (new or `known`). The whole pictures are
    compared with every photo's; a crop only with the photo's embedding `neighbours` (id, cosine), since a crop
    needs CROP_COSINE. None when the whole pictures would take more than `budget` comparisons (a very large
    catalog: the count is left out)."""
    everyone = {**known, **new}
    if len(new) * len(everyone) > budget:
        return None
    ids = np.asarray(list(everyone), dtype=np.int64)
    whole = np.stack([everyone[int(i)][0] for i in ids]) if len(ids) else np.zeros((0, WORDS), np.uint64)
    found = 0
    for pid, mine in new.items():
        close = np.concatenate([distances(mine[:len(ROTATIONS)], whole[i:i + CHUNK]).min(axis=0) <= FULL_BITS
                                for i in range(0, len(whole), CHUNK)]) if len(whole) else np.zeros(0, bool)
        hits = [int(q) for q in ids[close] if int(q) != pid and not apart(pid, int(q))]
        if not hits:
            hits = [q for q, cos in neighbours(pid) if q != pid and q in everyone and cos >= CROP_COSINE
                    and not apart(pid, q) and near(mine, everyone[q], cos)]
        found += bool(hits)
    return found


class Unpacked(Mapping):
    """The hashes of the photos `look` (unpack() of `stored`, photo id -> bytes), each unpacked when first asked
    for: a fold looks at the first few of them only, unless it finds copies."""

    def __init__(self, stored: Mapping[int, bytes], look: Sequence[int]):
        self._stored, self._look, self._done = stored, list(look), {}
        self._ids = set(self._look)

    def __getitem__(self, pid: int) -> np.ndarray | None:
        if pid not in self._done:
            if pid not in self._ids:
                raise KeyError(pid)
            self._done[pid] = unpack(self._stored.get(pid))
        return self._done[pid]

    def __contains__(self, pid: object) -> bool:
        return pid in self._ids

    def __iter__(self) -> Iterator[int]:
        return iter(self._look)

    def __len__(self) -> int:
        return len(self._look)


def fold_results(corpus, ranked: Sequence[tuple[int, float]], k: int,
                 ) -> tuple[list[tuple[int, float]], dict[int, list[int]]]:
    """fold() over a search's ranking with what the corpus knows: the hashes of the photos it looks at (the
    first SCAN_FACTOR x k, so that k results remain after folding), their vectors' cosines and their camera-trap
    deployments. A corpus without hashes (an in-memory one) folds nothing."""
    get = getattr(corpus, "near_hashes", None)
    look = [int(pid) for pid, _ in ranked[:max(SCAN_FACTOR * k, k + SCAN_EXTRA)]]
    if get is None or len(look) < 2:
        return list(ranked), {}
    stored = get(look)
    if not stored:
        return list(ranked), {}
    rows = {pid: i for i, pid in enumerate(look)}
    known: dict[str, Any] = {}  # what only a near pair needs, read when the first one asks (most searches: never)

    def sims() -> np.ndarray | None:
        if "sims" not in known:
            try:
                vecs = np.asarray(corpus.vectors(look), dtype=np.float32)
                vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
                known["sims"] = vecs @ vecs.T
            except (KeyError, IndexError, ValueError):
                known["sims"] = None
        return known["sims"]

    def cosine(a: int, b: int) -> float | None:
        found = sims()
        return None if found is None else float(found[rows[a], rows[b]])

    def apart(a: int, b: int) -> bool:
        if "deployment" not in known:
            camtrap = getattr(corpus, "camtrap", None)
            captures = camtrap.captures(look) if camtrap is not None else {}
            known["deployment"] = {pid: c.deployment_id for pid, c in captures.items() if c.deployment_id is not None}
        deployment = known["deployment"]
        return a in deployment and deployment[a] == deployment.get(b)

    head, copies = fold(ranked[:len(look)], k, Unpacked(stored, look), cosine, apart)
    return head + [(pid, s) for pid, s in ranked[len(look):]], copies
