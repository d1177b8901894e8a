"""The web app's words for messages written for the command line or for developers (ui.forms.web_words applies
them to every error, hint and notice the page shows) and for the stand-in photo checker's reasons
(ui.badges.reason_text). The rest of the page's strings are in ui/strings.py."""
from __future__ import annotations

# a message's words -> the page's (longest phrases first)
WEB_WORDS = (
    # storage's hints (storage.retry) are worded for a command; on the page the thing to do again is the action
    ("then run the command again (an interrupted ingest resumes where it stopped)", "then try again"),
    ("and run the command again", "and try again"),
    ("e.g. --bbox -10.5,35,30,60 (longitudes -180..180, latitudes -90..90, south <= north)",
     "e.g. -10.5, 35, 30, 60 (longitudes from -180 to 180, latitudes from -90 to 90, south below north)"),
    ("swap --date-from and --date-to", "swap the two dates"),
    ("Bounding box ", "The place box "), ("is not west,south,east,north in degrees", "is not west, south, east, north"),
    ("run `python app.py ingest PATH` again to embed the catalog with this model",
     "ask whoever runs EcoLens to add the photos again for this model"),
    ("coverage: the dense score uses each photo's global image embedding (no sub-query-specific adaptor as in "
     "the paper)", "Cover judges each part of your query from the whole photo, not from a close-up of that part"),
    ("used the rewrite baseline (retrieval with the instruction text) instead",
     "searched with the written description instead"),
    ("the first-stage order was kept", "the order before the checks was kept"),
    ("follow them in first-stage order", "follow them in the order before the checks"),
    ("photos with the best dense score", "photos closest to the query"),
    ("coverage: pareto_beta = ", "Cover: the likeness weight "),
    (" is not below this query's beta_max = ", " is not below this query's limit of "),
    (", so the alpha-grid argmax was taken literally: a photo with a higher dense score can displace one that "
     "covers more parts", ", so a photo closer to the whole query can come before one that covers more parts"),
    ("used the offline rule instead", "used a simple built-in rule instead"),
    ("query decomposition:", "splitting the query into parts:"),
    ("visualization instruction:", "describing the picture:"),
    ("is longer than the text encoder's ", "is longer than the model reads: only its first "),
    (" tokens; the rest was ignored", " word pieces were read"),
    ("k (results)", "Results"),
    ("rerank_k (candidates to verify)", "Photos to check"),
    ("m (pictures to draw)", "Pictures to draw"),
    ("sub-questions:", "writing the yes/no checks:"),
    (", where it could say neither yes nor no (each counted as undecided, 50%: neither pass nor fail)",
     " it could answer neither yes nor no (each counts as undecided, 50%: neither for nor against a photo)"),
    ("visualization ", "drawing "),
    # the search's time limit (core.methods.deadline) and the index check of a running server (core.vectors)
    ("keep their first-stage order", "keep the order they had before the checks"),
    ("in first-stage order", "in the order they had before the checks"),
    *((f"; raise deadline_{kind}_s to wait longer", "; whoever runs EcoLens can let searches wait longer")
      for kind in ("fast", "visualize", "verify", "cover")),
    ("run `python app.py repair` to embed them again now (any later ingest also does it)",
     "whoever runs EcoLens can add them again now (any later ingest also does it)"),
    ("run `python app.py repair` after it", "ask whoever runs EcoLens to repair it after that"),
    ("run `python app.py repair`", "ask whoever runs EcoLens to repair it"),
)
# command-line options that may remain in a message, and the field of the page that does the same
WEB_FIELDS = {"--bbox": "the place box", "--date-from": "“Observed from”", "--date-to": "“Observed until”",
              "--months": "the months", "--taxon": "the taxon filter", "--license": "the licence filter",
              "--k": "Results", "--m": "Pictures to draw", "--rerank": "Checks", "--image": "your example photo",
              "--preset": "How to search", "--deployment": "the deployments filter",
              "--time-of-day": "“Time of day”", "--include-empty": "“Show empty frames”",
              "--by-event": "“One result per event”", "--category": "“The detector found”",
              "--classified": "“Identified by”", "--species": "the species filter"}

# the stand-in photo checker's reasons, in plain words (ui.badges.reason_text); pattern -> replacement
REASON_WORDS = (
    (r"\bread from the picture: (.*?)\s*->\s*p\(yes\) [0-9.]+$", r"seen in the picture: \1"),
    (r"^no attribute words recognised; fell back to embedder similarity of the question vs its negation "
     r"\(([-0-9.]+) vs ([-0-9.]+)\)$",
     r"nothing in this question the checker can look for; it compared the photo with the question and with its "
     r"opposite (\1 vs \2)"),
    (r"\bplan (\w+)", r"body shape: \1"),
    (r"\bspecies (?=[A-Z])", ""),  # the stand-in's "species Slate Reedpiper", not "catalog: species = ..."
    (r"(\w) (0\.\d\d|1\.00)\b", r"\1 (\2)"),
)
SURE = "{p:.0%} sure"
