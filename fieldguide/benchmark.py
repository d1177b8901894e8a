"""The field-guide world's benchmark: four kinds of query with relevance read from the ground truth.

- feature: a colour question whose evidence needs one part (pool: that species; relevant: the part is visible)
- comparison: the same part on two species of one body plan (two retrieval items, like Visual-RAG-ME)
- behaviour: an action or context anywhere in the world (a fixed list of 100 candidates, like INQUIRE-Rerank)
- many_part: two or three sub-queries that no single picture satisfies together (like Cross-modal RAG)

Files under <world>/benchmark/: queries.json (all), visual_rag.jsonl, visual_rag_me.jsonl, many_part.jsonl,
inquire_rerank.parquet (its `image` column holds the picture's path relative to the world folder, not bytes).
"""
from __future__ import annotations

import json
import random
from itertools import combinations
from pathlib import Path
from typing import Callable

from fieldguide.queries import BEHAVIOUR_QUERIES, FEATURE_PARTS, MULTI_PART, feature_text, part_answer
from fieldguide.scene import visible_parts
from fieldguide.species import PART_PHRASE, PLAN_NOUN, SPECIES

Pred = Callable[[object], bool]


def _paths(obs, pred: Pred) -> list[str]:
    return [o.path for o in obs if pred(o)]


def _visible(part: str) -> Pred:
    return lambda o: part in visible_parts(o.scene)


def _feature_queries(obs) -> list[dict]:
    out = []
    for sp in SPECIES:
        pool = [o for o in obs if o.species is sp]
        for part in FEATURE_PARTS[sp.plan]:
            rel = _paths(pool, _visible(part))
            if rel:
                out.append({"kind": "feature", "text": feature_text(sp, part), "answer": [part_answer(sp, part)],
                            "species": sp.scientific_name, "part": part, "relevant": rel,
                            "pool": [o.path for o in pool]})
    return out


def _comparison_queries(obs) -> list[dict]:
    out = []
    for plan in PLAN_NOUN:
        group = [s for s in SPECIES if s.plan == plan]
        for a, b in combinations(group, 2):
            differing = [p for p in FEATURE_PARTS[plan] if part_answer(a, p) != part_answer(b, p)]
            for part in (differing or FEATURE_PARTS[plan])[:2]:
                phrase = PART_PHRASE.get(part, part)
                plural = part in ("wings", "legs", "petals", "markings")
                verb, those = ("do", "those") if plural else ("does", "that")
                ents = []
                for sp in (a, b):
                    pool = [o for o in obs if o.species is sp]
                    ents.append({"name": sp.scientific_name, "common_name": sp.common_name,
                                 "text": feature_text(sp, part), "answer": part_answer(sp, part),
                                 "relevant": _paths(pool, _visible(part)), "pool": [o.path for o in pool]})
                if all(e["relevant"] for e in ents):
                    out.append({"kind": "comparison", "part": part, "entities": ents,
                                "text": f"How {verb} the {phrase} of the {a.common_name} ({a.scientific_name}) "
                                        f"differ from {those} of the {b.common_name} ({b.scientific_name})?",
                                "answer": [ents[0]["answer"], ents[1]["answer"]],
                                "relevant": ents[0]["relevant"] + ents[1]["relevant"],
                                "pool": ents[0]["pool"] + ents[1]["pool"]})
    return out


def _behaviour_queries(obs, rng: random.Random) -> list[dict]:
    out = []
    for text, supercat, category, cond in BEHAVIOUR_QUERIES:
        rel_all = _paths(obs, lambda o, cond=cond: cond(o.scene))
        rel = rel_all
        if len(rel) < 2:
            continue
        rel = sorted(rng.sample(rel, 50)) if len(rel) > 50 else rel
        plan = next(o.species.plan for o in obs if o.path == rel[0])
        hard = [o.path for o in obs if o.species.plan == plan and not cond(o.scene)]
        easy = [o.path for o in obs if o.species.plan != plan]
        neg = rng.sample(hard, min(len(hard), (100 - len(rel)) * 2 // 3))
        neg += rng.sample(easy, min(len(easy), 100 - len(rel) - len(neg)))
        pool = rel + neg
        rng.shuffle(pool)
        out.append({"kind": "behaviour", "text": text, "supercategory": supercat, "category": category,
                    "iconic_group": plan, "relevant": rel, "all_relevant_in_world": len(rel_all),
                    "pool": pool})
    return out


def _many_part_queries(obs, rng: random.Random) -> list[dict]:
    out = []
    everything = [o.path for o in obs]
    for sp in SPECIES:  # two parts of one species that no single view shows together
        pair = MULTI_PART.get(sp.plan)
        if pair:
            subs = [{"text": f"{sp.common_name} {part_answer(sp, p)} {PART_PHRASE[p]}", "core": sp.common_name,
                     "relevant": _paths([o for o in obs if o.species is sp], _visible(p))} for p in pair]
            c = [f"{part_answer(sp, p)} {PART_PHRASE[p]}" for p in pair]
            out.append({"kind": "many_part", "sub_queries": subs,
                        "text": f"{sp.common_name} showing both its {c[0]} and its {c[1]}"})
    picks = list(SPECIES)
    for _ in range(12):  # scenes with two or three different species, each doing one thing
        chosen = rng.sample(picks, rng.choice((2, 3)))
        subs = []
        for sp in chosen:
            o = rng.choice([o for o in obs if o.species is sp])
            field, value, words = rng.choice(_scene_facets(o.scene))
            subs.append({"text": f"{sp.common_name} {words}", "core": sp.common_name,
                         "relevant": _paths(obs, lambda x, sp=sp, f=field, v=value:
                                            x.species is sp and getattr(x.scene, f) == v)})
        out.append({"kind": "many_part", "sub_queries": subs,
                    "text": ", ".join(s["text"] for s in subs[:-1]) + " and " + subs[-1]["text"]})
    for q in out:
        q["relevant"] = sorted({p for s in q["sub_queries"] for p in s["relevant"]})
        q["pool"] = everything
    return out


def _scene_facets(s) -> list[tuple[str, str, str]]:
    facets = [("habitat", s.habitat, {"water": "over water", "grass": "in grass", "sky": "against the sky",
                                      "bark": "on tree bark", "sand": "on sand"}[s.habitat])]
    if s.behaviour not in ("none", "swimming"):
        facets.append(("behaviour", s.behaviour, s.behaviour + (f" a {s.item}" if s.behaviour == "carrying" else "")))
    if s.pose in ("bud", "open", "leaping", "curled", "spread"):
        facets.append(("pose", s.pose, {"bud": "in bud", "open": "in full bloom", "leaping": "leaping",
                                        "curled": "caterpillar curled up", "spread": "with wings spread"}[s.pose]))
    if s.stage != "adult":
        facets.append(("stage", s.stage, s.stage))
    return facets


def build_queries(obs, seed: int = 0) -> list[dict]:
    """Every query of the benchmark with relevant paths, pool and (for many-part ones) sub-queries."""
    rng = random.Random(f"fieldguide-benchmark:{seed}")
    qs = _feature_queries(obs) + _comparison_queries(obs) + _behaviour_queries(obs, rng) + \
        _many_part_queries(obs, rng)
    for i, q in enumerate(qs):
        q["id"] = f"fg-{q['kind']}-{i:03d}"
    return qs


def _labels(pool: list[str], rel: list[str]) -> dict[str, int]:
    rs = set(rel)
    return {p: int(p in rs) for p in pool}


def _rate(rel, pool) -> float:
    return round(len(rel) / max(1, len(pool)), 4)


def write_benchmark(out_dir: Path, obs, seed: int = 0) -> list[dict]:
    """Write the benchmark files into out_dir/benchmark/ and return the queries."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    bdir = Path(out_dir) / "benchmark"
    bdir.mkdir(parents=True, exist_ok=True)
    qs = build_queries(obs, seed)
    (bdir / "queries.json").write_text(json.dumps({"synthetic": True, "seed": seed, "queries": qs}, indent=1))
    with open(bdir / "visual_rag.jsonl", "w") as fh:
        for q in (q for q in qs if q["kind"] == "feature"):
            fh.write(json.dumps({"id": q["id"], "question": q["text"], "answer": q["answer"],
                                 "images": _labels(q["pool"], q["relevant"]), "sn": q["species"],
                                 "suggested": f"look for the {PART_PHRASE[q['part']]}", "subset": "fieldguide",
                                 "y_rate": _rate(q["relevant"], q["pool"]), "y_count": len(q["relevant"])}) + "\n")
    with open(bdir / "visual_rag_me.jsonl", "w") as fh:
        for q in (q for q in qs if q["kind"] == "comparison"):
            e1, e2 = q["entities"]
            fh.write(json.dumps({"id": q["id"], "question": q["text"], "answer": q["answer"],
                                 "images": {"entity_1": _labels(e1["pool"], e1["relevant"]),
                                            "entity_2": _labels(e2["pool"], e2["relevant"])},
                                 "sn": [e1["name"], e2["name"]], "second_entity": e2["name"],
                                 "y_count": [len(e1["relevant"]), len(e2["relevant"])],
                                 "y_rate": [_rate(e1["relevant"], e1["pool"]), _rate(e2["relevant"], e2["pool"])],
                                 "subset": "fieldguide"}) + "\n")
    with open(bdir / "many_part.jsonl", "w") as fh:
        for q in (q for q in qs if q["kind"] == "many_part"):
            fh.write(json.dumps({"id": q["id"], "question": q["text"], "answer": [],
                                 "images": _labels(q["pool"], q["relevant"]), "sn": "",
                                 "sub_queries": [{"text": s["text"], "core": s["core"], "relevant": s["relevant"]}
                                                 for s in q["sub_queries"]],
                                 "subset": "fieldguide", "y_rate": _rate(q["relevant"], q["pool"]),
                                 "y_count": len(q["relevant"])}) + "\n")
    by_path = {o.path: (i, o) for i, o in enumerate(obs)}
    species_ids = {s.scientific_name: i for i, s in enumerate(SPECIES)}
    rows = []
    for q in (q for q in qs if q["kind"] == "behaviour"):
        rel = set(q["relevant"])
        for p in q["pool"]:
            i, o = by_path[p]
            rows.append({"image": p, "query": q["text"], "relevant": int(p in rel), "clip_score": float("nan"),
                         "inat24_image_id": i, "inat24_file_name": p, "supercategory": q["supercategory"],
                         "category": q["category"], "iconic_group": q["iconic_group"],
                         "inat24_species_id": species_ids[o.species.scientific_name],
                         "inat24_species_name": o.species.scientific_name, "latitude": round(o.latitude, 5),
                         "longitude": round(o.longitude, 5), "location_uncertainty": 0,
                         "date": o.observed_on.isoformat(), "license": "CC0-1.0",
                         "rights_holder": "EcoLens synthetic world"})
    pq.write_table(pa.Table.from_pylist(rows), bdir / "inquire_rerank.parquet")
    return qs
