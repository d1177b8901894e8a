"""Benchmark readers (methods.md section 7) -> lists of EvalItem, each with the benchmark's own pool.

Visual-RAG and Visual-RAG-ME (JSONL) and COCO captions (JSON) are read here; the INQUIRE formats are in
inquire.py. Every reader raises InputError naming the file, the line or record, and the missing field.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.contracts.errors import InputError, NotFoundError
from core.evaluation.items import EvalItem


def _open_text(path: str | Path) -> str:
    p = Path(path)
    if not p.is_file():
        raise NotFoundError(f"benchmark file not found: {p}", "check --data (a file, not a folder)")
    return p.read_text(encoding="utf-8")


def _jsonl_rows(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for n, line in enumerate(_open_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{n}: not valid JSON ({e.msg})", "each line must be one JSON object") from e
        if not isinstance(row, dict):
            raise InputError(f"{path}:{n}: expected a JSON object", "each line must be one JSON object")
        rows.append((n, row))
    if not rows:
        raise InputError(f"{path}: no rows", "the JSONL file is empty")
    return rows


def _need(row: dict, key: str, path: str | Path, n: int) -> Any:
    if key not in row:
        raise InputError(f"{path}:{n}: missing field {key!r}", f"fields present: {', '.join(sorted(row))}")
    return row[key]


def _labels(images: Any, path: str | Path, n: int, what: str) -> dict[str, int]:
    if not isinstance(images, dict) or not images:
        raise InputError(f"{path}:{n}: {what} must be a non-empty object {{image path: 0/1}}",
                         "check that the file is the benchmark's JSONL")
    try:
        return {str(k): int(v) for k, v in images.items()}
    except (TypeError, ValueError) as e:
        raise InputError(f"{path}:{n}: {what} has a label that is not 0/1", "labels must be 0 or 1") from e


def load_visual_rag(path: str | Path, limit: int | None = None) -> list[EvalItem]:
    """Visual-RAG: one item per row; pool = the row's images (one species), relevant = their 0/1 labels.

    Row fields: question, answer (list), images {relative path: 0/1}, sn (scientific name), suggested,
    subset, y_rate, y_count. qid = the row's `id` if present, else "vr-<line>". kind = subset. Every other
    field of the row (sn, answer, y_count, ...; sub_queries in the field guide's many-part file) is kept in extra.
    """
    items = []
    for n, row in _jsonl_rows(path):
        question = str(_need(row, "question", path, n))
        labels = _labels(_need(row, "images", path, n), path, n, "images")
        items.append(EvalItem(
            qid=str(row.get("id", f"vr-{n}")), query=question, kind=str(row.get("subset", "") or ""),
            pool=list(labels), relevant=labels,
            extra={**{k: v for k, v in row.items() if k not in ("question", "images")}, "line": n}))
        if limit and len(items) >= limit:
            break
    return items


def load_visual_rag_me(path: str | Path, limit: int | None = None) -> list[EvalItem]:
    """Visual-RAG-ME: each row is two retrieval items, one per entity, each retrieving in its own pool.

    Row fields: question, images {entity_1: {path: 0/1}, entity_2: {...}}, sn [name1, name2],
    second_entity, y_count [2], y_rate [2]. qids "vrme-<line>-e1" / "-e2"; kind = "entity_1"/"entity_2";
    extra["row"] joins the pair, extra["entity"] names the organism this item looks for.
    """
    items = []
    for n, row in _jsonl_rows(path):
        question = str(_need(row, "question", path, n))
        images = _need(row, "images", path, n)
        if not isinstance(images, dict) or not {"entity_1", "entity_2"} <= set(images):
            raise InputError(f"{path}:{n}: images must hold 'entity_1' and 'entity_2'",
                             "this reader expects the Visual-RAG-ME layout; use --benchmark visual-rag otherwise")
        sn = row.get("sn") or ["", ""]
        y_count, y_rate = row.get("y_count") or [None, None], row.get("y_rate") or [None, None]
        row_id = str(row.get("id", f"vrme-{n}"))
        for i, ent in enumerate(("entity_1", "entity_2")):
            labels = _labels(images[ent], path, n, f"images.{ent}")
            items.append(EvalItem(
                qid=f"{row_id}-e{i + 1}", query=question, kind=ent, pool=list(labels), relevant=labels,
                extra={"row": row_id, "entity": sn[i] if i < len(sn) else "", "sn": sn,
                       "second_entity": row.get("second_entity"), "answer": row.get("answer"),
                       "y_count": y_count[i] if i < len(y_count) else None,
                       "y_rate": y_rate[i] if i < len(y_rate) else None, "line": n}))
        if limit and len(items) >= 2 * limit:
            break
    return items


def load_coco_captions(path: str | Path, limit: int | None = None, image_dir: str = "val2017") -> list[EvalItem]:
    """COCO 2017 val captions (captions_val2017.json): every caption is a query whose single target is its
    image; the pool is the whole corpus. Keys are "<image_dir>/<file_name>" (images root = COCO's root)."""
    try:
        data = json.loads(_open_text(path))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON ({e.msg})", "expected COCO's captions_val2017.json") from e
    if not isinstance(data, dict) or "images" not in data or "annotations" not in data:
        raise InputError(f"{path}: expected an object with 'images' and 'annotations'",
                         "use COCO's annotations/captions_val2017.json")
    files = {}
    for i, img in enumerate(data["images"]):
        if "id" not in img or "file_name" not in img:
            raise InputError(f"{path}: images[{i}] lacks 'id' or 'file_name'", "the file is not COCO's layout")
        files[img["id"]] = f"{image_dir}/{img['file_name']}" if image_dir else img["file_name"]
    items = []
    for i, ann in enumerate(data["annotations"]):
        if "image_id" not in ann or "caption" not in ann:
            raise InputError(f"{path}: annotations[{i}] lacks 'image_id' or 'caption'", "the file is not COCO's layout")
        if ann["image_id"] not in files:
            raise InputError(f"{path}: annotations[{i}] names unknown image {ann['image_id']}",
                             "every caption's image_id must appear in 'images'")
        key = files[ann["image_id"]]
        items.append(EvalItem(qid=f"coco-{ann.get('id', i)}", query=str(ann["caption"]).strip(), kind="caption",
                              relevant={key: 1}, extra={"image_id": ann["image_id"]}))
        if limit and len(items) >= limit:
            break
    return items
