"""Every limit on what one request, one input file or one evaluation may ask for, stated once: the settings'
ranges, the web page's sliders, the API's checks, the command line's checks and the guide all read them
from here, so each layer says the same range. Values, and pure functions that hold a value to a stated range
(no state, no I/O): core/contracts/bounds.py checks values against them."""
from __future__ import annotations

MAX_QUERY_CHARS = 2000
MAX_K = 1000  # results returned
MIN_RERANK_K = 1  # candidates judged
MAX_RERANK_K = 1000
MAX_M = 16  # generated pictures per instruction
MAX_VOTES = 9  # judge votes per question
MAX_ROUNDS = 100  # dialogue questions in one chat, and dialogue rounds of one evaluated item
MAX_IDS = 100_000  # photo ids in one request (a benchmark pool, relevance marks)
MAX_ID = 2**63 - 1  # SQLite / FAISS ids are signed 64-bit
MAX_PHOTO_BYTES = 100_000_000  # one photo read at ingest: a downloaded URL or a local file
MAX_EXAMPLES = 8  # example photos in one search (uploaded, --image, or catalog photos by id)
MAX_EXAMPLE_PIXELS = 100_000_000  # an example JPEG (decoded reduced, so its full size never sits in memory)
MAX_FULL_DECODE_PIXELS = 24_000_000  # an example in a format decoded at full size (PNG, WebP, GIF, TIFF, BMP)
EXAMPLE_SIDE = 1024  # example photos are used at most this large (JPEGs decoded reduced, the rest scaled)
WORKING_SIDE = 1024  # catalog photos read for the judge and captioner (they send at most 1024 px anyway)
MAX_REPLY_CHARS = 200_000  # a model backend's text reply; a longer one is not an answer

# evaluation (`app.py eval`, `app.py eval-run`)
MAX_EVAL_ITEMS = 1_000_000  # --limit: queries (rows) evaluated
MAX_PERMUTATIONS = 1_000_000  # --permutations of the randomisation test
MAX_ANSWER_K = 100  # --answer-k: photos one answer reads
MAX_RELEVANCE = 1000  # a qrels grade or a run's score magnitude
MAX_EVAL_FILE_BYTES = 2_000_000_000  # a benchmark file, qrels or run read by the evaluation

# the ranges a result's scales hold to (core.search.scales clamps to them; the page holds to them too)
SIMILARITY_RANGE = (0.0, 1.0)
CHECKS_RANGE = (0.0, 100.0)


def on_similarity_scale(cosine: float | None) -> float | None:
    """A cosine on the similarity scale: clamped to SIMILARITY_RANGE (0-1). A negative cosine (a photo less like
    the query than an unrelated one) is 0, never a negative similarity; None stays None (no similarity known).
    The one clamp: core.search.scales.similarity and the page (ui.present) both call it."""
    if cosine is None:
        return None
    lo, hi = SIMILARITY_RANGE
    return min(hi, max(lo, float(cosine)))
