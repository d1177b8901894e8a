"""Pareto coverage stage (methods.md 5): sub-queries, sparse and dense satisfaction, the non-dominated
photos with what each covers, the sub-queries nobody covers, and an optional generated reference picture."""
from __future__ import annotations

from typing import Any

import numpy as np

from core.backends.metadata_captioner import describe
from core.methods.cache import key_of
from core.methods.decompose import CaptionTerms, satisfies
from core.methods.llm_tasks import decompose, short_error
from core.methods.pareto import pareto_front, uncovered
from core.methods.run import Run
from core.prompts.coverage import reference_prompt

MAX_CANDIDATES = 20_000  # with pareto_top_m = 0, larger pools are cut to the dense top this many
CAPTIONED = 50  # photos also captioned by a real captioner (the dense top ones)
DENSE_NOTE = ("coverage: the dense score uses each photo's global image embedding (no sub-query-specific "
              "adaptor as in the paper)")


def _candidates(run: Run, pool, dense_of) -> tuple[np.ndarray, np.ndarray]:
    s = run.settings
    index = run.search.index
    if pool is None:
        ids, mat = index.ids(), index.matrix()
    else:
        ids = np.asarray([i for i in pool if index.contains(int(i))], dtype=np.int64)
        mat = index.vectors(ids) if len(ids) else np.zeros((0, index.matrix().shape[1] if len(index) else 0))
    dense = dense_of(mat) if len(ids) else np.zeros(0)
    top = s.pareto_top_m or (MAX_CANDIDATES if len(ids) > MAX_CANDIDATES else 0)
    if top and len(ids) > top:
        if not s.pareto_top_m:
            run.notice(f"coverage looked only at the {top} photos with the best dense score")
        keep = np.argsort(-dense, kind="stable")[:top]
        ids, dense = ids[keep], dense[keep]
    return np.asarray(ids, dtype=np.int64), np.asarray(dense, dtype=np.float64)


def run_coverage(run: Run, query: str, pool, reference: bool = False) -> dict[str, Any]:
    with run.timed("decompose"):
        subs = decompose(run.backends.llm, query, run.notices)
    run.notice(DENSE_NOTE)
    with run.timed("coverage"):
        stage = _coverage(run, subs, pool)
    if reference:
        stage["reference"] = _reference(run, query, stage)
    return stage


def _coverage(run: Run, subs, pool) -> dict[str, Any]:
    """The coverage report, remembered on disk for the same sub-queries, models and indexed pool."""
    index = run.search.index
    ids_now = np.asarray(index.ids() if pool is None else pool, dtype=np.int64)
    memo_key = key_of("coverage", [q.text for q in subs], run.backends.embedder.model_id,
                      run.backends.captioner.model_id, ids_now, len(index), run.settings.pareto_top_m)
    memo = run.backends.cache.get_json("coverage_stage", memo_key)
    if memo is not None:
        return memo
    before = len(run.notices)
    stage = _compute(run, subs, pool)
    if len(run.notices) == before:  # a degraded report (captioner failure) is not remembered
        run.backends.cache.put_json("coverage_stage", memo_key, stage)
    return stage


def _compute(run: Run, subs, pool) -> dict[str, Any]:
    texts = run.backends.embedder.embed_texts([q.text for q in subs])
    ids, dense = _candidates(run, pool, lambda mat: (np.asarray(mat) @ texts.T).mean(axis=1))
    photos = {p.id: p for p in run.photos(ids.tolist())}
    captioner = run.backends.captioner
    best = set(ids[np.argsort(-dense, kind="stable")[:CAPTIONED]].tolist()) if not captioner.is_standin else set()
    sat = np.zeros((len(ids), len(subs)), dtype=np.int8)
    for r, pid in enumerate(ids.tolist()):
        photo = photos.get(pid)
        if photo is None:
            continue
        text = describe(photo)
        if pid in best:
            try:
                text += " " + captioner.caption(None, photo, load=lambda p=photo: run.search.load_image(p))
            except Exception as exc:
                run.notice(f"the captioner failed ({short_error(exc)}); coverage used metadata only")
                best = set()
        have = CaptionTerms(text)
        sat[r] = [satisfies(q.text, have) for q in subs]
    front = pareto_front(sat, dense)
    stage: dict[str, Any] = {
        "subqueries": [q.to_json() for q in subs],
        "photos": [{"id": int(ids[r]), "satisfies": [int(j) for j in np.flatnonzero(sat[r])],
                    "dense": round(float(dense[r]), 6)} for r in front],
        "uncovered": uncovered(sat) if len(ids) else list(range(len(subs))),
        "candidates": int(sat.any(axis=1).sum()) if len(ids) else 0, "dense_note": DENSE_NOTE}
    return stage


def _reference(run: Run, query: str, stage: dict[str, Any]) -> dict[str, Any] | None:
    subs = stage["subqueries"]
    pieces = [(p["id"], [subs[j]["text"] for j in p["satisfies"]]) for p in stage["photos"][:4]]
    prompt = reference_prompt(query, pieces)
    try:
        with run.timed("reference"):
            out, path = run.backends.generator_for(run.budget).generate_to_file(prompt, seed=0,
                                                                                 size=run.settings.image_size)
    except Exception as exc:
        run.notice(f"the reference picture could not be generated: {short_error(exc)}")
        return None
    return {"path": str(path), "seed": 0, "model": out.model_id, "prompt": prompt, "generated": True,
            "label": "GENERATED picture (not a photo), composed from the Pareto photos' sub-queries",
            "ignored_words": list(out.ignored_words)}
