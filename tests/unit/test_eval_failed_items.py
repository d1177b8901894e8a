"""Items without images fail (listed, out of every mean, counted), never become whole-corpus queries;
INQUIRE-Rerank-Hard's JSON list is read; published rows need the same set."""
from __future__ import annotations

import json

import pytest

from core.contracts.errors import InputError, NotFoundError
from core.evaluation.benchmarks import default_images_root, load_benchmark, prepare_items
from core.evaluation.commands import prepare_or_fail
from core.evaluation.items import EvalItem
from core.evaluation.references import references_for


def items():
    return [EvalItem("pool", "q1", pool=["a/1.jpg", "a/2.jpg"], relevant={"a/1.jpg": 1, "a/2.jpg": 0}),
            EvalItem("gone", "q2", pool=["b/1.jpg", "b/2.jpg"], relevant={"b/1.jpg": 1}),
            EvalItem("corpus", "q3", relevant={"c/1.jpg": 1}),  # whole-corpus item (COCO-like)
            EvalItem("corpus-gone", "q4", relevant={"d/1.jpg": 1})]


def tree(tmp_path, keys):
    for k in keys:
        (tmp_path / k).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / k).write_bytes(b"x")
    return tmp_path


def test_items_without_images_fail_and_are_listed(tmp_path):
    root = tree(tmp_path, ["a/1.jpg", "c/1.jpg"])
    prepared = prepare_items(items(), root)
    assert [it.qid for it in prepared.items] == ["pool", "corpus"]
    assert [f["qid"] for f in prepared.failed] == ["gone", "corpus-gone"]
    assert "none of its 2 images is present" in prepared.failed[0]["reason"]
    kept = prepared.items[0]
    assert kept.pool == ["a/1.jpg"] and kept.extra["missing_images"] == 1  # never an empty (= whole) pool
    notes = prepared.to_json()
    assert notes["items_total"] == 4 and len(notes["failed_items"]) == 2


def test_images_not_in_the_catalog_are_removed_and_can_fail_an_item(tmp_path):
    root = tree(tmp_path, ["a/1.jpg", "a/2.jpg", "b/1.jpg", "c/1.jpg", "d/1.jpg"])
    prepared = prepare_items(items(), root, in_catalog={"a/1.jpg", "c/1.jpg", "d/1.jpg"})
    assert [it.qid for it in prepared.items] == ["pool", "corpus", "corpus-gone"]
    assert [f["qid"] for f in prepared.failed] == ["gone"]
    assert prepared.failed[0]["reason"].startswith("none of its images is in the evaluation catalog")
    assert prepared.items[0].pool == ["a/1.jpg"] and "a/2.jpg" in prepared.not_ingested


def test_nothing_evaluable_raises_listing_every_item(tmp_path):
    with pytest.raises(InputError) as err:
        prepare_or_fail(items(), tmp_path)
    text = str(err.value)
    assert "all 4 items failed" in text and all(f"- {q}:" in text for q in ("pool", "gone", "corpus", "corpus-gone"))


def test_default_images_root_is_the_release_layout(tmp_path):
    data = tmp_path / "data"
    (data / "images").mkdir(parents=True)
    (data / "x.jsonl").write_text("{}")
    assert default_images_root("visual-rag-me", data / "x.jsonl") == data / "images"
    assert default_images_root("inquire-rerank-hard", tmp_path) == data / "images"
    assert default_images_root("coco", data / "x.jsonl") is None


def test_inquire_rerank_hard_json_list(tmp_path):
    entries = [{"query": f"query {q}", "images": {f"sp/{q}_{i}.jpg": int(i == q) for i in range(100)}}
               for q in range(3)]
    path = tmp_path / "inquire_rerank_hard_final.json"
    path.write_text(json.dumps(entries))
    got = load_benchmark("inquire-rerank-hard", tmp_path)  # the folder works too
    assert [it.qid for it in got] == ["hard-1", "hard-2", "hard-3"] and len(got[0].pool) == 100
    assert got[1].relevant["sp/1_1.jpg"] == 1 and got[1].n_pos == 1 and got[0].query == "query 0"
    assert len(load_benchmark("inquire-rerank-hard", path, limit=2)) == 2
    path.write_text(json.dumps({"query": "x"}))
    with pytest.raises(InputError, match="JSON list"):
        load_benchmark("inquire-rerank-hard", path)
    with pytest.raises(NotFoundError):
        load_benchmark("inquire-rerank-hard", tmp_path / "nothing.json")


def test_published_rows_need_the_same_set():
    full = [EvalItem(f"h{i}", "q") for i in range(59)]
    shown, withheld = references_for("inquire-rerank-hard", full)
    assert {r.method for r in shown} == {"baseline", "visret"} and not withheld
    shown, withheld = references_for("inquire-rerank-hard", full, limited=True)
    assert not shown and "--limit" in withheld[0]
    shown, withheld = references_for("inquire-rerank-hard", full[:58])
    assert not shown and "58 items, the paper 59" in withheld[0]
    shown, _ = references_for("inquire-rerank", full)
    assert all(r.benchmark == "inquire-rerank" for r in shown)  # never the Hard subset's rows
