"""The evaluation's methods are the engine's named searches: each benchmark item becomes a request from the
core.search.presets catalog (the item's own pool, and for Visual-RAG-ME the organism it is scored on), run by the
same SearchEngine the web app uses, and scored on the result's final ranking (`result.hits`)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Mapping

from core.contracts.errors import InputError
from core.contracts.records import Filters
from core.contracts.search_request import SearchRequest
from core.evaluation.items import EvalItem
from core.evaluation.runner import MethodOutput
from core.search.presets import request_for

MIN_DEPTH = 100  # results fetched per item (at least the whole pool)


def photo_keys(photos, images_root: str | None) -> dict[int, str]:
    """Catalog photo id -> the benchmark's key for it: the INQUIRE file name, else the path relative to the
    images root."""
    root = Path(images_root).resolve() if images_root else None
    keys: dict[int, str] = {}
    for photo in photos:
        key = photo.extra.get("inat24_file_name") if isinstance(photo.extra, dict) else None
        if not key:
            key = photo.path
            if root is not None and Path(photo.path).is_absolute():
                try:
                    key = os.path.relpath(photo.path, root)
                except ValueError:
                    pass
        keys[photo.id] = str(key)
    return keys


def organism_of(item: EvalItem) -> int | None:
    """Visual-RAG-ME items (kind "entity_1"/"entity_2", qid ending "-e1"/"-e2") look for one organism of a
    comparison: 0 or 1. Every other item: None."""
    kind = str(getattr(item, "kind", "") or "")
    if kind in ("entity_1", "entity_2"):
        return int(kind[-1]) - 1
    qid = str(item.qid)
    if qid.endswith(("-e1", "-e2")):
        return int(qid[-1]) - 1
    return None


def organism_name_of(item: EvalItem) -> str:
    """The scientific name of the organism a Visual-RAG-ME item is scored on (sn[i] of entity_i), '' else."""
    if organism_of(item) is None:
        return ""
    return " ".join(str(item.extra.get("entity") or "").split())


def item_request(item: EvalItem, method: str, id_of: Mapping[str, int]) -> SearchRequest:
    """The request that runs one benchmark item with one named method: the item's own pool (a whole-corpus
    item searches the evaluation catalog, which holds only the benchmark's photos), and for Visual-RAG-ME the
    organism it is scored on, by name (each organism is retrieved on its own; by position only when the row
    names none)."""
    ids = tuple(id_of[k] for k in item.pool if k in id_of)
    if item.pool and not ids:
        raise InputError(f"none of query {item.qid}'s images is in the catalog",
                         "ingest the benchmark's images (--images ROOT) first")
    return request_for(method, item.query, k=max(len(ids), MIN_DEPTH), filters=Filters(ids=ids) if ids else None,
                       organism=organism_of(item), organism_name=organism_name_of(item))


def engine_methods(engine, names, id_of: Mapping[str, int],
                   key_of: Mapping[int, str]) -> dict[str, Callable[[EvalItem], MethodOutput]]:
    """name -> method(item) running the named search on `engine` and returning the benchmark keys of its final
    ranking, its costs and notices."""
    def make(name: str):
        def method(item: EvalItem) -> MethodOutput:
            result = engine.search(item_request(item, name, id_of))
            cache = result.stages.get("cache", {})
            calls = cache.get("calls", {})
            cost = {"llm_calls": calls.get("llm", 0), "judge_calls": calls.get("judge", 0),
                    "generator_calls": calls.get("generator", 0), "cache_hits": cache.get("cache_hits_total", 0),
                    "ms": result.timings_ms.get("total", 0.0)}
            kept = [h for h in result.hits if h.photo_id in key_of]
            scores = {h.photo_id: float(h.score) for h in kept}
            rerank = result.stages.get("rerank") or {}
            if rerank.get("order_unchanged"):  # the checks moved no photo: scored by the first stage's scores
                scores.update({int(p["id"]): float(p["first_score"]) for p in rerank.get("photos") or []
                               if p.get("first_score") is not None})
            return MethodOutput([key_of[h.photo_id] for h in kept], cost, result.notices,
                                scores={key_of[h.photo_id]: scores[h.photo_id] for h in kept},
                                ids=[h.photo_id for h in kept], order_unchanged=bool(rerank.get("order_unchanged")))
        return method
    return {name: make(name) for name in names}
