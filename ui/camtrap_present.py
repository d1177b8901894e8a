"""Camera-trap facts as the page words them: the gallery caption of a frame or an event card (deployment,
time, "N frames"), the photo view's lines (deployment, place, time with its offset, event, detections,
identifications), and what the page says of a photo matched through a detection's box. Pure functions of plain data
(the dicts of core.camtrap.frame_facts and the search JSON), no gradio."""
from __future__ import annotations

from html import escape
from typing import Any, Sequence

from core.camtrap.capture_time import taken as time_words
from core.contracts.camtrap import IMPORTED_MODEL_PREFIX as IMPORTED  # the model of a package's own boxes
from ui import strings_camtrap as SC


def is_camtrap(hit: dict[str, Any]) -> bool:
    """A camera-trap frame: it has a deployment or an event, or a detector looked at it (a plain photo may
    have a capture time from its EXIF, and is still a plain photo)."""
    return bool(hit.get("deployment_id") or hit.get("event_id") or hit.get("detections")
                or hit.get("detector_looked"))


def frames_text(n: int) -> str:
    return SC.CT_ONE_FRAME if int(n) == 1 else SC.CT_FRAMES.format(n=f"{int(n):,}")


def short_time(timestamp: str | None) -> str:
    """'2024-06-01 03:12' from '2024-06-01T03:12:45+02:00' (a caption has no room for seconds or offsets)."""
    if not timestamp:
        return SC.CT_NO_TIME
    return str(timestamp)[:16].replace("T", " ")


def caption_tail(hit: dict[str, Any], by_event: bool = False) -> str:
    """What a camera-trap tile's caption adds after the name: for an event card ' · 5 frames' first (a narrow
    tile's two lines keep it), then ' · siteA · 2024-06-01 03:12'; '' for a plain photo."""
    if not is_camtrap(hit):
        return ""
    parts = []
    if by_event or hit.get("event_frames") not in (None, 0) and "event_frame_ids" in hit:
        n = hit.get("event_frames") or len(hit.get("event_frame_ids") or []) or 1
        parts.append(frames_text(n))
    if hit.get("deployment_id"):
        parts.append(str(hit["deployment_id"]))
    parts.append(short_time(hit.get("timestamp")))
    return " · " + " · ".join(parts)


def taken_text(timestamp: str | None) -> str:
    """The capture time in words: the camera's wall time, with 'UTC+02:00' when the offset is known."""
    return time_words(timestamp, unknown=SC.CT_NO_TIME, with_offset=SC.CT_TAKEN_OFFSET, local=SC.CT_TAKEN_LOCAL)


def detection_text(d: dict[str, Any]) -> str:
    category = SC.CT_CATEGORY_NAMES.get(d.get("category"), str(d.get("category") or "?"))
    label = SC.CT_DETECTION_LABEL.format(label=d["label"]) if d.get("label") else ""
    model = str(d.get("model") or "?")
    if model.startswith(IMPORTED):  # a box of the package's own observation: who classified it, said so
        model = SC.CT_DETECTION_IMPORTED.format(model=model[len(IMPORTED):].strip() or "?")
    return SC.CT_DETECTION.format(category=category, conf=float(d.get("conf") or 0), where=label, model=model)


def who_text(o: dict[str, Any]) -> str:
    name = o.get("classified_by") or o.get("annotator") or SC.CT_OBS_SOMEONE
    if o.get("method") == "human":
        return SC.CT_OBS_BY_HUMAN.format(name=name)
    if o.get("method") == "machine":
        p = o.get("probability")
        return (SC.CT_OBS_BY_MACHINE.format(name=name, p=float(p)) if isinstance(p, (int, float))
                else SC.CT_OBS_BY_MACHINE_PLAIN.format(name=name))
    return str(name)


def when_text(stamp: str) -> str:
    """'2026-11-28 05:33 UTC' from '2026-11-28T05:33:10+00:00' (minutes; the offset as written otherwise)."""
    text = str(stamp)
    offset = text[19:]
    zone = " UTC" if offset in ("Z", "+00:00") else f" UTC{offset}" if offset else ""
    return text[:16].replace("T", " ") + zone


def observation_text(o: dict[str, Any]) -> str:
    what = o.get("scientific_name") or SC.CT_OBS_TYPES.get(o.get("type"), str(o.get("type") or "?"))
    count = SC.CT_OBS_COUNT.format(n=o["count"]) if o.get("count") not in (None, "") else ""
    when = f", {when_text(o['classified_at'])}" if o.get("classified_at") else ""
    return SC.CT_OBSERVATION.format(what=what, count=count, level=SC.CT_OBS_LEVELS.get(o.get("level"), ""),
                                   who=who_text(o), when=when)


def species_shown(facts: dict[str, Any] | None) -> str:
    """The species to confirm with one key: the newest identification's name (a person's first), else the
    detector's classifier label; '' when none is known."""
    obs = [o for o in (facts or {}).get("observations") or [] if o.get("scientific_name")]
    obs.sort(key=lambda o: (o.get("method") == "human", o.get("classified_at") or ""), reverse=True)
    if obs:
        return str(obs[0]["scientific_name"])
    labelled = [d for d in (facts or {}).get("detections") or [] if d.get("label")]
    return str(labelled[0]["label"]) if labelled else ""


def count_shown(facts: dict[str, Any] | None) -> int:
    """The count the Identify box starts at: the newest identification's count (a person's first), else the
    event's MaxN, else 1 (one animal; 0 is no animal, which is said with 'blank')."""
    obs = [o for o in (facts or {}).get("observations") or [] if o.get("count") not in (None, "")]
    obs.sort(key=lambda o: (o.get("method") == "human", o.get("classified_at") or ""), reverse=True)
    for found in [o["count"] for o in obs] + [(facts or {}).get("max_n")]:
        if isinstance(found, (int, float)) and found >= 1:
            return int(found)
    return 1


def box_label(d: dict[str, Any]) -> str:
    """The label drawn above a box: 'animal 93%'."""
    return SC.CT_BOX_LABEL.format(category=d.get("category") or "animal", conf=float(d.get("conf") or 0))


def in_box(hit: dict[str, Any], short: bool = False) -> str:
    """What the page says of a photo matched through a detection's box ('' for a whole-frame match): a few
    words for a gallery caption, a sentence for the photo view."""
    item = hit.get("matched_detection")
    if not item:
        return ""
    category = str(item.get("category") or "animal")
    if short:
        return " · " + SC.IN_BOX_SHORT.format(category=category)
    return SC.IN_BOX.format(article="an" if category[:1] in "aeiou" else "a", category=category,
                           conf=round(100 * float(item.get("conf") or 0)))


def facts_html(facts: dict[str, Any] | None) -> str:
    """The photo view's camera-trap table (all escaped); '' for a plain photo. (The box a match went through
    is said by in_box, in the explanation.)"""
    if not facts or not is_camtrap(facts):
        return ""
    rows: list[tuple[str, str]] = []
    if facts.get("deployment_id"):
        rows.append((SC.CT_DEPLOYMENT, str(facts["deployment_id"])))
    if facts.get("place"):
        rows.append((SC.CT_PLACE, str(facts["place"])))
    taken = taken_text(facts.get("timestamp"))
    if facts.get("time_issue"):
        taken += "; " + SC.CT_TIME_ISSUE.format(why=facts["time_issue"])
    rows.append((SC.CT_TAKEN, taken))
    if facts.get("event_id"):
        n = facts.get("event_frames") or 1
        line = (SC.CT_EVENT_LINE.format(event=facts["event_id"], frames=frames_text(n), max_n=facts["max_n"])
                if facts.get("max_n")
                else SC.CT_EVENT_LINE_PLAIN.format(event=facts["event_id"], frames=frames_text(n)))
        rows.append((SC.CT_EVENT, line))
    boxes = facts.get("detections") or []
    if boxes:
        rows += [(SC.CT_DETECTIONS if i == 0 else "", detection_text(d)) for i, d in enumerate(boxes)]
    else:
        rows.append((SC.CT_DETECTIONS, SC.CT_NO_DETECTIONS if facts.get("detector_looked") else SC.CT_NOT_LOOKED))
    rows += [(SC.CT_OBSERVATIONS if i == 0 else "", observation_text(o))
             for i, o in enumerate(facts.get("observations") or [])]
    body = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    return f"<table class='ecolens-meta ecolens-ct'><caption>{escape(SC.CT_HEAD)}</caption>{body}</table>"


def strip_items(frame_ids: Sequence[int], paths: Sequence[str], times: dict[int, str | None]) -> list[tuple[str, str]]:
    """The photo view's strip of an event's frames: (file, 'frame 2 of 5 · 03:12:47')."""
    total = len(frame_ids)
    return [(path, SC.CT_STRIP_CAPTION.format(n=i + 1, total=total,
                                              time=(str(times.get(int(pid)) or "")[11:19] or SC.CT_NO_TIME)))
            for i, (pid, path) in enumerate(zip(frame_ids, paths))]
