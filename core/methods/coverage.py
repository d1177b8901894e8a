"""Pareto coverage stage (methods.md 5): sub-queries, sparse and dense satisfaction, the non-dominated
photos with what each covers, the sub-queries nobody covers, and an optional generated reference picture."""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from core.backends.base import ReferenceImage
from core.backends.metadata_captioner import describe
from core.methods.cache_keys import key_of
from core.methods.decompose import caption_terms, satisfies
from core.methods.llm_call import short_error
from core.methods.llm_tasks import decompose
from core.methods.pareto import alpha_grid_front, beta_max, grid_steps, pareto_front, uncovered
from core.methods.run import Run
from core.prompts.coverage import reference_instruction, reference_prompt, reference_request

log = logging.getLogger(__name__)

MAX_CANDIDATES = 20_000  # with pareto_top_m = 0, larger pools are cut to the dense top this many
CAPTIONED = 50  # photos also captioned by a real captioner (the dense top ones)
MAX_REFERENCES = 4  # Pareto photos given to the generator as references
DENSE_NOTE = ("coverage: the dense score uses each photo's global image embedding (no sub-query-specific "
              "adaptor as in the paper)")


def _candidates(run: Run, pool, dense_of) -> tuple[np.ndarray, np.ndarray]:
    s = run.settings
    index = run.corpus.index
    if pool is None:
        ids, mat = index.ids(), index.matrix()
    else:
        ids = np.asarray([i for i in pool if index.contains(int(i))], dtype=np.int64)
        mat = index.vectors(ids) if len(ids) else np.zeros((0, index.matrix().shape[1] if len(index) else 0))
    dense = dense_of(mat) if len(ids) else np.zeros(0)
    if len(ids) and getattr(run.corpus, "searches_crops", False):  # a photo's best: its frame or an animal's crop
        dense = np.maximum(dense, run.corpus.crops.best_of(ids, dense_of, s.detection_threshold))
    top = s.pareto_top_m or (MAX_CANDIDATES if len(ids) > MAX_CANDIDATES else 0)
    if top and len(ids) > top:
        if not s.pareto_top_m:
            run.notice(f"coverage looked only at the {top} photos with the best dense score")
        keep = np.argsort(-dense, kind="stable")[:top]
        ids, dense = ids[keep], dense[keep]
    return np.asarray(ids, dtype=np.int64), np.asarray(dense, dtype=np.float64)


def run_coverage(run: Run, query: str, pool, reference: bool = False) -> dict[str, Any]:
    with run.timed("decompose"):
        subs = decompose(run.backends.llm, query, run.notices, book=run.book)
    run.notice(DENSE_NOTE)
    with run.timed("coverage"):
        stage = _coverage(run, subs, pool)
    if reference:
        stage["reference"] = _reference(run, query, stage)
    return stage


def _coverage(run: Run, subs, pool) -> dict[str, Any]:
    """The coverage report, remembered on disk for the same sub-queries, models and indexed pool."""
    index = run.corpus.index
    ids_now = np.asarray(index.ids() if pool is None else pool, dtype=np.int64)
    memo_key = key_of("coverage", [q.text for q in subs], run.backends.embedder.model_id,
                      run.backends.captioner.model_id, ids_now, len(index), run.settings.pareto_top_m,
                      run.settings.pareto_beta)
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
                text += " " + captioner.caption(None, photo, load=lambda p=photo: run.corpus.load_image(p))
            except Exception as exc:  # reported: notice + log line; coverage goes on with metadata
                log.warning("captioner %s failed on photo %s", captioner.model_id, pid, exc_info=exc)
                run.notice(f"the captioner failed ({short_error(exc)}); coverage used metadata only")
                best = set()
        have = caption_terms(text)
        book = run.rules.for_photo(photo)  # a world's photo is read in its world's terms
        sat[r] = [satisfies(q.text, have, book) for q in subs]
    front, formulation = _front(run, sat, dense)
    stage: dict[str, Any] = {
        "subqueries": [q.to_json() for q in subs],
        "photos": [{"id": int(ids[r]), "satisfies": [int(j) for j in np.flatnonzero(sat[r])],
                    "dense": round(float(dense[r]), 6)} for r in front],
        "uncovered": uncovered(sat) if len(ids) else list(range(len(subs))),
        "candidates": int(sat.any(axis=1).sum()) if len(ids) else 0, "dense_note": DENSE_NOTE,
        "formulation": formulation}
    return stage


def _front(run: Run, sat: np.ndarray, dense: np.ndarray) -> tuple[list[int], dict[str, Any]]:
    """The paper's alpha-grid argmax with beta = pareto_beta. While beta < beta_max (Theorem 3.2) it equals the
    dominance-based Pareto set, which is computed directly (no grid to score); otherwise the grid is scored
    literally with that beta, and the user is told that the dense score may then outweigh a covered part."""
    n = sat.shape[1] if sat.ndim == 2 else 0
    beta = float(run.settings.pareto_beta)
    candidates = sat.any(axis=1) if len(sat) else np.zeros(0, dtype=bool)
    bound = beta_max(n, dense[candidates]) if n and candidates.any() else float("inf")
    info = {"beta": beta, "beta_max": None if bound == float("inf") else round(bound, 6),
            "grid_steps": grid_steps(n) if n else 0}
    if 0 < beta < bound:
        return pareto_front(sat, dense), {**info, "method": "Pareto set (equal to the alpha grid, beta < beta_max)"}
    run.notice(f"coverage: pareto_beta = {beta:g} is not below this query's beta_max = {bound:.4g}, so the "
               "alpha-grid argmax was taken literally: a photo with a higher dense score can displace one that "
               "covers more parts")
    log.info("coverage: pareto_beta %s >= beta_max %s; scoring the alpha grid literally", beta, bound)
    return alpha_grid_front(sat, dense, beta), {**info, "method": "alpha grid scored literally (beta >= beta_max)"}


def _references(run: Run, stage: dict[str, Any]) -> list[ReferenceImage]:
    """Each Pareto photo (at most MAX_REFERENCES) with the instruction to use only the sub-queries it satisfies."""
    subs = stage["subqueries"]
    refs = []
    for p in stage["photos"][:MAX_REFERENCES]:
        photo = next(iter(run.photos([p["id"]])), None)
        if photo is None:
            continue
        try:
            image = run.corpus.load_image(photo)
        except Exception as exc:  # reported: notice + log line; the other photos still guide the picture
            log.warning("reference photo %s could not be read", p["id"], exc_info=exc)
            run.notice(f"photo {p['id']} could not be read for the reference picture: {short_error(exc)}")
            continue
        refs.append(ReferenceImage(image, reference_instruction([subs[j]["text"] for j in p["satisfies"]]),
                                   int(p["id"])))
    return refs


def _reference(run: Run, query: str, stage: dict[str, Any]) -> dict[str, Any] | None:
    """A generated picture for the query, composed from the Pareto photos, each with the sub-queries it
    satisfies (Cross-modal RAG's sub-query-aware generation). A generator that takes no pictures draws from
    the same instructions as text, with a notice."""
    subs = stage["subqueries"]
    pieces = [(p["id"], [subs[j]["text"] for j in p["satisfies"]]) for p in stage["photos"][:MAX_REFERENCES]]
    generator = run.backends.generator_for(run.budget)
    refs = _references(run, stage) if generator.supports_references else []
    try:
        with run.timed("reference"):
            if refs:
                prompt = reference_request(query)
                out, path = generator.generate_from_references_to_file(prompt, refs, seed=0,
                                                                       size=run.settings.image_size)
                mode = "composed from the Pareto photos"
            else:
                if not generator.supports_references:
                    log.info("generator %s takes no reference pictures; drawing from text", generator.model_id)
                    run.notice(f"the generator {generator.model_id} cannot take reference pictures; the reference "
                               "picture was drawn from the text instructions only")
                prompt = reference_prompt(query, pieces)
                out, path = generator.generate_to_file(prompt, seed=0, size=run.settings.image_size)
                mode = "drawn from text instructions"
    except Exception as exc:  # reported: notice + log line
        log.warning("the reference picture failed (generator %s)", generator.model_id, exc_info=exc)
        run.notice(f"the reference picture could not be generated: {short_error(exc)}")
        return None
    return {"path": str(path), "seed": 0, "model": out.model_id, "prompt": out.prompt or prompt, "generated": True,
            "label": "GENERATED picture (not a photo), composed from the Pareto photos' sub-queries",
            "mode": mode, "references": [{"id": r.photo_id, "instruction": r.instruction} for r in refs],
            "ignored_words": list(out.ignored_words)}
