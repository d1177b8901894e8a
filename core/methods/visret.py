"""VisRet (methods.md 2): instruction -> m generated pictures -> image-to-image retrieval -> RRF.

Comparisons of two organisms get one instruction and one fused list per organism; a request naming one
organism (Visual-RAG-ME scores each on its own) gets that organism's list alone. User example photos
(uploaded images or catalog ids) join every fusion as extra ranked lists. A failed picture is dropped and
reported, never replaced by a blank one; when no picture is left the rewrite baseline is used. Once the
search's time limit has passed no further picture is drawn (one notice says how many were not)."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from PIL import Image

from core.contracts.errors import BudgetExceeded
from core.contracts.events import Visualization
from core.methods.cache_keys import key_of
from core.methods.deadline import backend_where, call_with_deadline
from core.methods.feedback import photo_vectors
from core.methods.llm_call import short_error
from core.methods.llm_tasks import Instruction, visual_instruction
from core.methods.organisms import choose
from core.methods.rrf import rrf
from core.methods.run import Run
from core.prompts.visret import image_prompt

log = logging.getLogger(__name__)
Vec = Callable[[np.ndarray], np.ndarray]  # applies relevance feedback to a query vector


def organism_indices(run: Run, instr: Instruction, organism: int | None, name: str = "",
                     query: str = "") -> tuple[list[int], str]:
    """The instruction descriptions to retrieve with: the one naming organism `name` (matched by name, see
    core.methods.organisms; one is written for it when none names it), else the organism at index
    `organism`, else all of them. A query not read as a comparison has one description, used for either
    organism by position with a notice. Returns the indices and how they were chosen."""
    return choose(instr, organism, name, query, run.backends.llm, run.notices, run.notice)


def rewrite_rank(run: Run, instr: Instruction, depth: int, pool, adjust: Vec,
                 organism: int | None = None, organism_name: str = "",
                 query: str = "") -> tuple[list[tuple[int, float]], list]:
    """Baseline retrieval with the instruction text(s). With an organism named (or indexed), that organism's
    own list; else comparisons fuse the per-organism lists (the UI's combined view)."""
    per = [run.rank(adjust(run.embed_text(instr.descriptions[o])), depth, pool)
           for o in organism_indices(run, instr, organism, organism_name, query)[0]]
    if len(per) == 1:
        return per[0], per
    return rrf([[i for i, _ in r] for r in per], run.settings.rrf_lambda)[:depth], per


def example_lists(run: Run, images: Sequence[Image.Image], ids: Sequence[int], depth: int, pool,
                  adjust: Vec) -> list[list[tuple[int, float]]]:
    """One ranked (id, cosine) list per example photo (uploaded images, then catalog ids)."""
    return [run.rank(v, depth, pool) for v in example_vectors(run, images, ids, adjust)]


def example_vectors(run: Run, images: Sequence[Image.Image], ids: Sequence[int], adjust: Vec) -> list:
    """The searched (adjusted) vector of each example photo (uploaded images, then catalog ids)."""
    vecs = []
    if images:
        vecs += list(run.backends.embedder.embed_images(list(images)))
    if ids:
        vecs += list(photo_vectors(run.corpus, ids))
    return [adjust(v) for v in vecs]


def run_visret(run: Run, query: str, *, m: int, depth: int, pool, seeds: Sequence[int] | None = None,
               examples: Sequence[Image.Image] = (), example_ids: Sequence[int] = (),
               adjust: Vec = lambda v: v, keep: int = 20, organism: int | None = None,
               organism_name: str = "") -> tuple[list[tuple[int, float]], dict[str, Any]]:
    """Ranked (id, RRF score) and the stage's artefacts. With an organism named (`organism_name`, matched by
    name) or indexed (`organism`, 0 or 1), only that organism of a comparison is visualized and the ranking is
    its own fused list (each organism is retrieved on its own); with neither, a comparison's per-organism lists
    are fused once more for a combined view."""
    s = run.settings
    with run.timed("instruction"):
        instr = visual_instruction(run.backends.llm, query, run.notices, book=run.book)
    stage: dict[str, Any] = {
        "instruction": " | ".join(instr.descriptions), "instructions": instr.descriptions, "kind": instr.kind,
        "organisms": instr.organisms, "source": instr.source, "prompts": [], "visualizations": [], "failed": [],
        "lists": [], "per_organism": [], "examples": len(examples) + len(example_ids), "fallback": False,
        "organism": organism, "organism_name": organism_name}
    seeds = list(seeds) if seeds else list(range(m))
    generator = run.backends.generator_for(run.budget)
    example_vecs = example_vectors(run, examples, example_ids, adjust)
    scored_examples = [run.rank(v, depth, pool) for v in example_vecs]
    # every picture searched with, as searched: a photo brought into the results by another list (the catalog's
    # words, core.search.catalog_text) gets its similarity from them (the engine pops it with picture_similarity)
    stage["picture_vectors"] = [np.asarray(v, np.float32).tolist() for v in example_vecs]  # JSON-safe
    by_example = [[i for i, _ in r] for r in scored_examples]
    # each photo's best cosine with a picture searched with (a drawing or an example photo): the similarity
    # a page shows for a VisRet result (the engine moves it onto the hits and out of the stage)
    closest: dict[int, float] = {}
    nearest: dict[int, dict[str, int]] = {}  # photo -> the picture that is closest to it
    for e, got in enumerate(scored_examples):
        _keep_best(closest, got, nearest, {"example": e})
    fused_per_organism: list[list[int]] = []
    chosen, stage["organism_match"] = organism_indices(run, instr, organism, organism_name, query)
    stage["instructions"], stage["organisms"] = list(instr.descriptions), list(instr.organisms)
    stage["instruction"] = " | ".join(instr.descriptions[o] for o in chosen)  # what this search drew from
    for o in chosen:
        description = instr.descriptions[o]
        prompt = image_prompt(description)
        stage["prompts"].append(prompt)
        images = []
        late = 0  # pictures not drawn because the search's time limit passed
        with run.timed("generate"):
            for j, seed in enumerate(seeds):
                run.check()
                vkey = key_of(generator.model_id, prompt, int(seed), s.image_size, run.backends.embedder.model_id)
                known = run.backends.cache.get_json("visvec", vkey)
                if known is not None and Path(known["path"]).is_file():  # picture and its vector both cached
                    vis = {"organism": o, "index": j, "path": known["path"], "seed": int(seed),
                           "model": known["model"], "prompt": prompt, "ignored_words": known["ignored_words"]}
                    stage["visualizations"].append(vis)
                    images.append((vis, None, np.asarray(known["vector"], dtype=np.float32), vkey))
                    run.emit(Visualization(ok=True, **vis))
                    continue
                if run.deadline.passed():  # a picture already drawn is used; a new one is not started
                    late += 1
                    continue
                try:
                    out, path = call_with_deadline(
                        lambda prompt=prompt, seed=seed: generator.generate_to_file(prompt, seed=int(seed),
                                                                                    size=s.image_size),
                        run.deadline.bound(s.backend_timeout_s), "the image generator", cancel=run.cancel)
                except Exception as exc:  # the backend failed, hung or the budget is spent: drop this picture
                    run.check()  # a cancelled search stops here rather than reporting a failed picture
                    if run.deadline.passed():  # cut by the search's limit: counted with the pictures not drawn
                        log.info("picture %s (seed %s) cut by the search's time limit: %s", j + 1, seed, exc)
                        late += 1
                        continue
                    err = short_error(exc)
                    budget = isinstance(exc, BudgetExceeded)
                    if not budget:
                        log.warning("generator %s failed on seed %s: %s", generator.model_id, seed, err,
                                    exc_info=exc)
                    stage["failed"].append({"organism": o, "index": j, "seed": int(seed),
                                            "error": "budget" if budget else err})
                    run.notice(f"visualization {j + 1} (seed {seed}) failed and was dropped: {err}")
                    run.emit(Visualization(ok=False, organism=o, index=j, seed=int(seed), error=err))
                    continue
                vis = {"organism": o, "index": j, "path": str(path), "seed": int(seed), "model": out.model_id,
                       "prompt": prompt, "ignored_words": list(out.ignored_words)}
                stage["visualizations"].append(vis)
                images.append((vis, out.image, None, vkey))
                run.emit(Visualization(ok=True, **vis))
        if late:
            stage["out_of_time"] = stage.get("out_of_time", 0) + late
            run.out_of_time(f"{late} of {len(seeds)} pictures were not drawn by "
                            f"{backend_where(s, 'generator')}")
        lists: list[list[int]] = []
        with run.timed("image_search"):
            if images:
                fresh = [k for k, (_, _, vec, _) in enumerate(images) if vec is None]
                if fresh:
                    new = run.backends.embedder.embed_images([images[k][1] for k in fresh])
                    for k, vec in zip(fresh, new):
                        vis, im, _, vkey = images[k]
                        images[k] = (vis, im, vec, vkey)
                        run.backends.cache.put_json("visvec", vkey, {
                            "path": vis["path"], "model": vis["model"], "ignored_words": vis["ignored_words"],
                            "vector": [float(x) for x in vec]})
                searched = np.stack([adjust(vec) for _, _, vec, _ in images])
                stage["picture_vectors"] += searched.astype(np.float32).tolist()
                all_ranked = run.rank_many(searched, depth, pool)
                for (vis, _, _vec, _), got in zip(images, all_ranked):
                    _keep_best(closest, got, nearest, {"organism": o, "drawing": vis["index"]})
                    ranked = [i for i, _ in got]
                    lists.append(ranked)
                    stage["lists"].append({"organism": o, "visualization": vis["index"], "seed": vis["seed"],
                                           "ids": ranked[:keep]})
            for e, ranked in enumerate(by_example):
                stage["lists"].append({"organism": o, "example": e, "ids": ranked[:keep]})
            lists += by_example
        if not images:
            log.warning("VisRet fell back to the rewrite baseline for %r: no picture was generated", description)
            stage["fallback"] = True
            run.notice(f"no visualization could be generated for '{description}'; used the rewrite baseline "
                       "(retrieval with the instruction text) instead")
            lists.insert(0, [i for i, _ in run.rank(adjust(run.embed_text(description)), depth, pool)])
        fused = rrf(lists, s.rrf_lambda)[:depth]
        fused_per_organism.append([i for i, _ in fused])
        stage["per_organism"].append({"organism": instr.organisms[o] if o < len(instr.organisms) else description,
                                      "ids": [i for i, _ in fused][:keep]})
        if len(chosen) == 1:
            stage["picture_similarity"] = _closest_of(closest, fused)
            stage["closest_picture"] = _nearest_of(nearest, fused)
            return fused, stage
    fused = rrf(fused_per_organism, s.rrf_lambda)[:depth]
    stage["picture_similarity"] = _closest_of(closest, fused)
    stage["closest_picture"] = _nearest_of(nearest, fused)
    return fused, stage


def _keep_best(closest: dict[int, float], ranked: Sequence[tuple[int, float]],
               nearest: dict[int, dict[str, int]], picture: dict[str, int]) -> None:
    for i, score in ranked:
        if score > closest.get(int(i), float("-inf")):
            closest[int(i)] = float(score)
            nearest[int(i)] = picture


def _nearest_of(nearest: dict[int, dict[str, int]], fused: Sequence[tuple[int, float]]) -> dict[str, dict]:
    """photo id (as text, the stage is JSON) -> the picture it is closest to: {"organism", "drawing": index}
    for a drawing (its `index` in the stage's visualizations), {"example": n} for the n-th example photo."""
    return {str(int(i)): dict(nearest[int(i)]) for i, _ in fused if int(i) in nearest}


def _closest_of(closest: dict[int, float], fused: Sequence[tuple[int, float]]) -> dict[int, float]:
    return {int(i): closest[int(i)] for i, _ in fused if int(i) in closest}
