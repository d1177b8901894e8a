"""`python app.py export FORMAT --out PATH [--query Q] [--annotator NAME]`: every format the API's `/export`
writes, for scripts, through the same core.exporting facade: a query's labels (csv, jsonl, keypresses,
inquire-rerank, dwc), the camera-trap data as a Camtrap DP package (camtrap-dp, a new folder), the detections
as MegaDetector results (megadetector) or the collection's vectors as companion vectors for a hub dataset
(vectors: `export vectors --out FILE.parquet`, docs/deployment.md). Prints the path written on stdout (and only
that); what was written, and any notice, goes to stderr."""
from __future__ import annotations

import sys

from core import exporting
from core.contracts.records import Filters


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="write a query's labels (csv, jsonl, keypresses, inquire-rerank, dwc), a "
                                      "Camtrap DP package (camtrap-dp), the detections (megadetector) or the "
                                      "collection's vectors for a hub dataset (vectors)")
    # a plain string, checked by core.exporting, so that a wrong format gets the list of formats as its fix
    p.add_argument("format", metavar="FORMAT", help="one of: " + ", ".join(exporting.FORMATS))
    p.add_argument("--out", required=True, metavar="PATH", help="the file to write (camtrap-dp: a new or empty folder)")
    p.add_argument("--query", default="", metavar="Q", help="the query whose labels are exported (needed by the label "
                                               "formats; camtrap-dp and megadetector: only the photos it judged "
                                               "relevant)")
    p.add_argument("--annotator", default="", metavar="NAME", help="only this annotator's labels (default: everyone's)")


def _vectors_of(services):
    """(model id, photo ids, vectors) of the index the configured embedder searches, read when asked."""
    def read():
        index = services.corpus.index
        return services.corpus.embedder.model_id, index.ids(), index.matrix()
    return read


def run(ctx, args) -> int:
    fmt = exporting.check_format(args.format)
    exporting.check_target(fmt, args.out)  # refused before the catalog is opened
    services = ctx.services()
    wants_labels = fmt in exporting.LABEL_FORMATS or args.query.strip()
    sources = exporting.ExportSources(ctx.settings, services.session_log() if wants_labels else None,
                                      services.corpus.photos, getattr(services, "camtrap", None),
                                      lambda: services.catalog.filter_ids(Filters()), _vectors_of(services))
    done = exporting.export(sources, fmt, args.out, args.query, args.annotator)
    what = done.summary or f"{done.rows} " + {"megadetector": "images", "dwc": "occurrences"}.get(fmt, "rows")
    print(f"wrote {what} as {fmt}", file=sys.stderr)
    for notice in done.notices:
        print(f"note: {notice}", file=sys.stderr)
    print(done.path)
    return 0
