"""Argument helpers shared by the commands: filters, progress bars, printing results."""
from __future__ import annotations

import argparse
import os
import sys

from core.camtrap import capture_time
from core.camtrap.filters import camtrap_filters
from core.contracts.errors import InputError
from core.contracts.records import Filters, parse_bbox
from core.ingest.sources import parse_date


class Parser(argparse.ArgumentParser):
    """argparse whose mistakes read like every other error: `error:` and `how to fix:`, exit status 2."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\nhow to fix: see `{self.prog} --help` for the options and their values\n")


class _Bar:
    """A tqdm bar on stderr drawn at its first update, not before: a command whose input is refused (a path that
    does not exist) prints its error alone, without an empty 'ingest: 0photo' bar above it."""

    def __init__(self, desc: str, unit: str):
        self.desc, self.unit = desc, unit
        self.disable = os.environ.get("CI") == "true"
        self.tqdm = None

    def update(self, done: int, total: int) -> None:
        if self.tqdm is None:
            from tqdm import tqdm

            scaled = {"unit_scale": True, "unit_divisor": 1000} if self.unit == "B" else {}
            self.tqdm = tqdm(total=total, desc=self.desc, unit=self.unit, file=sys.stderr, disable=self.disable,
                             **scaled)
        self.tqdm.total = total
        self.tqdm.n = done
        self.tqdm.refresh()

    def close(self) -> None:
        if self.tqdm is not None:
            self.tqdm.close()


def progress_bar(desc: str, unit: str = "photo"):
    """An update(done, total) callback and the bar it draws on stderr (tqdm, from the first update on; unit 'B':
    bytes, shown as MB / GB); close the bar when done."""
    bar = _Bar(desc, unit)
    return bar.update, bar


class PhaseBars:
    """One tqdm bar on stderr per phase of a long preparation ("drawing the demo world", then "indexing the
    demo world"): call it as progress(what, done, total); `used` says whether any phase ran."""

    def __init__(self):
        self.bars: dict[str, tuple] = {}

    @property
    def used(self) -> bool:
        return bool(self.bars)

    def __call__(self, what: str, done: int, total: int) -> None:
        if what not in self.bars:
            self.close()
            self.bars[what] = progress_bar(what, unit="B" if what.startswith("downloading") else "photo")
            if self.bars[what][1].disable:  # no bar (CI=true): each phase still gets one line when it starts
                print(f"{what} …", file=sys.stderr, flush=True)
        self.bars[what][0](done, total)

    def close(self) -> None:
        for _, bar in self.bars.values():
            bar.close()


def prepare(services) -> list[str]:
    """services.ensure_corpus() with one progress bar per phase on stderr (the first start builds the photo
    collection: the synthetic world is drawn, then indexed)."""
    bars = PhaseBars()
    try:
        return services.ensure_corpus(bars)
    finally:
        bars.close()


def standin_note(ctx) -> str:
    """The stand-in note every command's output carries (the web app's banner): the services' own when there
    is a catalog (it counts the demo and own photos), else judged from the settings alone ('' when all is
    real)."""
    from core.search.banner import OWN, SYNTHETIC, banner_for, standins

    services = getattr(ctx, "_services", None)
    settings = ctx.settings
    if services is None and settings.path("ecolens.sqlite").exists():  # a catalog to read (nothing is created)
        services = ctx.services()
    if services is not None:
        return services.banner()
    kind = OWN if settings.corpus or "embedder" not in standins(settings) else SYNTHETIC
    return banner_for(settings, {}, kind)


def note_standins(ctx) -> None:
    """Write the stand-in note on stderr (stdout stays machine-readable) unless the command's output already
    carried it (ctx.noted: in its notes, or in the `notices` of its JSON)."""
    if getattr(ctx, "noted", False):
        return
    ctx.noted = True
    note = standin_note(ctx)
    if note:
        print(f"note: {note}", file=sys.stderr)


def add_filter_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--taxon", help="any rank or common name")
    p.add_argument("--date-from", help="YYYY-MM-DD")
    p.add_argument("--date-to", help="YYYY-MM-DD")
    p.add_argument("--months", help="comma-separated months 1-12, any year")
    p.add_argument("--bbox", help="WEST,SOUTH,EAST,NORTH in degrees")
    p.add_argument("--license", help="licence code, e.g. cc-by (exactly: not cc-by-nc), cc-by-4.0 (that version), "
                                     "cc-by* (the family), nc (every non-commercial licence)")
    # camera traps (issue 34)
    p.add_argument("--deployment", metavar="ID[,ID...]", help="camera traps: only these deployments' frames")
    p.add_argument("--time-of-day", metavar="day|night|dawn|dusk[,...]",
                   help="camera traps: by the sun at the frame's place and time (dawn and dusk: civil twilight)")
    p.add_argument("--include-empty", action="store_true",
                   help="camera traps: also frames a detector looked at and found nothing in (hidden by default)")
    p.add_argument("--by-event", action="store_true", help="camera traps: one result per event (its best frame)")
    p.add_argument("--category", metavar="animal|person|vehicle[,...]",
                   help="camera traps: frames with a detection of this category (at or above detection_threshold)")
    p.add_argument("--species", help="camera traps: frames (or their events) observed to show this scientific name")
    p.add_argument("--classified", choices=("human", "machine", "none"),
                   help="camera traps: frames identified by a person, by a machine, or not at all")


def parse_ids(text: str | None, flag: str = "--ids") -> tuple[int, ...]:
    """A comma-separated list of photo ids (bounds are checked with the request)."""
    if not text:
        return ()
    try:
        return tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise InputError(f"{flag} {text!r} is not a comma-separated list of photo ids", "e.g. 12,40,7") from None


def filters_from_args(args, ids: tuple[int, ...] | None = None) -> Filters:
    months: tuple[int, ...] = ()
    if getattr(args, "months", None):
        try:
            months = tuple(int(m) for m in args.months.split(","))
        except ValueError:
            months = (0,)
        if any(not 1 <= m <= 12 for m in months):
            raise InputError(f"--months {args.months!r} is not a list of months 1-12", "e.g. --months 4,5,6")
    return Filters(taxon=args.taxon or "", date_from=parse_date(args.date_from), date_to=parse_date(args.date_to),
                   months=months, bbox=parse_bbox(args.bbox), license=args.license or "", ids=ids,
                   camtrap=camtrap_filters(getattr(args, "deployment", None), getattr(args, "time_of_day", None),
                                           getattr(args, "include_empty", False), getattr(args, "by_event", False),
                                           getattr(args, "category", None), getattr(args, "species", None),
                                           getattr(args, "classified", None)))


def taken(timestamp: str | None) -> str:
    """A frame's capture time for a terminal: the camera's wall time with its UTC offset, or said unknown."""
    return capture_time.taken(timestamp, unknown="time unknown", with_offset="{time} UTC{offset}",
                              local="{time} (offset from UTC not known)")


def camtrap_text(facts: dict | None) -> str:
    """What a result line adds for a camera-trap frame: '  deployment 62c200a9 · 2021-04-11 20:43:15 UTC+01:00
    · 10 frames' (the frames of its event, with --by-event); '' for a photo without camera-trap facts."""
    if not facts or not (facts.get("deployment_id") or facts.get("timestamp") or facts.get("event_id")):
        return ""
    parts = [f"deployment {facts['deployment_id']}"] if facts.get("deployment_id") else []
    parts.append(taken(facts.get("timestamp")))
    if "event_frames" in facts and facts.get("event_frames"):
        n = int(facts["event_frames"])
        parts.append("1 frame" if n == 1 else f"{n} frames")
    return "  " + " · ".join(parts)


def standin_scores_note(model: str) -> str:
    """What the command line notes over scores from the offline stand-in `model` (its name as the embedder
    setting gives it), in the page's words (core.contracts.standin_scores)."""
    from core.contracts import standin_scores

    return f"scores are {standin_scores.STANDIN_NAME}s, {standin_scores.meaning(model)}"


def print_hits(result) -> None:
    """The notices, then one line per hit. With the offline stand-in embedder (stages' `standin_similarity`) a
    note says its scores mean nothing about the photos, in the page's words (core.contracts.standin_scores), and
    each score made from its similarities (a cosine or a fusion of rankings, not a checks score) reads
    `stand-in`; where Verify's checks rank the hits no score is a stand-in's and no note is printed."""
    from core.contracts import standin_scores

    for line in result.notices:
        print(f"note: {line}")
    stages = result.stages or {}
    model = stages.get("standin_similarity")
    marked = bool(model) and (stages.get("score") or {}).get("kind") != "checks"
    if marked and result.hits:  # Verify's checks rank them: no stand-in score is printed, nothing to say of one
        print(f"note: {standin_scores_note(model)}")
    for hit in result.hits:
        p = hit.photo
        name = f"{p.scientific_name} ({p.common_name})" if p and p.common_name else (p.scientific_name if p else "")
        covers = f"  covers: {'; '.join(hit.covers)}" if hit.covers else ""
        n = len(hit.near_copies or [])  # core.vectors.near_copies: copies of this picture folded into it
        copies = f"  +{n} near-cop{'y' if n == 1 else 'ies'} {list(hit.near_copies)}" if n else ""
        score = standin_scores.STANDIN_SCORE.format(score=f"{hit.score:.3f}") if marked else f"{hit.score:.3f}"
        where = camtrap_text(getattr(hit, "camtrap", None))
        print(f"{hit.rank:3d}. [{hit.photo_id}] {score}  {name}  {p.path if p else ''}{where}{covers}{copies}")
    if not result.hits:
        print("no results")
