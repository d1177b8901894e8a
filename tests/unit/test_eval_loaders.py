"""Benchmark readers on small files written in each benchmark's exact layout."""
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.contracts.errors import InputError, NotFoundError
from core.evaluation.benchmarks import load_benchmark, prepare_items
from core.evaluation.inquire import load_inquire_fullrank, load_inquire_rerank
from core.evaluation.items import check_images
from core.evaluation.loaders import load_coco_captions, load_visual_rag, load_visual_rag_me

SP = "00855_Animalia_Arthropoda_Insecta_Lepidoptera_Cossidae_Prionoxystus_robiniae"


def _jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_visual_rag_row_becomes_one_item_with_its_species_pool(tmp_path):
    row = {"question": "What colour is the hindwing of the carpenterworm moth?", "answer": ["pinkish"],
           "images": {f"{SP}/a.jpg": 1, f"{SP}/b.jpg": 0, f"{SP}/c.jpg": 1}, "sn": "Prionoxystus robiniae",
           "suggested": True, "subset": "insects", "y_rate": 0.67, "y_count": 2}
    items = load_visual_rag(_jsonl(tmp_path / "vr.jsonl", [row, {**row, "id": "x7"}]))
    assert [i.qid for i in items] == ["vr-1", "x7"]
    it = items[0]
    assert it.pool == [f"{SP}/a.jpg", f"{SP}/b.jpg", f"{SP}/c.jpg"]
    assert it.relevant[f"{SP}/b.jpg"] == 0 and it.n_pos == 2
    assert it.kind == "insects" and it.extra["sn"] == "Prionoxystus robiniae" and it.extra["y_count"] == 2


def test_visual_rag_me_row_becomes_two_items(tmp_path):
    row = {"id": "me-3", "question": "Which has striped primary feathers, Willet or Grey-tailed tattler?",
           "answer": "Willet",
           "images": {"entity_1": {"w/1.jpg": 1, "w/2.jpg": 0}, "entity_2": {"t/1.jpg": 0, "t/2.jpg": 0, "t/3.jpg": 1}},
           "sn": ["Tringa semipalmata", "Tringa brevipes"], "second_entity": "Grey-tailed tattler",
           "y_count": [1, 1], "y_rate": [0.5, 0.33]}
    items = load_visual_rag_me(_jsonl(tmp_path / "me.jsonl", [row]))
    assert [i.qid for i in items] == ["me-3-e1", "me-3-e2"]
    assert items[0].pool == ["w/1.jpg", "w/2.jpg"] and items[1].pool == ["t/1.jpg", "t/2.jpg", "t/3.jpg"]
    assert items[1].extra["entity"] == "Tringa brevipes" and items[1].extra["y_rate"] == 0.33
    assert items[0].extra["row"] == items[1].extra["row"] == "me-3"
    with pytest.raises(InputError, match="entity_1"):
        load_visual_rag_me(_jsonl(tmp_path / "bad.jsonl", [{"question": "q", "images": {"a.jpg": 1}}]))


def test_jsonl_errors_name_the_line(tmp_path):
    p = tmp_path / "vr.jsonl"
    p.write_text('{"question": "q", "images": {"a.jpg": 1}}\n{not json\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"vr.jsonl:2"):
        load_visual_rag(p)
    _jsonl(p, [{"images": {"a.jpg": 1}}])
    with pytest.raises(InputError, match="missing field 'question'"):
        load_visual_rag(p)
    with pytest.raises(NotFoundError):
        load_visual_rag(tmp_path / "nope.jsonl")


def _rerank_table(path):
    rows = []
    for q, sup, labels in (("albino American robin", "Appearance", [0, 1, 0]),
                           ("heron swallowing a fish", "Behavior", [1, 0, 0])):
        for i, rel in enumerate(labels):
            rows.append({"image": {"bytes": b"\x89PNG", "path": None}, "query": q, "relevant": rel,
                         "clip_score": 0.3 - 0.1 * ((i + 1) % 3), "inat24_image_id": 1000 + len(rows),
                         "inat24_file_name": f"train/{q[:3]}/{i}.jpg", "supercategory": sup,
                         "category": "Species", "iconic_group": "Aves", "inat24_species_id": 7,
                         "inat24_species_name": "Turdus migratorius", "latitude": 40.1, "longitude": -75.2,
                         "location_uncertainty": 10.0, "date": "2019-05-01", "license": "cc-by",
                         "rights_holder": "someone"})
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_inquire_rerank_groups_rows_by_query(tmp_path):
    items = load_inquire_rerank(_rerank_table(tmp_path / "test-00000.parquet"))
    assert [i.query for i in items] == ["albino American robin", "heron swallowing a fish"]
    robin = items[0]
    # clip scores of rows 0,1,2 are 0.2, 0.1, 0.3 -> first-stage order 2, 0, 1
    assert robin.pool == ["train/alb/2.jpg", "train/alb/0.jpg", "train/alb/1.jpg"]
    assert robin.relevant == {"train/alb/0.jpg": 0, "train/alb/1.jpg": 1, "train/alb/2.jpg": 0}
    assert robin.kind == "Appearance" and robin.n_pos == 1 and robin.extra["image_ids"]["train/alb/0.jpg"] == 1000
    assert load_benchmark("inquire-rerank", tmp_path)[1].kind == "Behavior"  # a folder of shards works too


def test_inquire_rerank_missing_column(tmp_path):
    pq.write_table(pa.Table.from_pylist([{"query": "x", "relevant": 1}]), tmp_path / "bad.parquet")
    with pytest.raises(InputError, match="inat24_file_name"):
        load_inquire_rerank(tmp_path / "bad.parquet")


def test_inquire_fullrank_two_csvs(tmp_path):
    q = tmp_path / "inquire_queries_test.csv"
    q.write_text("query_id,query_text,supercategory,category,iconic_group\n"
                 "1,A nest with eggs,Context,Nest,Aves\n2,Fox in snow,Context,Habitat,Mammalia\n", encoding="utf-8")
    a = tmp_path / "inquire_annotations.csv"
    a.write_text("query_id,image_id,image_path\n1,11,Aves/11.jpg\n1,12,Aves/12.jpg\n2,21,Mammalia/21.jpg\n",
                 encoding="utf-8")
    items = load_inquire_fullrank(q, a)
    assert [(i.qid, i.query, i.kind) for i in items] == [("1", "A nest with eggs", "Context"),
                                                         ("2", "Fox in snow", "Context")]
    assert items[0].relevant == {"Aves/11.jpg": 1, "Aves/12.jpg": 1} and items[0].whole_corpus
    assert [i.qid for i in load_benchmark("inquire-fullrank", tmp_path)] == ["1", "2"]
    assert len(load_benchmark("inquire-fullrank", f"{q},{a}")) == 2
    a.write_text("query_id,image_id,image_path\n9,91,x.jpg\n", encoding="utf-8")
    with pytest.raises(InputError, match="query_id '9'"):
        load_inquire_fullrank(q, a)
    a.write_text("query_id,image_id\n1,11\n", encoding="utf-8")
    with pytest.raises(InputError, match="image_path"):
        load_inquire_fullrank(q, a)


def test_coco_each_caption_is_a_query(tmp_path):
    data = {"info": {}, "licenses": [],
            "images": [{"id": 139, "file_name": "000000000139.jpg", "height": 426, "width": 640}],
            "annotations": [{"image_id": 139, "id": 1 + i, "caption": f" caption {i} "} for i in range(5)]}
    p = tmp_path / "captions_val2017.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    items = load_coco_captions(p)
    assert len(items) == 5 and items[0].query == "caption 0" and items[0].qid == "coco-1"
    assert items[4].relevant == {"val2017/000000000139.jpg": 1} and items[4].whole_corpus
    assert len(load_coco_captions(p, limit=2)) == 2
    p.write_text(json.dumps({"images": []}), encoding="utf-8")
    with pytest.raises(InputError, match="annotations"):
        load_coco_captions(p)


def test_missing_images_are_counted_listed_and_removed(tmp_path):
    root = tmp_path / "images"
    (root / SP).mkdir(parents=True)
    (root / SP / "a.jpg").write_bytes(b"x")
    row = {"question": "q", "images": {f"{SP}/a.jpg": 1, f"{SP}/b.jpg": 1, f"{SP}/c.jpg": 0}}
    items = load_visual_rag(_jsonl(tmp_path / "vr.jsonl", [row, {**row, "images": {f"{SP}/a.jpg": 0}}]))
    check = check_images(items, root)
    assert check.checked == 3 and check.missing == [f"{SP}/b.jpg", f"{SP}/c.jpg"]
    assert check.items_affected == ["vr-1"] and "2 of 3 images missing" in check.summary()
    prepared = prepare_items(items, root)
    assert prepared.items[0].pool == [f"{SP}/a.jpg"] and prepared.items[0].extra["missing_images"] == 2
    assert prepared.no_positive == ["vr-2"]  # its only image is labelled 0
    assert prepared.to_json()["images"]["missing_count"] == 2
    with pytest.raises(InputError, match="unknown benchmark"):
        load_benchmark("imagenet", tmp_path)
