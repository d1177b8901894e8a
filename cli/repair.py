"""`python app.py repair`: check the vector indexes and repair them.

What it does, in order: (1) reads every index file and compares it with what was written (checksum, FAISS
header, unit-length vectors) and with the catalog's counts; (2) sets damaged files aside (renamed
*.damaged-TIME, never deleted) and rebuilds from stored vectors where they exist (an HNSW index keeps
full-precision copies); (3) embeds again, from the photo files, every photo of the current embedder that has
no vector; (4) trains the approximate index again when it was lost or --retrain is given. `--check` only
reports and exits 1 when something is wrong."""
import json

from cli.common import progress_bar, standin_note
from core.vectors.repair import check_indexes, repair_indexes


def add_parser(sub) -> None:
    p = sub.add_parser("repair", help="check the vector indexes against their checksums and the catalog; rebuild "
                                      "damaged ones from stored vectors or by embedding the photos again")
    p.add_argument("--check", action="store_true", help="only report; exit status 1 when a problem is found")
    p.add_argument("--retrain", action="store_true", help="also train the approximate index (ivfpq) again")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")


def _print_health(health, title: str) -> None:
    print(title)
    if not health:
        print("  no vector set yet (nothing has been ingested)")
    for h in health:
        state = "ok" if h.ok else "PROBLEM"
        print(f"  [{state}] vector set {h.vector_set_id} ({h.model_id}): {h.vectors} vectors, "
              f"{h.recorded} recorded in the catalog, {h.photos} catalog photos")
        for p in h.problems:
            print(f"      - {p}")


def run(ctx, args) -> int:
    engine = ctx.services()
    current = engine.backends.embedder.model_id
    before = check_indexes(engine.catalog, engine.index_store, current)
    if args.check:
        if args.json:
            print(json.dumps({"indexes": [h.to_json() for h in before]}, indent=2))
        else:
            _print_health(before, "index check (nothing was changed):")
            if any(not h.ok for h in before):
                print("run `python app.py repair` to repair")
        return 0 if all(h.ok for h in before) else 1
    update, bar = progress_bar("re-embed")
    try:
        notices, report = repair_indexes(engine.catalog, engine.index_store, engine.ingestor(),
                                         retrain=args.retrain, progress=update)
    finally:
        bar.close()
    engine.corpus.reload()
    after = check_indexes(engine.catalog, engine.index_store, current)
    if args.json:
        note = standin_note(ctx)
        ctx.noted = True
        print(json.dumps({"before": [h.to_json() for h in before], "notices": ([note] if note else []) + notices,
                          "reembedded": report.reembedded,
                          "skipped": [{"path": n, "reason": r} for n, r in report.skipped],
                          "index": report.index_kind, "after": [h.to_json() for h in after]}, indent=2))
        return 0 if all(h.ok for h in after) else 1
    _print_health(before, "before:")
    for n in notices:
        print(f"note: {n}")
    print(f"re-embedded {report.reembedded} photo(s); {len(report.skipped)} skipped; index: {report.index_kind}")
    for name, reason in report.skipped:
        print(f"skipping {name}: {reason}")
    _print_health(after, "after:")
    return 0 if all(h.ok for h in after) else 1
