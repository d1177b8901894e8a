"""Every user-facing string of the web app, in one table (labels, buttons, messages, help)."""
from __future__ import annotations

TITLE = "EcoLens"
PREPARING = "The photo collection is still being prepared."
PREPARING_HINT = "wait until the progress note at the top of the page disappears, then try again"
MEMORY_LOG = "The session log is kept in memory: searches and labels of this run are not saved."
SUBTITLE = "Expert search of nature photos: describe what you need to see, the way you would tell a colleague."

# ---- tabs --------------------------------------------------------------------------------------------
TAB_SEARCH, TAB_DIALOGUE, TAB_COMPARE, TAB_LABEL, TAB_HISTORY = "Search", "Dialogue", "Compare", "Label", "History"

# ---- presets: name -> what it does -------------------------------------------------------------------
PRESETS = {
    "Fast": "Fast: embedding similarity only (baseline)",
    "Visualize": "Visualize: draw what you describe, then search with the pictures (VisRet)",
    "Verify": "Verify: visualize, then check each candidate with yes/no sub-questions (VisRet + full rerank)",
    "Cover": "Cover: photos that together show every part of the query come first (Pareto coverage)",
}
PRESET_LABEL = "How to search"

# ---- search view -------------------------------------------------------------------------------------
QUERY = "What are you looking for?"
QUERY_PLACEHOLDER = "e.g. a heron holding a fish in its bill, in flight"
SEARCH = "Search"
EXAMPLE_PHOTO = ("Add my own example photo: alone it is the query (Fast); with words it joins the generated "
                 "pictures (Visualize, Verify)")
ADVANCED = "Advanced settings"
FILTERS = "Filters"
K = "Results"
VISRET_M = "Pictures to draw (m)"
RERANK_K = "Candidates to verify (K)"
RERANK_MODE = "Verification"
RERANK_MODES = ["full", "subq", "context", "direct"]
WANT_ANSWER = "Also write an answer with evidence"
TAXON = "Taxon (any rank or common name)"
DATE_FROM, DATE_TO = "Observed from (YYYY-MM-DD)", "Observed until (YYYY-MM-DD)"
MONTHS = "Months"
BBOX = "Place box: west, south, east, north (degrees)"
LICENSE = "Licence contains (e.g. cc0, cc-by)"
RESULTS = "Results"
STATUS_IDLE = "Type a query and press Search."
VISUALIZATIONS = "Visualizations (generated, not real photos)"
REGENERATE, DROP_VIS = "Regenerate pictures", "Drop selected picture"
SELECT_VIS_HINT = "Select one of two or more generated pictures first."
EXPLANATION = "Why this photo"
SELECT_HINT = "Select a photo to see why it was returned."
MORE_LIKE_THIS = "More like this"
USE_LABELS = "Refine with my labels"
EVIDENCE = "Answer with evidence"
CITED = "photos"
SUBQUERIES = "Parts of the query"
UNCOVERED = "Parts no photo covers"
COVERS = "covers {n} of {of} parts"
NO_BADGES = "No sub-question checks for this result: choose Verify to check each photo."
GENERATED = "generated"

# ---- dialogue view -----------------------------------------------------------------------------------
DIALOGUE_START = "Describe what you are looking for"
DIALOGUE_BEGIN = "Start"
DIALOGUE_ANSWER = "Your answer"
DIALOGUE_SEND = "Answer"
DIALOGUE_NOT_SURE = "Not sure"
DIALOGUE_SUGGESTED = "Suggested answers"
DIALOGUE_SUGGESTIONS = ["yes", "no", "partly", "I cannot tell from the photos"]
DIALOGUE_CANDIDATES = "Candidates (select photos that match, then Answer)"
DIALOGUE_DESCRIPTION = "What EcoLens now searches for"
DIALOGUE_UNAVAILABLE = ("The dialogue engine is not installed in this build; only plain search is available. "
                        "Use the Search tab.")
CHAT = "Conversation"

# ---- compare view ------------------------------------------------------------------------------------
COMPARE_METHODS = "Methods to compare (2 to 4)"
COMPARE = "Compare"
OVERLAP = "Overlap of the top results"

# ---- label view --------------------------------------------------------------------------------------
ANNOTATOR = "Your name (annotator)"
LABEL_QUERY = "Query to judge"
LABEL_LOAD = "Load photos"
LABEL_FROM_SEARCH = "Use the Search tab's results"
RELEVANT, NOT_RELEVANT, SKIP = "Relevant (1)", "Not relevant (0)", "Skip (s)"
PREV, NEXT = "< Previous", "Next >"
GRID = "Show as grid"
HOTKEYS = "Keys: 1 relevant, 0 not relevant, s skip, left / right arrows to move."
EXPORT, EXPORT_FORMAT = "Export labels", "Format (csv, jsonl, or the INQUIRE-Rerank columns)"
EXPORT_FILE = "Exported file"
AGREEMENT = "Agreement between annotators"
LABEL_PROGRESS = "{done} of {total} labelled ({relevant} relevant) for “{query}”"
LABEL_NOTHING = "Load photos for a query first."
LABEL_SAVED = "Saved: photo {photo} = {label} in {seconds:.1f} s"
LABEL_NAMES = {1: "relevant", 0: "not relevant", -1: "skipped"}
KAPPA_NONE = "No two annotators have labelled the same photos for this query yet."
KAPPA_ROW = "| {a} | {b} | {pairs} | {observed:.0%} | {kappa} |"
KAPPA_HEAD = "| annotator | annotator | shared pairs | agree | Cohen's kappa |\n|---|---|---|---|---|"

# ---- history view ------------------------------------------------------------------------------------
HISTORY_SESSIONS = "Past sessions"
HISTORY_REFRESH = "Refresh"
HISTORY_OPEN = "Reopen"
HISTORY_EMPTY = "No sessions yet."
HISTORY_REQUESTS = "Searches"
HISTORY_LABELS = "Labels"

# ---- messages ----------------------------------------------------------------------------------------
SEARCH_NO = "Search {n}"
PREVIEW = "embedding similarity, shown while the rest runs"
FIRST_STAGE = "before verification"
FIRST_RESULTS = "{n} photos in {ms:.0f} ms ({what})"
MORE_COMING = "still working…"
DONE = "done"
RESULTS_DONE = "{n} photos in {ms:.0f} ms ({method})"
STAGE_DONE = "{stage} took {ms:.0f} ms"
STAGE_NAMES = {"instruction": "describing the picture", "generate": "drawing", "image_search": "searching by the pictures",
               "rewrite": "rewriting the query", "rerank_plan": "writing the checks", "rerank": "checking each photo",
               "decompose": "splitting the query into parts", "coverage": "finding photos for every part",
               "answer": "writing the answer"}
JUDGED = "checked {done} of {total} photos"
STAGE_FAILED = "A later step failed; the results so far are shown."
CANCELLED = "stopped ({reason})"
PREVIOUS_CANCELLED = "Your previous search was stopped because you started a new one."
STOP = "Stop"
STOPPED = "Search stopped."
NOTHING_TO_STOP = "No search is running."
NOTICES = "Notes about this search"
METHOD_NAMES = {"baseline": "embedding similarity", "rewrite": "rewritten query", "visret": "searched with drawings",
                "rerank": "verified", "coverage": "every part covered first", "more-like-this": "more like this photo",
                "feedback": "refined with your labels"}


def method_name(method: str) -> str:
    """A search's technical name ("visret+rerank:full+coverage") in the app's words."""
    parts = []
    for part in method.split("+"):
        parts.append(METHOD_NAMES.get(part.split(":")[0], part))
    return ", ".join(parts)
NO_RESULTS = "Search first."
NO_LABELS_YET = "Label some photos of this query first (Label tab)."
BAD_DATE = "{value!r} is not a date"
BAD_DATE_HINT = "write dates as YYYY-MM-DD"
BAD_BBOX = "{value!r} is not four numbers"
BAD_BBOX_HINT = "write the box as west, south, east, north, e.g. -10.5, 35, 30, 60"
MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
META = {"scientific_name": "Taxon", "common_name": "Common name", "observed_on": "Observed",
        "place": "Place", "license": "Licence", "rights_holder": "Rights holder", "caption": "Caption",
        "id": "Photo id", "score": "Score", "rank": "Rank"}
MARKED = "Marked as looking right: photos {ids}"
PICTURE_GONE = "picture unavailable"
PHOTOS_MISSING = "{n} photos cannot be shown (ids {ids}), e.g. {first}"
NOT_LOGGED = "This search is shown but was not saved in the history: {reason}"
NOT_RECORDED = "Not saved in the history: {reason}"
INTERNAL_ERROR = ("Something went wrong on the server and this action was not completed. It has been written to "
                  "the log; try again, and if it keeps happening, tell whoever runs EcoLens.")
INTERNAL_ERROR_TITLE = "Server error"
