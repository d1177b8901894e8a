"""Synthetic vectors whose neighbour structure resembles CLIP image embeddings of a photo collection, for the
search and scale benchmarks (no pretrained weights can be downloaded here, so real embeddings cannot be
made; these are a stand-in, and the statistics below say how close they come).

What real CLIP ViT-B image embeddings (L2-normalised) look like, and what this generator targets:
- they share a common direction (the "cone effect" described by Liang et al., 2022, "Mind the Gap"), so two
  unrelated photos still have a clearly positive cosine: target 0.1-0.3 (uniform random 512-d vectors: 0.0);
- a photo's nearest neighbours in a large collection are photos of the same kind of subject, typically at
  cosine 0.8-0.9 (LAION's de-duplication treats ~0.95 and above as near-copies, so neighbours sit below that);
- the variance is concentrated in a few dozen directions rather than spread evenly over 512.
These are the figures the EcoLens brief gives for CLIP ViT-B image embeddings, consistent with the
published analyses above; they were not measured here. The benchmarks print the values they measure.

The model: photo = mean direction * m + genus centre + species offset * t + photo noise * s, each term drawn
from the same power-law spectrum (eigenvalue i ~ i^-1) in a random rotation, then L2-normalised. Genera
give graded neighbourhoods (same species > same genus > unrelated), so an IVF index sees realistic list
boundaries instead of tight, well-separated clusters.

    python bench/clip_like.py [--n 100000] [--dim 512]   # the statistics of a sample, next to CLIP's figures
    python bench/clip_like.py --smoke                     # a tiny run for the test suite"""
from __future__ import annotations

import numpy as np

CHUNK = 50_000


class ClipLike:
    def __init__(self, dim: int = 512, *, genera: int = 2_000, species_per_genus: int = 25, seed: int = 0,
                 mean_weight: float = 0.62, species_weight: float = 0.75, noise: float = 0.52, alpha: float = 1.0):
        rng = np.random.default_rng(seed)
        self.dim, self.rng = dim, np.random.default_rng(seed + 1)
        scale = np.arange(1, dim + 1, dtype=np.float64) ** (-alpha / 2)
        self.scale = (scale / np.sqrt((scale ** 2).sum())).astype(np.float32)  # unit expected norm
        q, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
        self.rotation = q.astype(np.float32)
        mean = rng.standard_normal(dim).astype(np.float32)
        self.mean = mean / np.linalg.norm(mean) * mean_weight
        genus = self._draw(rng, genera)
        self.species = (np.repeat(genus, species_per_genus, axis=0)
                        + species_weight * self._draw(rng, genera * species_per_genus))
        self.noise = noise
        # species sizes are skewed, as in iNaturalist (a few common species, a long tail)
        p = 1.0 / np.arange(1, len(self.species) + 1) ** 0.8
        self.p = p / p.sum()

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return (rng.standard_normal((n, self.dim)).astype(np.float32) * self.scale) @ self.rotation

    def sample(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(n unit vectors, the species index of each)."""
        out = np.empty((n, self.dim), np.float32)
        labels = self.rng.choice(len(self.species), size=n, p=self.p)
        for i in range(0, n, CHUNK):
            lab = labels[i:i + CHUNK]
            x = self.mean + self.species[lab] + self.noise * self._draw(self.rng, len(lab))
            out[i:i + len(lab)] = x / np.linalg.norm(x, axis=1, keepdims=True)
        return out, labels


def statistics(base: np.ndarray, queries: np.ndarray, exact_scores: np.ndarray, rng: np.random.Generator) -> dict:
    """Mean random-pair cosine, mean top-1 and top-10 neighbour cosine of the queries, and the effective
    dimension (participation ratio of the covariance spectrum) of a sample."""
    a = base[rng.integers(0, len(base), 20_000)]
    b = base[rng.integers(0, len(base), 20_000)]
    sample = base[rng.integers(0, len(base), min(len(base), 20_000))]
    eig = np.linalg.eigvalsh(np.cov(sample.T.astype(np.float64)))
    return {"random_pair_cosine": float((a * b).sum(1).mean()),
            "top1_cosine": float(exact_scores[:, 0].mean()),
            "top10_cosine": float(exact_scores[:, :10].mean()),
            "effective_dim": float(eig.sum() ** 2 / (eig ** 2).sum())}


def main() -> None:
    """Print the generator's statistics next to the CLIP ViT-B figures it aims at (a quick look, no index)."""
    import argparse

    ap = argparse.ArgumentParser(description="statistics of the CLIP-like vectors against CLIP ViT-B's figures")
    ap.add_argument("--n", type=int, default=100_000, help="vectors to draw")
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--smoke", action="store_true", help="a tiny run (5,000 64-d vectors) for the test suite")
    args = ap.parse_args()
    if args.smoke:
        args.n, args.dim, args.queries = 5_000, 64, 20
    gen = ClipLike(args.dim)
    base, _ = gen.sample(args.n)
    queries, _ = gen.sample(args.queries)
    scores = np.sort(queries @ base.T, axis=1)[:, ::-1][:, :10]  # exact top-10 cosines, no index needed
    stats = statistics(base, queries, scores, np.random.default_rng(1))
    print(f"{args.n:,} vectors of {args.dim} dimensions, {args.queries} held-out queries")
    print(f"random-pair cosine {stats['random_pair_cosine']:.2f} (CLIP: 0.1-0.3), top-1 {stats['top1_cosine']:.2f}, "
          f"top-10 {stats['top10_cosine']:.2f} (CLIP: 0.8-0.9), effective dimension {stats['effective_dim']:.0f}")


if __name__ == "__main__":
    main()
