"""PlugIR's retrieval-context arithmetic (methods.md 4.3 and 4.6): candidate schedule, cosine k-means,
caption entropy, lowest-entropy representatives and the KL question choice. Pure functions on arrays."""
from __future__ import annotations

import numpy as np

PAPER_SOFTMAX_TEMPERATURE = 1.0  # the paper's p(x) = exp(sim(c, x)) / sum exp(sim(c, x')): no extra scale


def candidate_count(round_index: int, pool_size: int, share: float = 0.01, floor: int = 50,
                    cap: int = 500) -> int:
    """n_t: at round 0 about `share` of the pool (the paper: about 1%, e.g. 500 of 50k), at least `floor` and at
    most `cap`; then one tenth of that less each round, never below `floor`; never above the pool."""
    n0 = min(max(1, int(cap)), max(int(floor), int(round(share * pool_size))))
    step = max(1, n0 // 10)
    n = max(int(floor), n0 - round_index * step)
    return max(1, min(n, n0, pool_size))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = np.asarray(x, dtype=np.float64)
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def entropy(p: np.ndarray, axis: int = -1) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    return -np.sum(np.where(p > 0, p * np.log(np.maximum(p, 1e-300)), 0.0), axis=axis)


def cluster(vectors: np.ndarray, m: int, seed: int = 0) -> np.ndarray:
    """Cluster label per row by cosine k-means (FAISS, spherical, seeded). With m >= rows each row is its own
    cluster."""
    x = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if m >= n:
        return np.arange(n, dtype=np.int64)
    import faiss

    km = faiss.Kmeans(x.shape[1], m, niter=20, seed=seed, spherical=True, verbose=False, min_points_per_centroid=1)
    km.train(x)
    _, labels = km.index.search(x, 1)
    return labels[:, 0].astype(np.int64)


def caption_entropies(caption_image_sim: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """H(x) per candidate x: entropy of softmax over the candidate images of scale * sim(caption(x), image)
    (scale = 1 / the softmax temperature).

    caption_image_sim[x, y] = cosine between the caption of candidate x and the image of candidate y."""
    return entropy(softmax(scale * np.asarray(caption_image_sim, dtype=np.float64), axis=1), axis=1)


def representatives(entropies: np.ndarray, labels: np.ndarray) -> list[int]:
    """In each cluster, the candidate with the lowest entropy (ties: the earlier, better-ranked candidate).
    Clusters are listed by their best-ranked member."""
    best: dict[int, int] = {}
    for i, (h, c) in enumerate(zip(entropies, labels)):
        c = int(c)
        if c not in best or h < entropies[best[c]]:
            best[c] = i
    first_member = {int(c): int(np.flatnonzero(labels == c)[0]) for c in best}
    return [best[c] for c in sorted(best, key=lambda c: first_member[c])]


def kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    mask = p > 0
    return float(np.sum(p[mask] * (np.log(p[mask]) - np.log(np.maximum(q[mask], 1e-300)))))


def kl_select(caption_vec: np.ndarray, question_vecs: np.ndarray, image_vecs: np.ndarray,
              scale: float = 1.0) -> tuple[int, list[float]]:
    """Index of the question whose text ("c_t, q") changes the retrieval distribution least:
    argmin_q KL(p_c || p_{c,q}), p = softmax over `image_vecs` (candidates ranked 11..n_t) of the similarity.
    Returns (index, every KL value). Ties go to the earlier question."""
    images = np.asarray(image_vecs, dtype=np.float64)
    p_c = softmax(scale * images @ np.asarray(caption_vec, dtype=np.float64))
    kls = [kl_divergence(p_c, softmax(scale * images @ np.asarray(v, dtype=np.float64))) for v in question_vecs]
    return int(np.argmin(kls)), kls
