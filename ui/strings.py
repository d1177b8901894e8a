"""Every user-facing string of the web app, in one table (labels, buttons, messages, help); the camera-trap words
are in ui/strings_camtrap.py, the page's wording of messages written for the command line in ui/strings_web.py."""
from __future__ import annotations

from core.contracts import standin_scores as _standin

TITLE = "EcoLens"
PREPARING = "The photo collection is still being prepared."
PREPARING_HINT = "wait until the progress note at the top of the page disappears, then try again"
MEMORY_LOG = "The session log is kept in memory: searches and labels of this run are not saved."
SUBTITLE = "Expert search of nature photos: describe what you need to see, the way you would tell a colleague."

# ---- tabs --------------------------------------------------------------------------------------------
TAB_SEARCH, TAB_DIALOGUE, TAB_COMPARE, TAB_LABEL, TAB_HISTORY = "Search", "Dialogue", "Compare", "Label", "History"

# ---- presets: name -> what it does -------------------------------------------------------------------
PRESETS = {
    "Fast": "Fast: compares your words with every photo",
    "Visualize": "Visualize: draws what you describe, then finds photos like the drawings",
    "Verify": "Verify: also checks each top photo with yes/no questions",
    "Cover": "Cover: first the photos that show the most parts of your query, each named with its parts",
}
PRESET_LABEL = "How to search"

# ---- search view -------------------------------------------------------------------------------------
QUERY = "What are you looking for?"
QUERY_PLACEHOLDER = "e.g. a heron holding a fish in its bill, in flight"
EXAMPLE_SEARCHES = "Example searches (the collection's benchmark queries)"
SEARCH = "Search"
EXAMPLE_PHOTO = ("Add my own example photo: alone it is the query (Fast); with words it joins the drawings "
                 "(Visualize, Verify)")
ADVANCED = "Advanced settings"
FILTERS = "Filters"
K = "Results"
VISRET_M = "Pictures to draw"
RERANK_K = "Photos to check"
RERANK_MODE = "Checks"
RERANK_MODES = [("expert context and yes/no questions", "full"), ("yes/no questions only", "subq"),
                ("expert context only", "context"), ("one direct question", "direct")]
TAXON = "Taxon: species, genus, family ... or common name (type to find it)"
TAXON_PLACEHOLDER = "any taxon: type a name to choose one"
TAXON_SUGGEST = "Only show {name} (named in your query)"
DATE_FROM, DATE_TO = "Observed from", "Observed until"
MONTHS = "Months (any year)"
BBOX = "Place box: west, south, east, north (degrees)"
MAP_LABEL = "Map of where the collection's photos were taken; draw a box on it to search one area"
MAP_DRAW = "Draw a box"
MAP_POINTS = "Dots: where {n} of the collection's photos were taken. Press “Draw a box”, then drag on the map."
MAP_NO_POINTS = ("No photo of the collection has a known place yet (GPS in its EXIF, its source's coordinates, or a "
                 "deployments CSV with latitude and longitude give one), so a box drawn here finds none.")
MAP_PLAIN = "No map tiles are set up, so the map is a plain grid of latitude and longitude."
MAP_MISSING = ("The map is not installed (Leaflet was not fetched): run bash scripts/setup.sh once with access "
               "to the npm registry. The place box works without it.")
LICENSE = "Licence (cc-by: exactly; cc-by*: the family; nc: any non-commercial)"
RESULTS = "Results"
STATUS_IDLE = "Type a query and press Search."
VISUALIZATIONS = ("Pictures searched with: drawings made by EcoLens (not real photos), and your example photo if you "
                  "gave one")
YOUR_EXAMPLE = "your example photo"
REGENERATE, DROP_VIS = "Draw new pictures", "Drop the selected picture"
SELECT_VIS_HINT = "Select one of two or more drawn pictures first."
EXPLANATION = "Why this photo"
SELECT_HINT = "Click a photo to see it large, with why it was returned."
SELECTED_GONE = "The photo you picked is no longer among the results; this is what was known about it."
MORE_LIKE_THIS = "More like this"
# the export format menus: format -> what the menu says
LABEL_EXPORT_NAMES = {"csv": "CSV: one row per photo and annotator (the final judgement)",
                      "jsonl": "JSON lines: the same rows", "keypresses": "CSV: every key press, in order",
                      "inquire-rerank": "CSV in INQUIRE-Rerank's columns",
                      "dwc": "Darwin Core Archive (zip) of the photos judged relevant"}
MARK_EXPORT_NAMES = {"csv": "CSV", "jsonl": "JSON lines", "dwc": "Darwin Core Archive (zip)"}
LIKE_PHOTO = "more like photo {photo} ({name})"  # the query of a 'More like this' search: page, marks, history
USE_LABELS = "Refine with my labels"
EVIDENCE = "Answer with evidence"
BANNER_MORE = "(details)"  # the banner's one line opens to its whole text
EVIDENCE_REFUSED = "No answer"  # the model's answer was refused (core/methods/answer_check.py)
EVIDENCE_UNVERIFIED = "Unverified answer"  # the offline rule wrote it: no model, nothing checked
CITED = "photos"
CITE_TITLE = "open photo #{rank}"
CITED_OFF_SCREEN = "id {photo} (not among the results shown)"
ASK_ANSWER = "Answer my question from the photos (with evidence)"
SUBQUERIES = "Parts of the query"
UNCOVERED = "Parts no photo covers"
COVERS = "covers: {parts}"
CATALOG_MATCH_SHORT = "catalog: {words}"
CATALOG_MATCH = ("Found by its catalog record too: the catalog's names and notes for this photo hold {words} "
                 "(hybrid retrieval)")
# a photo the catalog's words found that has no picture to compare (kept without its file: a Camtrap DP medium
# on a host the ingest did not reach): no similarity, and why
NO_PICTURE_SHORT = "words only"
NO_PICTURE = ("No similarity: there is no picture of this photo on this machine to compare with your words "
              "(its file was not fetched), so it was found by its catalog record alone: the catalog's names and "
              "notes for it hold {words}")
COVER_HEAD = "#1 to #{last}: the photos that show the most parts of your query"
COVER_HEAD_TWO = "#1 and #2: the photos that show the most parts of your query"
COVER_HEAD_ONE = "#1: the photo that shows the most parts of your query"
COVER_HEAD_WHAT = "(each caption names the parts it shows)"
COVER_REST = "; from #{first} on, the photos closest to your whole query."
COVER_NONE = "No photo shows any part of your query on its own; the photos closest to your whole query are shown."
COVERS_LIST = "Covers: {parts}"
NO_BADGES = "No yes/no checks for this photo: choose Verify to check each photo."
GENERATED = "drawn"
SEED = "variant {seed}"

# ---- scores: one scale per view, with what it means --------------------------------------------------
SCALES = {
    "similarity": ("similarity", "how close each photo is to your words (or to your example photo), from 0 "
                                 "(unrelated) to 1 (the closest possible)"),
    "pictures": ("similarity", "how close each photo is to the closest picture searched with (a drawing, or your "
                               "example photo), from 0 (unrelated) to 1 (the closest possible)"),
    "checks": ("checks passed", "the share of the yes/no checks asked that the photo passed, each counted by how "
                                "sure the photo checker is, a check it could not make counting as undecided "
                                "(50%), from 0% to 100%; 100% means every check was made and passed surely"),
}
# similarities from an offline stand-in embedder (core.search.scales.standin_similarity), said as the banner says
# stand-ins: what it is, and that its numbers are not meaningful for the photos; the words are
# core.contracts.standin_scores', which the command line says too
STANDIN_SCALE = (_standin.STANDIN_NAME, _standin.STANDIN_MEANING)
STANDIN_SCORE = _standin.STANDIN_SCORE  # a gallery caption's score from that embedder
SCORE_LINE = "Scores: {scale}, that is {meaning}."
FUSED_ORDER = ("The order merges the {n} pictures' own rankings (reciprocal rank fusion): a photo that several "
               "pictures rank high comes before one that only one picture finds very close, so the similarities "
               "need not fall in rank order.")
CLOSEST_PICTURE = "Closest picture searched with: {picture}, similarity {similarity}."
NOT_CHECKED = "not checked"
NOT_COUNTED = "(the photo checker cannot see this, so it counts as undecided, 50%, neither for nor against the photo)"
CHECKS_MADE = "({made} of {asked} checked)"
NEAR_COPIES = ("+1 near-copy", "+{n} near-copies")  # a result with copies of its picture folded into it
NEAR_COPIES_LIST = "Near-copies of this picture (re-encodes, resizes, rotations or crops) not shown apart: {ids}."
LEANED = "too close to call: the checker leaned {word} ({p} for yes)"
LEANED_NOTE = "; its note: {note}"

# ---- photo view (lightbox) ---------------------------------------------------------------------------
LIGHTBOX_TITLE = "Photo {pos} of {n}"
LIGHTBOX_PREV, LIGHTBOX_NEXT = "◀ Previous", "Next ▶"
LIGHTBOX_CLOSE = "Close ✕"
LIGHTBOX_KEYS = "Keys: ← → previous / next photo · m mark · Esc close"
MARK, MARKED_ON = "☆ Mark (m)", "★ Marked (m)"
ATTRIBUTION = "Photo: {who} · licence {license}"
UNKNOWN_HOLDER = "rights holder not recorded"
UNKNOWN_LICENSE = "not recorded"
VIEW_PHOTO = "Open the clicked photo large"

# ---- marked photos -----------------------------------------------------------------------------------
MARKS_PANEL = "Marked photos: {n}"
MARKS_EMPTY = "No photo is marked yet. Open a photo from any gallery and press Mark."
MARKS_FORMAT = "File format"
MARKS_EXPORT = "Export marked photos"
MARKS_CLEAR = "Unmark all"
MARKS_FILE = "Marked photos file"
MARK_CAPTION = "{name} · for “{query}”"

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
NOTE_TITLE = "Note"
NOTICE_TITLE = "Notice"
DIALOGUE_OWN_QUESTION = ("None of the questions written for this turn was new and told the photos shown apart, so "
                         "EcoLens asks its own question about these photos.")
DIALOGUE_UNAVAILABLE = ("The dialogue engine is not installed in this build; only plain search is available. "
                        "Use the Search tab.")
CHAT = "Conversation"

# ---- compare view ------------------------------------------------------------------------------------
COMPARE_METHODS = "Methods to compare (2 to 4)"
COMPARE = "Compare"
OVERLAP = "Overlap of the top results"
COMPARE_SCALE = ("Each column is one method's ranking, best first. Their scores are on different scales (similarity "
                 "to your words, to the drawings, checks passed), so only the ranks are shown; click a photo to see "
                 "its score.")

# ---- label view --------------------------------------------------------------------------------------
ANNOTATOR = "Your name (annotator)"
LABEL_QUERY = "Query to judge (Enter loads its photos)"
LABEL_LOAD = "Load photos"
LABEL_FROM_SEARCH = "Use the Search tab's results"
INSTRUCTIONS = "Instructions for everyone judging this query (saved when you leave the box)"
INSTRUCTIONS_PLACEHOLDER = "e.g. relevant only if the crest is clearly visible; juveniles count"
INSTRUCTIONS_SAVED = "Instructions saved for “{query}”."
RELEVANT, NOT_RELEVANT, SKIP = "Relevant (1)", "Not relevant (0)", "Skip (s)"
PREV, NEXT = "◀ Previous", "Next ▶"
UNDO, NEXT_UNLABELLED = "Undo (u)", "Next unjudged (n)"
HOTKEYS = ("Keys: 1 relevant · 0 not relevant · s skip · u undo · n next unjudged · ← → move. "
           "Or click a photo in the grid to move there, and its ✓ or ✗ to judge it.")
EXPORT, EXPORT_FORMAT = "Export labels", "Format (csv, jsonl, or the INQUIRE-Rerank columns)"
EXPORT_WHO = "Only this annotator's labels (empty: everyone's)"
EXPORT_FILE = "Exported file"
AGREEMENT = "Agreement between annotators"
LABEL_PROGRESS = ("{judged} of {total} judged for “{query}”: {relevant} relevant, {not_relevant} not relevant"
                  "{skipped}")
LABEL_SKIPPED = " ({n} skipped: not counted as judged)"
LABEL_DONE = "All {total} photos judged for “{query}”: {relevant} relevant, {not_relevant} not relevant."
LABEL_DONE_HINT = "Export the labels below, or compare annotators."
LABEL_DONE_INFO = "Done: every photo is judged. Click a photo in the grid (or use the arrows) to change its label."
LABEL_NOTHING = "Type a query and press Enter (or Load photos) to judge its photos."
LABEL_SAVED = "Saved: photo {pos} = {label} ({seconds:.1f} s)."
LABEL_UNDONE = "Undone: photo {pos} is {label} again."
LABEL_UNDONE_NONE = "Undone: photo {pos} is not judged any more."
LABEL_NOTHING_TO_UNDO = "Nothing to undo."
LABEL_ALL_DONE = "Every photo is judged; click a photo in the grid (or use the arrows) to change a label."
LABEL_NONE_LEFT = "No unjudged photo is left."
LABEL_NAMES = {1: "relevant", 0: "not relevant", -1: "skipped"}
UNJUDGED = "not judged yet"
KAPPA_NONE = "No two annotators have judged the same photos for this query yet."
KAPPA_ROW = "| {a} | {b} | {pairs} | {observed:.0%} | {kappa} |"
KAPPA_HEAD = "| annotator | annotator | photos both judged | agree | Cohen's kappa |\n|---|---|---|---|---|"
DISAGREEMENTS = "Photos the annotators disagree on (click one, then give the final word)"
DISAGREEMENT_CAPTION = "photo {photo} · {who} · final word: {final}"
NOT_DECIDED = "not given yet"
DISAGREEMENTS_NONE = "The annotators agree on every photo they both judged."
ADJUDICATE_REL, ADJUDICATE_NON = "Final word: relevant", "Final word: not relevant"
ADJUDICATE_PICK = "Click a photo in the disagreements first."
ADJUDICATED = "Final word saved: photo {photo} is {label}."

# ---- history view ------------------------------------------------------------------------------------
HISTORY_SESSIONS = "Past sessions"
HISTORY_REFRESH = "Refresh"
HISTORY_OPEN = "Reopen"
HISTORY_EMPTY = "No sessions yet."
HISTORY_PICK = "Choose a session, then Reopen."
HISTORY_REQUESTS = "Searches"
HISTORY_REQUEST = "Search shown"
HISTORY_LABELS = "Labels"
HISTORY_CHAT = "Dialogue turns"
HISTORY_SESSION = "Session ({kind}, {when}): {title}"
KINDS = {"search": "search", "dialogue": "dialogue", "compare": "comparison", "label": "labelling"}

# ---- messages ----------------------------------------------------------------------------------------
SEARCH_NO = "Search {n}"
# the status line (ui.status): one short line, the time each step took behind "details"
SO_FAR = "{photos} so far"
SHOWN = "{photos} shown"
NO_PHOTOS = "no photos"
MORE_COMING = "still working…"
DONE_IN = "done in {time}"
FOUND_WITH = "{photos} found with {drawings}"
CHECKED_WITH = "{n} checked with {questions}"
CHECKED = "{n} checked"
COVER_DONE = "the first {first} {show} {which} of your query"
COVER_BOTH, COVER_ALL, COVER_SOME = "both parts", "all {parts} parts", "{covered} of the {parts} parts"
COVER_ONE, COVER_MANY = ("photo", "shows"), ("{n} photos", "together show")
RESULTS_DONE = "{photos}, {method} · done in {time}"
WAITING_FOR = "waiting for {who} at {host}"
BACKEND_WHO = {"judge": "the photo checker", "llm": "the language model", "generator": "the picture maker"}
STEP_DOING = {"filter": "applying the filters…", "search": "searching…", "instruction": "describing the picture…",
              "generate": "drawing the pictures…", "image_search": "searching with the pictures…",
              "rewrite": "rewriting your query…", "rerank_plan": "writing the yes/no questions…",
              "rerank": "checking the photos…", "decompose": "splitting your query into parts…",
              "coverage": "finding photos for every part…", "reference": "drawing the covering photos…",
              "answer": "writing the answer…", "group": "finding the group your words name…"}
JUDGED = "(checked {done} of {total})"
DETAILS = "Details: how long each step took"
FIRST_SHOWN = "first photos on screen after {time}"
STEP_TOOK = "{step}: {time}"
TOTAL_TOOK = "the whole search: {time}"
STEP_NAMES = {"search": "comparing your words with the photos", "instruction": "describing the picture",
              "generate": "drawing the pictures", "image_search": "searching with the pictures",
              "rewrite": "rewriting the query", "rerank_plan": "writing the yes/no questions",
              "rerank": "checking each photo", "decompose": "splitting the query into parts",
              "coverage": "finding photos for every part", "reference": "drawing the covering photos",
              "answer": "writing the answer", "group": "putting the group your words name first"}
STOPPED_EARLY = "a later step failed; the photos found so far are shown"
STAGE_FAILED = "A later step failed; the results so far are shown."
STAGE_FAILED_WHY = ("A later step failed ({error}, an error inside EcoLens; its details are in ecolens.log); the "
                    "results so far are shown.")
CANCELLED = "stopped ({reason})"
PREVIOUS_CANCELLED = "Your previous search was stopped because you started a new one."
STOP = "Stop"
STOPPED = "Search stopped."
NOTHING_TO_STOP = "No search is running."
NOTICES = "Notes about this search"
STATUS, SCALE, RESULT_JSON = "Status", "Score scale", "Results as data"
METHOD_NAMES = {"baseline": "plain similarity", "rewrite": "rewritten query", "visret": "searched with drawings",
                "rerank": "checked", "coverage": "every part covered first", "more-like-this": "more like this photo",
                "feedback": "refined with your labels", "plugir": "dialogue"}


def counted(n: int, one: str, many: str) -> str:
    """'1 search', '3 searches'."""
    return f"{n} {one if n == 1 else many}"


def method_name(method: str) -> str:
    """A search's technical name ("visret+rerank:full+coverage") in the app's words."""
    parts = []
    for part in method.split("+"):
        parts.append(METHOD_NAMES.get(part.split(":")[0], part))
    return ", ".join(parts)
NO_RESULTS = "Search first."
NO_LABELS_YET = "Label some photos of this query first (Label tab)."
BAD_DATE = "{value!r} is not a date"
BAD_DATE_HINT = "pick the date in the calendar or write it as YYYY-MM-DD"
BAD_BBOX = "{value!r} is not four numbers"
BAD_BBOX_HINT = "write the box as west, south, east, north, e.g. -10.5, 35, 30, 60"
BAD_PHOTO_ID = "{value!r} is not a photo number"
BAD_PHOTO_ID_HINT = "click a photo first, or give a photo id shown in the results"
MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
META = {"scientific_name": "Taxon", "common_name": "Common name", "observed_on": "Observed",
        "place": "Place (latitude, longitude)", "license": "Licence", "rights_holder": "Rights holder",
        "caption": "Caption", "id": "Photo id", "score": "Score", "rank": "Rank"}
LOOKS_RIGHT = "✓"  # starts the caption of a dialogue candidate marked as looking right
MARKED_PENDING = ("✓ Marked as looking right: {ranks}. They go to EcoLens as examples with your next answer; "
                  "click a photo again to unmark it.")
MARKED_SENT = "✓ Already given as examples, now at: {ranks}."
MARKED_GONE = "{n} photo{s} you marked earlier {verb} no longer among the candidates."
MARKED_SAID = "these look right: {ranks}"
PICTURE_GONE = "picture unavailable"
PHOTOS_MISSING = "{n} photos cannot be shown (ids {ids}), e.g. {first}"
PERSON_WITHHELD = "photo {photo} is withheld: a person was detected on it (log in to see it)"

NOT_LOGGED = "This search is shown but was not saved in the history: {reason}"
NOT_RECORDED = "This worked, but it was not saved in the history: {reason}"  # forms.not_recorded
NOT_RECORDED_FIX = "Check that the data directory can be written (free space, permissions), then try again."
INTERNAL_ERROR = ("Something went wrong on the server and this action was not completed. It has been written to "
                  "the log; try again, and if it keeps happening, tell whoever runs EcoLens.")
INTERNAL_ERROR_TITLE = "Server error"
UNREADABLE_VALUE = ("a value sent to /{api} could not be read: check each parameter's type against "
                    "Client(url).view_api()")
CANNOT_TELL = "can't tell"  # a yes/no check the checker is about 50% sure of
