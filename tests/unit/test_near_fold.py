"""fold() compares each photo with every kept photo at once; it must decide as near() does pair by pair: the
same kept photos and the same copies, on hashes made to be near in each of the ways near() knows (whole picture
at a rotation, a crop either way), with cosines on both sides of the crop guard and photos kept apart."""
from __future__ import annotations

import numpy as np

from core.vectors.near_copies import ROTATIONS, WINDOWS, WORDS, fold, near


def pair_by_pair(ranked, k, hashes, cosine, apart):
    """The rule as near() states it, one pair at a time (what fold() decided before it compared at once)."""
    kept, copies = [], {}
    for pid, score in ranked:
        if len(kept) >= k:
            break
        mine = hashes.get(pid)
        home = None if mine is None else next(
            (q for q, _ in kept if hashes.get(q) is not None and not apart(pid, q)
             and near(mine, hashes[q], cosine(pid, q))), None)
        if home is None:
            kept.append((pid, score))
        else:
            copies.setdefault(home, []).append(pid)
    return kept, copies


def test_fold_decides_as_near_does_pair_by_pair():
    rng = np.random.default_rng(7)
    layers = len(ROTATIONS) + len(WINDOWS)
    folded = 0
    for trial in range(30):
        n = 40
        base = rng.integers(0, 2**63, size=(n, layers, WORDS), dtype=np.uint64)
        for i in range(1, n):  # make some photos near earlier ones in each way
            j = int(rng.integers(0, i))
            way = rng.integers(0, 4)
            if way == 1:
                base[i, 0] = base[j, int(rng.integers(0, len(ROTATIONS)))]
            elif way == 2:
                base[i, int(rng.integers(len(ROTATIONS), layers))] = base[j, int(rng.integers(0, len(ROTATIONS)))]
            elif way == 3:
                base[i, int(rng.integers(0, len(ROTATIONS)))] = base[j, int(rng.integers(len(ROTATIONS), layers))]
        hashes = {i: (None if rng.random() < 0.1 else base[i]) for i in range(n)}
        cos = rng.uniform(0, 1, size=(n, n))
        cosine = (lambda a, b: None) if trial % 5 == 0 else (lambda a, b, cos=cos: float(cos[a, b]))
        deployment = rng.integers(0, 6, size=n)

        def apart(a, b, deployment=deployment):
            return bool(deployment[a] == deployment[b]) and a % 3 == 0

        ranked = [(i, 1.0 - i / n) for i in range(n)]
        k = int(rng.integers(3, 25))
        kept, copies = fold(ranked, k, hashes, cosine, apart)
        want_kept, want_copies = pair_by_pair(ranked, k, hashes, cosine, apart)
        assert kept[:len(want_kept)] == want_kept and copies == want_copies
        folded += sum(len(v) for v in copies.values())
    assert folded > 0, "the trials folded nothing: they would not tell the two ways apart"
