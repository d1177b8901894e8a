"""Benchmark: hybrid retrieval (the query's words searched in what the catalog records, fused with the vectors)
against the vector-only first stage, with the offline stand-in models, Fast (the first stage alone), on two
collections built here:

- the field-guide benchmark: the demo world and its own queries (feature, behaviour and many-part queries, ranked
  over the whole world; relevance from the ground truth). The world's notes say what each picture shows
  ("Visible: white belly"), so the catalog's text is strong evidence there: a benchmark whose protocol ranks
  pictures alone (INQUIRE, Visual-RAG) runs with hybrid retrieval off (`eval` without --hybrid).
- a mixed collection: the same world plus a user's folder of photos (drawn here) and a CSV that catalogues half
  of them (tests/mixed_collection.py); queries are the catalogued common names, their plurals, the scientific
  names, a synonym, the higher taxa and group words, relevance the photos catalogued under that taxon; and the
  world's feature queries again, to see that the user's photos do not hurt them.

Both rankings come from one engine on one catalog, the setting hybrid_retrieval switched per query, so the two
differ in nothing else. Prints nDCG@10 and recall@10 of each, and the ratio hybrid / vector-only of nDCG@10.

    python bench/hybrid.py [--per-species 6]
    python bench/hybrid.py --smoke   # tiny run for the test suite
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from bench.cache import offline_backends

KINDS = ("feature", "behaviour", "many_part")


def world_items(world: Path, key_of: dict[str, int], limit: int) -> list[tuple[str, str, dict[str, int]]]:
    """(kind, text, relevant ids as keys) of the world's benchmark queries, `limit` of each kind at most."""
    qs = json.loads((world / "benchmark" / "queries.json").read_text())["queries"]
    out = []
    for kind in KINDS:
        for q in [q for q in qs if q["kind"] == kind][:limit]:
            rel = {str(key_of[p]): 1 for p in q["relevant"] if p in key_of}
            if rel:
                out.append((f"field guide: {kind}", q["text"], rel))
    return out


def mixed_items(truth: dict[str, set[int]]) -> list[tuple[str, str, dict[str, int]]]:
    """The mixed collection's catalog queries: names, plurals, scientific names, a synonym, higher taxa, groups."""
    from tests.mixed_collection import CATALOGUED

    out = []
    for sci, common, _cls, _order, _family, synonym, _ in CATALOGUED:
        rel = {str(i): 1 for i in truth[sci]}
        out += [("mixed: common name", common.lower(), rel), ("mixed: plural", common.lower() + "s", rel),
                ("mixed: scientific name", sci, rel)]
        if synonym:
            out.append(("mixed: synonym", synonym, rel))
    for taxon in ("Mammalia", "Aves", "Carnivora", "Felidae", "Cervidae"):
        out.append(("mixed: higher taxon", taxon, {str(i): 1 for i in truth[taxon]}))
    for word, taxon in (("a bird", "Aves"), ("a mammal", "Mammalia"), ("a cat", "Felidae"), ("a deer", "Cervidae")):
        out.append(("mixed: group word", word, {str(i): 1 for i in truth[taxon]}))
    return out


def evaluate(services, items, label: str) -> dict[str, dict[str, float]]:
    """Per kind: nDCG@10 and recall@10 of Fast with hybrid retrieval off and on."""
    from core.evaluation.metrics import ndcg_at_k, recall_at_k
    from core.search.presets import request_for

    engine = services.engine
    base = engine.settings
    scores: dict[str, dict[str, list[float]]] = {}
    try:
        for kind, text, rel in items:
            for mode in ("vectors", "hybrid"):
                engine.settings = base.replace(hybrid_retrieval=mode == "hybrid")
                res = engine.search(request_for("Fast", text, k=10))
                ranking = [str(h.photo_id) for h in res.hits]
                s = scores.setdefault(kind, {})
                s.setdefault(f"{mode} ndcg", []).append(ndcg_at_k(ranking, rel, 10))
                s.setdefault(f"{mode} recall", []).append(recall_at_k(ranking, rel, 10))
    finally:
        engine.settings = base
    out = {kind: {m: statistics.fmean(v) for m, v in s.items()} | {"queries": len(s["vectors ndcg"])}
           for kind, s in scores.items()}
    print(f"{label}: {len(items)} queries")
    print(f"  {'kind':32s} {'n':>4s} {'nDCG@10 vectors':>16s} {'hybrid':>8s} {'recall@10 vectors':>18s} {'hybrid':>8s}")
    for kind, m in out.items():
        print(f"  {kind:32s} {m['queries']:4d} {m['vectors ndcg']:16.3f} {m['hybrid ndcg']:8.3f} "
              f"{m['vectors recall']:18.3f} {m['hybrid recall']:8.3f}")
    return out


def overall(per_kind: dict[str, dict[str, float]], prefix: str) -> tuple[float, float]:
    """Query-weighted mean nDCG@10 (vectors, hybrid) over the kinds starting with `prefix`."""
    kinds = [m for k, m in per_kind.items() if k.startswith(prefix)]
    n = sum(m["queries"] for m in kinds)
    return (sum(m["vectors ndcg"] * m["queries"] for m in kinds) / n,
            sum(m["hybrid ndcg"] * m["queries"] for m in kinds) / n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-species", type=int, default=6, help="pictures per species of the demo world")
    ap.add_argument("--per-kind", type=int, default=40, help="field-guide queries per kind at most")
    ap.add_argument("--smoke", action="store_true", help="a tiny run (2 per species, 3 queries a kind)")
    args = ap.parse_args(argv)
    per_species, per_kind = (2, 3) if args.smoke else (args.per_species, args.per_kind)

    from app import build_services
    from core.config import load_settings
    from fieldguide.world import build_world
    from tests.mixed_collection import add_user_photos

    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "world"
        csv_path = build_world(world, seed=0, per_species=per_species, benchmark=True)
        settings = load_settings(environ={}, data_dir=str(Path(tmp) / "data"), llm="rule", captioner="metadata",
                                 **offline_backends())
        services = build_services(settings)
        services.ingestor().run(str(csv_path), None)
        services.corpus.reload()
        key_of = {str(Path(p.path).relative_to(world)) if Path(p.path).is_absolute() else p.path: p.id
                  for p in services.catalog.all_photos()}
        items = world_items(world, key_of, per_kind)
        alone = evaluate(services, items, f"field-guide world alone ({services.catalog.count()} photos)")
        truth = add_user_photos(services, Path(tmp))
        mixed = evaluate(services, mixed_items(truth) + items,
                         f"mixed collection ({services.catalog.count()} photos: the world, 16 of the user's, "
                         "8 catalogued by a CSV)")
    fv, fh = overall(alone, "field guide")
    mv, mh = overall(mixed, "mixed")
    wv, wh = overall(mixed, "field guide")
    print(f"field guide nDCG@10 vectors {fv:.3f} hybrid {fh:.3f}; mixed catalog queries vectors {mv:.3f} hybrid "
          f"{mh:.3f}; field guide on the mixed collection vectors {wv:.3f} hybrid {wh:.3f}")
    print(f"ratio hybrid / vectors nDCG@10: field guide {fh / max(fv, 1e-9):.2f}, mixed {mh / max(mv, 1e-9):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
