"""Baseline text -> image retrieval on the field-guide benchmark, scored with standard nDCG@k against the
exact expected nDCG@k of a random ranking. Works directly on the world folder with numpy (no catalog)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from PIL import Image


def ndcg_at_k(ranked_relevance: list[int], n_relevant: int, k: int = 10) -> float:
    """Standard nDCG@k: gain rel / log2(p + 1) over the top k; ideal from all relevant items of the pool."""
    dcg = sum(r / math.log2(p + 2) for p, r in enumerate(ranked_relevance[:k]))
    ideal = sum(1 / math.log2(p + 2) for p in range(min(n_relevant, k)))
    return dcg / ideal if ideal > 0 else 0.0


def random_ndcg_at_k(n_relevant: int, pool_size: int, k: int = 10) -> float:
    """Expected nDCG@k of a uniformly random order (each rank is relevant with probability R / N)."""
    ideal = sum(1 / math.log2(p + 2) for p in range(min(n_relevant, k)))
    if ideal == 0 or pool_size == 0:
        return 0.0
    expected = (n_relevant / pool_size) * sum(1 / math.log2(p + 2) for p in range(min(k, pool_size)))
    return expected / ideal


def retrieval_items(queries: list[dict], whole_world: bool, everything: list[str]) -> list[dict]:
    """One (text, pool, relevant, kind) item per retrieval; a comparison gives two (one per entity)."""
    items = []
    for q in queries:
        if q["kind"] == "comparison":
            for e in q["entities"]:
                items.append({"kind": "comparison", "text": q["text"], "relevant": e["relevant"],
                              "pool": everything if whole_world else e["pool"]})
        else:
            items.append({"kind": q["kind"], "text": q["text"], "relevant": q["relevant"],
                          "pool": everything if whole_world else q["pool"]})
    return items


def evaluate_baseline(world_dir: Path, embedder, k: int = 10) -> dict:
    """nDCG@k of the baseline (query text vs picture embeddings) and of a random ranking, per kind and overall,
    on the benchmark's own pools and on the whole world as the pool."""
    world_dir = Path(world_dir)
    queries = json.loads((world_dir / "benchmark" / "queries.json").read_text())["queries"]
    import csv

    with open(world_dir / "observations.csv", newline="", encoding="utf-8") as fh:
        paths = [r["path"] for r in csv.DictReader(fh)]
    index = {p: i for i, p in enumerate(paths)}
    img = np.concatenate([embedder.embed_images([Image.open(world_dir / p) for p in paths[i:i + 64]])
                          for i in range(0, len(paths), 64)])
    report: dict = {"k": k, "pictures": len(paths), "queries": len(queries)}
    for mode in ("benchmark_pools", "whole_world"):
        items = retrieval_items(queries, mode == "whole_world", paths)
        txt = embedder.embed_texts([it["text"] for it in items])
        per: dict[str, list[tuple[float, float]]] = {}
        for it, t in zip(items, txt):
            pool = np.array([index[p] for p in it["pool"]])
            scores = img[pool] @ t
            order = pool[np.argsort(-scores, kind="stable")]
            rel = set(index[p] for p in it["relevant"])
            ranked = [int(i in rel) for i in order[:k]]
            per.setdefault(it["kind"], []).append((ndcg_at_k(ranked, len(rel), k),
                                                   random_ndcg_at_k(len(rel), len(pool), k)))
        everyone = [v for vals in per.values() for v in vals]
        report[mode] = {kind: {"baseline": round(float(np.mean([a for a, _ in v])), 4),
                               "random": round(float(np.mean([b for _, b in v])), 4), "items": len(v)}
                        for kind, v in sorted(per.items())}
        report[mode]["all"] = {"baseline": round(float(np.mean([a for a, _ in everyone])), 4),
                               "random": round(float(np.mean([b for _, b in everyone])), 4),
                               "items": len(everyone)}
    return report


def format_report(report: dict) -> str:
    lines = [f"nDCG@{report['k']} on the synthetic field-guide world ({report['pictures']} pictures, "
             f"{report['queries']} queries): baseline vs random"]
    for mode in ("benchmark_pools", "whole_world"):
        lines.append(f"  pools = {mode.replace('_', ' ')}")
        for kind, v in report[mode].items():
            ratio = v["baseline"] / v["random"] if v["random"] else float("inf")
            lines.append(f"    {kind:<11} baseline {v['baseline']:.3f}  random {v['random']:.3f}  "
                         f"x{ratio:.2f}  ({v['items']} items)")
    return "\n".join(lines)
