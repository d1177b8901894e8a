"""The benchmark files are written in the layouts the evaluation reads and hold all four kinds of query."""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from fieldguide.benchmark import write_benchmark
from fieldguide.scene import visible_parts
from fieldguide.world import sample_observations


@pytest.fixture(scope="module")
def obs():
    return sample_observations(seed=0, per_species=40)


def test_benchmark_files_parse_and_cover_four_kinds(tmp_path, obs):
    qs = write_benchmark(tmp_path, obs, seed=0)
    b = tmp_path / "benchmark"
    data = json.loads((b / "queries.json").read_text())
    assert data["synthetic"] is True and len(data["queries"]) == len(qs) >= 60
    kinds = {q["kind"] for q in qs}
    assert kinds == {"feature", "comparison", "behaviour", "many_part"}
    paths = {o.path for o in obs}
    for q in qs:
        assert q["relevant"] and set(q["relevant"]) <= set(q["pool"]) <= paths
    vr = [json.loads(line) for line in (b / "visual_rag.jsonl").read_text().splitlines()]
    assert vr and all({"question", "answer", "images", "sn", "suggested", "subset", "y_rate", "y_count"} <= set(r)
                      for r in vr)
    assert all(sum(r["images"].values()) == r["y_count"] for r in vr)
    me = [json.loads(line) for line in (b / "visual_rag_me.jsonl").read_text().splitlines()]
    assert me and all(set(r["images"]) == {"entity_1", "entity_2"} and len(r["sn"]) == 2 and
                      len(r["y_count"]) == 2 and r["second_entity"] == r["sn"][1] for r in me)
    table = pq.read_table(b / "inquire_rerank.parquet").to_pylist()
    cols = {"image", "query", "relevant", "clip_score", "inat24_image_id", "inat24_file_name", "supercategory",
            "category", "iconic_group", "inat24_species_id", "inat24_species_name", "latitude", "longitude",
            "location_uncertainty", "date", "license", "rights_holder"}
    assert cols <= set(table[0])
    per_query: dict[str, int] = {}
    for row in table:
        per_query[row["query"]] = per_query.get(row["query"], 0) + 1
    assert max(per_query.values()) <= 100 and len(per_query) == sum(q["kind"] == "behaviour" for q in qs)


def test_many_part_queries_need_several_pictures(obs):
    from fieldguide.benchmark import build_queries

    for q in (q for q in build_queries(obs) if q["kind"] == "many_part"):
        subs = [set(s["relevant"]) for s in q["sub_queries"]]
        assert len(subs) >= 2 and all(subs)
        assert not set.intersection(*subs), q["text"]


def test_feature_relevance_means_the_part_is_visible(obs):
    from fieldguide.benchmark import build_queries

    by_path = {o.path: o for o in obs}
    for q in (q for q in build_queries(obs) if q["kind"] == "feature"):
        for p in q["pool"]:
            assert (p in q["relevant"]) == (q["part"] in visible_parts(by_path[p].scene))
        assert len(q["relevant"]) < len(q["pool"])
