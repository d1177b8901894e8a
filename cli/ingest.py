"""`python app.py ingest PATH`: add a folder, an iNaturalist-style CSV or an INQUIRE parquet to the catalog."""
import json

from cli.common import progress_bar


def add_parser(sub) -> None:
    p = sub.add_parser("ingest", help="add a folder of images, an iNaturalist-style CSV or an INQUIRE parquet")
    p.add_argument("path")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def run(ctx, args) -> int:
    services = ctx.services()
    update, bar = progress_bar("ingest")
    try:
        report = services.ingestor().run(args.path, update)
    finally:
        bar.close()
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0
    print(f"ingested {args.path} ({report.kind}): {report.added} added, {report.already} already in the catalog, "
          f"{report.duplicates} duplicate(s), {len(report.skipped)} skipped, {report.reembedded} re-embedded, "
          f"in {report.seconds:.1f} s; index: {report.index_kind}")
    for name, reason in report.skipped:
        print(f"skipping {name}: {reason}")
    for notice in report.notices:
        print(f"note: {notice}")
    if report.ignored:
        print(f"note: {len(report.ignored)} file(s) without an image suffix were ignored")
    return 0
