"""The words for a similarity given by a built-in offline stand-in embedder (core.search.scales.standin_similarity:
the hash embedder compares colour statistics and hashed words), the same on the page (ui.strings.STANDIN_SCALE:
captions, the score line, the photo view, the API's `score`), in `search --json` (`stages.score`) and in the
command line's text output: what the number is called, and that it means nothing about the photo."""
from __future__ import annotations

STANDIN_NAME = "stand-in score"
STANDIN_MEANING = ("a number from the offline stand-in ('{model}', which lets EcoLens run without a real model: it "
                   "compares colours and hashed words), which means nothing about what a photo shows: 0 is not "
                   "“unrelated” and 1 is not “the closest”")
STANDIN_SCORE = "stand-in {score}"  # one such number, as a gallery caption or a result line writes it
