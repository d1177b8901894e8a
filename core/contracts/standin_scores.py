"""The words for a similarity given by an offline stand-in embedder (core.search.scales.standin_similarity: the
built-in hash embedder, which compares colour statistics and hashed words, or a demo world's own encoder on photos
not of its world), the same on the page (ui.strings.STANDIN_SCALE: captions, the score line, the photo view, the
API's `score`), in `search --json` (`stages.score`) and in the command line's text output: what the number is
called, and that it means nothing about the photo."""
from __future__ import annotations

STANDIN_NAME = "stand-in score"
STANDIN_MEANING = ("a number from the offline stand-in ('{model}', {what}), which means nothing about what a photo "
                   "shows: 0 is not “unrelated” and 1 is not “the closest”")
# what each built-in stand-in is; a demo world's own encoder (not named here) is STANDIN_WORLD
STANDIN_WHAT = {"hash": "which lets EcoLens run without a real model: it compares colours and hashed words"}
STANDIN_WORLD = "trained only on the invented species of the synthetic demo world, not on real photos like these"
STANDIN_SCORE = "stand-in {score}"  # one such number, as a gallery caption or a result line writes it


def meaning(model: str) -> str:
    """STANDIN_MEANING for one stand-in (its name as the embedder setting gives it)."""
    return STANDIN_MEANING.format(model=model, what=STANDIN_WHAT.get(model, STANDIN_WORLD))
