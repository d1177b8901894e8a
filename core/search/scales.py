"""The scales a result's numbers are on, and the range each holds to (docs/reference/api.md, "What /search
returns"): a similarity is a cosine clamped to 0-1 (0: unrelated, or less alike than unrelated; 1: the
closest possible); a checks score is 0-100 (core.methods.rerank.photo_score); a rank-fusion value is
neither, and is never called a similarity."""
from __future__ import annotations

from typing import Iterable

from core.contracts.limits import CHECKS_RANGE, on_similarity_scale
from core.contracts.standin_scores import STANDIN_NAME, meaning


def similarity(cosine: float | None) -> float | None:
    """A cosine on the similarity scale: clamped to 0-1 (core.contracts.limits.on_similarity_scale, the one
    clamp the page uses too). A negative cosine is 0, never a negative similarity; None stays None."""
    return on_similarity_scale(cosine)


# what a result's ranking score (Hit.score, `score` in `search --json`) is, by how the search ordered the photos
RANKINGS = {
    "checks": {"name": "checks passed", "range": list(CHECKS_RANGE),
               "meaning": "the share of the yes/no checks asked that the photo passed, in %, a check not made "
                          "counting as undecided (50%); photos with no check made follow the checked ones, "
                          "scored 0 or with their first-stage score"},
    "fusion": {"name": "rank fusion", "range": None,
               "meaning": "reciprocal rank fusion of several ranked lists (higher is better): an order, not a "
                          "similarity; `similarity` gives each photo's similarity"},
    "cosine": {"name": "cosine", "range": [-1.0, 1.0],
               "meaning": "the cosine of the photo with the query's words or example photo; `similarity` is the "
                          "same clamped to 0-1"},
}


def ranking_kind(stages: dict) -> str:
    """Which RANKINGS entry a search's ranking scores are: 'checks' once a photo has a checks score, 'fusion'
    when ranked lists were fused (VisRet, rewrite, several example photos, the catalog's words with the
    pictures: core.search.catalog_text.fuse), else 'cosine'."""
    rerank = stages.get("rerank") or {}
    if any(p.get("score") is not None for p in rerank.get("photos") or []):
        return "checks"
    if stages.get("visret") or stages.get("rewrite") or (stages.get("examples") or {}).get("fusion") == "rrf" \
            or (stages.get("catalog_text") or {}).get("ranked"):
        return "fusion"
    return "cosine"


def standin_similarity(embedder_setting: str, photo_sources: Iterable[str] = ()) -> str | None:
    """The embedder setting when the similarities it gave these photos (their Photo.source) mean nothing about
    them, else None: a built-in offline stand-in (core.search.banner.STANDIN_NAMES: the hash embedder compares
    colour statistics and hashed words) always; a world's own encoder (a stand-in made for its synthetic
    photos) when a photo is not that world's: its numbers are about invented species, not a heron in a real
    camera-trap frame, as the banner says ("NOT meaningful for real photos")."""
    from core.plugins.registry import worlds
    from core.search.banner import STANDIN_NAMES

    name = str(embedder_setting or "")
    if name in STANDIN_NAMES["embedder"]:
        return name
    owners = {w.photo_source for w in worlds().values() if name in w.backends.get("embedder", {})}
    if owners and any((source or "") not in owners for source in photo_sources):
        return name
    return None


def ranking(stages: dict) -> dict:
    """The description of a search's ranking scores: {kind, name, meaning, range} (range None: unbounded). When a
    stand-in embedder made the similarities (stages' `standin_similarity`), also `standin` (its name) and the
    meaning says they are stand-in scores that mean nothing about the photo."""
    kind = ranking_kind(stages)
    out = {"kind": kind, **RANKINGS[kind]}
    model = stages.get("standin_similarity")
    if model:
        out["standin"] = model
        out["meaning"] += f"; the similarities are {STANDIN_NAME}s, " + meaning(model)
    return out
