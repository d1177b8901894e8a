"""A frame's capture time as the catalog keeps it: the camera's wall time after the deployment's clock correction
(captured_at, never converted), the UTC offset when one is known (the photo's own OffsetTimeOriginal, else its
deployment's), and the UTC instant that events, sorting and the sun use (utc_epoch: with no known offset, the
default_utc_offset setting stands in).

EXIF that lies is kept out of every filter: a year before 1990 (a camera whose clock was reset says 1970; no
digital camera trap wrote EXIF before 1990), a time in the future, an offset no zone has (zones run from -12:00
to +14:00 in whole, half or three-quarter hours). Such a frame keeps what the camera wrote, with `time_issue`
saying why, but gets no utc_epoch and gives its photo no date."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone

from core.camtrap.exif import ExifFacts, parse_offset

EARLIEST_YEAR = 1990
FUTURE_SLACK = timedelta(days=1)  # a camera a few hours ahead of this machine's clock is not lying
ZONE_MINUTES = (0, 30, 45)
STAMP_FORMAT = "%Y-%m-%dT%H:%M:%S"


@dataclass(frozen=True, slots=True)
class CaptureTime:
    captured_at: str | None = None  # 'YYYY-MM-DDTHH:MM:SS', local wall time after the clock correction
    utc_offset: str | None = None  # '+02:00' when known (the photo's own, else its deployment's)
    utc_epoch: float | None = None  # seconds since 1970 UTC; None when the time is unknown or lies
    time_issue: str | None = None  # why the time is kept out of the filters; None when it is fine
    observed_on: date | None = None  # the photo's date, when the time can be trusted


def offset_problem(text: str) -> str | None:
    """Why `text` is not a UTC offset a zone can have (None when it is one): '+05:17', '+15:00', '2h'."""
    parts = parse_offset(text)
    if parts is None:
        return f"offset {text!r} is not written as +HH:MM or -HH:MM"
    sign, hours, minutes = parts
    total = sign * (hours * 60 + minutes)
    if minutes not in ZONE_MINUTES or not -12 * 60 <= total <= 14 * 60:
        return f"impossible offset {text.strip()}"
    return None


def offset_seconds(text: str) -> int:
    """A checked offset ('+05:30') in seconds east of UTC."""
    sign, hours, minutes = parse_offset(text) or (1, 0, 0)
    return sign * (hours * 3600 + minutes * 60)


def format_offset(seconds: int) -> str:
    sign = "+" if seconds >= 0 else "-"
    hours, minutes = divmod(abs(int(seconds)) // 60, 60)
    return f"{sign}{hours:02d}:{minutes:02d}"


def resolve(facts: ExifFacts, *, clock_offset_s: float = 0.0, deployment_offset: str | None = None,
            default_offset: str = "+00:00", now: datetime | None = None) -> CaptureTime:
    """The capture time of a frame from its EXIF and its deployment (clock correction, UTC offset)."""
    if facts.taken is None:
        return CaptureTime(time_issue=f"unreadable date {facts.unreadable!r}" if facts.unreadable else None)
    local = facts.taken + timedelta(seconds=float(clock_offset_s or 0.0))
    stamp = local.strftime(STAMP_FORMAT)
    own = facts.offset.strip()
    issue = offset_problem(own) if own else None
    known = own if own and issue is None else None
    if known is None and deployment_offset and offset_problem(deployment_offset) is None:
        known = deployment_offset
    if issue is None:
        issue = _date_problem(local, known or default_offset, now)
    if issue is not None:
        return CaptureTime(captured_at=stamp, utc_offset=known, time_issue=issue)
    zone = timezone(timedelta(seconds=offset_seconds(known or default_offset)))
    return CaptureTime(captured_at=stamp, utc_offset=known, utc_epoch=local.replace(tzinfo=zone).timestamp(),
                       observed_on=local.date())


def _date_problem(local: datetime, offset: str, now: datetime | None) -> str | None:
    if local.year < EARLIEST_YEAR:
        return f"year {local.year}" if local.year == 1970 else f"year {local.year} (before {EARLIEST_YEAR})"
    moment = local.replace(tzinfo=timezone(timedelta(seconds=offset_seconds(offset))))
    if moment > (now or datetime.now(UTC)) + FUTURE_SLACK:
        return f"date in the future ({local.strftime(STAMP_FORMAT)})"
    return None


def timestamp(captured_at: str | None, utc_offset: str | None) -> str | None:
    """The timestamp a search result shows: captured_at, with the offset only when it is known."""
    if not captured_at:
        return None
    return captured_at + (utc_offset or "")


def taken(shown: str | None, *, unknown: str, with_offset: str, local: str) -> str:
    """A timestamp (as `timestamp` makes it) in the caller's words: `unknown` when there is none, else the
    camera's wall time ('2024-06-01 03:12:45') put into `with_offset` with its offset ('+02:00'; 'Z' and
    '-00:00' read '+00:00'), or into `local` when the offset is not known. The page (ui.camtrap_present) and
    the command line (cli.common) each word it their way."""
    if not shown:
        return unknown
    text = str(shown)
    time, offset = text[:19].replace("T", " "), text[19:]
    offset = "+00:00" if offset in ("Z", "-00:00") else offset
    return with_offset.format(time=time, offset=offset) if offset else local.format(time=time)
