"""fold() compares each photo with every kept photo at once; it must decide as near() does pair by pair: the
same kept photos and the same copies, on hashes made to be near in each of the ways near() knows (whole picture
at a rotation, a crop either way), with cosines on both sides of the crop guard and photos kept apart."""
from __future__ import annotations

import numpy as np

from core.vectors.near_copies import (
    ROTATIONS,
    SCAN_EXTRA,
    SCAN_FACTOR,
    WINDOWS,
    WORDS,
    fold,
    fold_results,
    near,
    unpack,
)


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


class FakeCorpus:
    """near_hashes, vectors and camtrap.captures over arrays, counting the reads of vectors and captures."""

    def __init__(self, base, vectors, deployment):
        self.base, self.vecs, self.deployment = base, vectors, deployment
        self.reads = {"vectors": 0, "captures": 0}
        self.camtrap = self

    def near_hashes(self, ids):
        return {i: self.base[i].astype(">u8").tobytes() for i in ids if self.base[i] is not None}

    def vectors(self, ids):
        self.reads["vectors"] += 1
        return self.vecs[list(ids)]

    def captures(self, ids):
        from types import SimpleNamespace

        self.reads["captures"] += 1
        return {i: SimpleNamespace(deployment_id=int(self.deployment[i])) for i in ids if self.deployment[i] >= 0}


def eager(corpus, ranked, k):
    """fold_results as it read everything first (hashes unpacked, every cosine, every deployment)."""
    look = [pid for pid, _ in ranked[:max(SCAN_FACTOR * k, k + SCAN_EXTRA)]]
    stored = corpus.near_hashes(look)
    hashes = {pid: unpack(stored.get(pid)) for pid in look}
    vecs = np.asarray(corpus.vecs[look], dtype=np.float32)
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    sims, rows = vecs @ vecs.T, {pid: i for i, pid in enumerate(look)}
    dep = {pid: int(corpus.deployment[pid]) for pid in look if corpus.deployment[pid] >= 0}
    head, copies = fold(ranked[:len(look)], k, hashes, lambda a, b: float(sims[rows[a], rows[b]]),
                        lambda a, b: a in dep and dep[a] == dep.get(b))
    return head + list(ranked[len(look):]), copies


def test_fold_results_reads_what_a_near_pair_needs_only_when_one_asks_and_decides_as_before():
    rng = np.random.default_rng(11)
    layers = len(ROTATIONS) + len(WINDOWS)
    n = 120
    folded, untouched = 0, 0
    for trial in range(12):
        base = list(rng.integers(0, 2**63, size=(n, layers, WORDS), dtype=np.uint64))
        if trial % 3:  # some copies and crops among the photos (none in every third trial)
            for i in range(1, n, 4):
                j = int(rng.integers(0, i))
                if rng.random() < 0.5:
                    base[i][0] = base[j][int(rng.integers(0, len(ROTATIONS)))]
                else:
                    base[i][int(rng.integers(len(ROTATIONS), layers))] = base[j][0]
        for i in rng.choice(n, 8, replace=False):
            base[i] = None  # not hashed
        vecs = rng.normal(size=(n, 8)).astype(np.float32)
        deployment = np.where(rng.random(n) < 0.3, rng.integers(0, 3, n), -1)
        ranked = [(int(i), 1.0 - r / n) for r, i in enumerate(rng.permutation(n))]
        k = int(rng.integers(5, 25))
        corpus = FakeCorpus(base, vecs, deployment)
        got = fold_results(corpus, ranked, k)
        assert got == eager(corpus, ranked, k)
        folded += sum(map(len, got[1].values()))
        if trial % 3 == 0:  # no near pair: neither the vectors nor the deployments were read
            assert not got[1] and corpus.reads == {"vectors": 0, "captures": 0}
            untouched += 1
    assert folded > 0 and untouched == 4
