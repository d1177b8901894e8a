"""The similarity each hit shows (core.contracts.records.Hit.similarity, on the 0-1 scale of core.search.scales):
its cosine with the query's words, or, for VisRet, with the pictures searched with."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.contracts.search_request import SearchRequest
from core.search import scales


def text_scores(corpus, settings, run, request: SearchRequest, ids: Sequence[int], adjust) -> dict[int, float]:
    """Cosine of the (feedback-adjusted) query text with each photo: scores for cover photos the first
    stage did not return."""
    if not request.query or not ids:
        return {}
    # a photo the catalog's words brought that has no vector (kept without its file) has no similarity
    embedded = getattr(corpus, "embedded", None)
    ids = embedded(ids) if embedded is not None else list(ids)
    if not ids:
        return {}
    vec = adjust(run.embed_text(request.query))
    out = {int(i): float(v @ vec) for i, v in zip(ids, corpus.vectors(list(ids)))}
    # a frame's cosine is its own or its best animal box's, whichever is higher, as the first stage ranked
    # it (core.search.corpus.rank_vector): a frame ranked first through its box never shows a lower number
    # than the frame ranked after it
    crops = getattr(corpus, "crops", None)
    if crops is not None:
        best = crops.best_of(np.asarray(ids, np.int64), lambda m: m @ vec, settings.detection_threshold)
        for i, b in zip(ids, best):
            if b > out.get(int(i), -np.inf):
                out[int(i)] = float(b)
    return out


def similar(corpus, settings, run, request: SearchRequest, hits: list, adjust, stages: dict) -> list:
    """`hits` with their similarity set (core.contracts.records.Hit.similarity): for VisRet, the best cosine with a
    picture searched with (drawings, example photos); else the cosine with the query's words, or, for a
    search by one example photo alone, the ranking score, which is that cosine already."""
    vis = stages.get("visret") or {}
    pictures = vis.get("picture_similarity")
    if pictures:
        sims = dict(pictures)
        # a photo none of the pictures' lists held (brought by the catalog's words): its best cosine with
        # the pictures all the same, so the view keeps one scale
        others = [h.photo_id for h in hits if h.photo_id not in sims]
        embedded = getattr(corpus, "embedded", None)  # one kept without its file has no vector: no similarity
        others = embedded(others) if embedded is not None and others else others
        if others and vis.get("picture_vectors"):
            searched = np.asarray(vis["picture_vectors"], np.float32)
            for i, v in zip(others, corpus.vectors(others)):
                sims[int(i)] = float(np.max(searched @ v))
    elif request.query:
        sims = text_scores(corpus, settings, run, request, [h.photo_id for h in hits], adjust)
    elif (stages.get("examples") or {}).get("fusion") == "none":
        sims = {h.photo_id: h.score for h in hits}
    else:
        sims = {}
    for h in hits:
        h.similarity = scales.similarity(sims.get(h.photo_id))
    return hits
