"""`python app.py ingest PATH`: add a folder, an iNaturalist-style CSV, an INQUIRE parquet, a Camtrap DP package
or a parquet of precomputed vectors to the catalog."""
import argparse
import json
from pathlib import Path

from cli.common import progress_bar, standin_note


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 1024:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 0 to 1024 (e.g. 2; 0 = automatic)")
    return value


def skipped_lines(skipped, shown: int = 3) -> list[str]:
    """One line per skipped item, except that a reason shared by more than `shown` items (the media rows of a
    deployment that was skipped) is said once with the first few names and the count of the rest."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in skipped:
        by_reason.setdefault(reason, []).append(name)
    lines = []
    for reason, names in by_reason.items():
        if len(names) <= shown:
            lines += [f"skipping {name}: {reason}" for name in names]
        else:
            lines.append(f"skipping {len(names)} items ({', '.join(names[:shown])} and {len(names) - shown} more): "
                         f"{reason}")
    return lines


def ignored_line(ignored, folder: str, shown: int = 5) -> str:
    """The note on files left out for their suffix, naming the first `shown` (relative to the ingested folder)
    and the count of the rest; '' when none was."""
    if not ignored:
        return ""
    root = Path(folder)
    names = []
    for name in ignored[:shown]:
        try:
            names.append(str(Path(name).relative_to(root)))
        except ValueError:  # not under the folder as written (a link resolved elsewhere): its own path
            names.append(str(name))
    rest = f" and {len(ignored) - shown} more" if len(ignored) > shown else ""
    return (f"note: {len(ignored)} file(s) without an image suffix were ignored: {', '.join(names)}{rest}")


def add_parser(sub) -> None:
    p = sub.add_parser("ingest", help="add a folder of images, an iNaturalist-style CSV, an INQUIRE parquet, a "
                                      "Camtrap DP package (folder, datapackage.json or .zip) or a parquet of "
                                      "precomputed vectors")
    p.add_argument("path")
    p.add_argument("--engine", choices=("local", "ray"),
                   help="local: one process (default, the ingest_engine setting); ray: Ray Data actors embed in "
                        "parallel")
    p.add_argument("--workers", type=_count, help="decoding threads (local) or embedding actors (ray); 0 = automatic")
    p.add_argument("--model", help="for a parquet of precomputed vectors: the model that made them, when the file "
                                   "does not say (must be the configured embedder's model)")
    p.add_argument("--detections", metavar="FILE.json",
                   help="a MegaDetector / SpeciesNet results file (format 1.x) for the folder PATH: its boxes are "
                        "stored, their crops embedded and searched; photos already in the catalog are not embedded "
                        "again")
    p.add_argument("--deployments", metavar="FILE.csv",
                   help="camera traps: a deployments CSV (Camtrap DP's deployment columns plus clock_offset_s and "
                        "utc_offset) giving the card's deployments their places, times and clock corrections")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def run(ctx, args) -> int:
    services = ctx.services()
    if args.path.startswith("hf://"):  # a hub dataset: downloaded (once) and ingested file by file
        from cli.common import PhaseBars
        from core.search.preparation import corpus_files

        bars = PhaseBars()
        try:
            paths = corpus_files(ctx.settings, bars, args.path)
        finally:
            bars.close()
        code = 0
        for path in paths:
            args.path = path
            code = max(code, _ingest_one(ctx, services, args))
        return code
    return _ingest_one(ctx, services, args)


def _ingest_one(ctx, services, args) -> int:
    update, bar = progress_bar("ingest")
    try:
        report = services.ingestor().run(args.path, update, engine=args.engine, workers=args.workers,
                                         model=args.model, detections=args.detections,
                                         deployments=args.deployments)
    finally:
        bar.close()
    if args.json:  # the stand-in note goes into the JSON's notices (stdout stays one JSON object)
        out = report.to_json()
        note = standin_note(ctx)
        out["notices"] = ([note] if note else []) + list(out.get("notices") or [])
        ctx.noted = True
        print(json.dumps(out, indent=2))
        return 0
    near = f"{report.near_copies} near-copies, " if report.near_copies is not None and report.hashed else ""
    print(f"ingested {args.path} ({report.kind}): {report.added} added, {report.already} already in the catalog, "
          f"{report.duplicates} duplicate(s), {near}{len(report.skipped)} skipped, {report.reembedded} re-embedded, "
          f"in {report.seconds:.1f} s; engine: {report.engine}; index: {report.index_kind}")
    for line in skipped_lines(report.skipped):
        print(line)
    for notice in report.notices:
        print(f"note: {notice}")
    if report.ignored:
        print(ignored_line(report.ignored, args.path))
    return 0
