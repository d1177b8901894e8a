"""Relevance labels out of the session log: export to CSV, JSONL and the INQUIRE-Rerank column layout,
agreement between two annotators (Cohen's kappa), and the photos they disagree on, to adjudicate."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from core import darwincore
from core.contracts import bounds
from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.contracts.sessionlog import RELEVANT, SKIPPED, Label
from core.exports import public_name, write_csv

# csv / jsonl: one row per (query, photo, annotator), the final judgement; keypresses: every label as made
# (a skip then a label is two rows); dwc: a Darwin Core Archive of the photos judged relevant
EXPORT_FORMATS = ("csv", "jsonl", "keypresses", "inquire-rerank", "dwc")
LABEL_COLUMNS = ("session_id", "query", "photo_id", "label", "judgement", "annotator", "seconds", "created_at")
JUDGEMENTS = {1: "relevant", 0: "not relevant", -1: "skipped"}
# the columns of the INQUIRE-Rerank parquet files, minus the image bytes (the file name points at the photo),
# plus who judged: one row per (query, photo, annotator)
INQUIRE_RERANK_COLUMNS = ("query", "relevant", "annotator", "clip_score", "inat24_image_id", "inat24_file_name",
                          "supercategory", "category", "iconic_group", "inat24_species_id",
                          "inat24_species_name", "latitude", "longitude", "location_uncertainty", "date",
                          "license", "rights_holder")
# the annotator name under which an adjudicator's final word on a disagreement is saved
ADJUDICATED = "adjudicated"


def same_annotator(a: str, b: str) -> bool:
    """Whether two annotator names are one person's: compared Unicode-normalised and case-folded
    (core.contracts.bounds.name_key), so "Renée" typed composed, decomposed or in capitals is one annotator."""
    return bounds.name_key(a) == bounds.name_key(b)


def annotator_names(labels: Sequence[Label]) -> dict[str, str]:
    """name_key -> the annotator's name as first written, the one every summary shows."""
    shown: dict[str, str] = {}
    for lb in labels:
        shown.setdefault(bounds.name_key(lb.annotator), bounds.name(lb.annotator))
    return shown


def latest(labels: Sequence[Label]) -> list[Label]:
    """The last label of each (query, photo, annotator), in first-seen order: a relabel replaces a label.
    One annotator whatever the case or Unicode form of the name (same_annotator); each label keeps the name
    it was written with."""
    last: dict[tuple[str, int, str], Label] = {}
    for lb in labels:
        last[(lb.query, lb.photo_id, bounds.name_key(lb.annotator))] = lb
    return list(last.values())


def _label_row(lb: Label) -> dict:
    return {"session_id": lb.session_token or lb.session_id,  # the token a log gave, else the number given
            "query": lb.query, "photo_id": lb.photo_id, "label": lb.label,
            "judgement": JUDGEMENTS.get(lb.label, ""), "annotator": lb.annotator, "seconds": round(lb.seconds, 3),
            "created_at": lb.created_at.isoformat()}


def relevant_occurrences(labels: Sequence[Label], photos: Mapping[int, Photo]) -> list[darwincore.Occurrence]:
    """The photos judged relevant, one per (query, photo), each saying who judged it: an adjudicator's final
    word decides a pair; otherwise a pair is exported when any annotator's latest label is relevant, and the
    remark names who judged it relevant and who did not."""
    by_pair: dict[tuple[str, int], dict[str, int]] = {}
    final: dict[tuple[str, int], int] = {}
    for lb in latest(labels):
        if lb.label == SKIPPED:
            continue
        if same_annotator(lb.annotator, ADJUDICATED):
            final[(lb.query, lb.photo_id)] = lb.label
        else:
            by_pair.setdefault((lb.query, lb.photo_id), {})[lb.annotator] = lb.label
    out = []
    for (query, pid), who in by_pair.items():
        yes = [a for a, v in who.items() if v == RELEVANT]
        decided = final.get((query, pid))
        if pid not in photos or (decided is not None and decided != RELEVANT) or (decided is None and not yes):
            continue
        remark = f"judged relevant to the search “{query}” by {', '.join(yes) or ADJUDICATED}"
        no = [a for a in who if a not in yes]
        if no:
            remark += f" (not relevant for {', '.join(no)}" + ("; adjudicated relevant)" if decided else ")")
        out.append(darwincore.Occurrence(photos[pid], remark))
    return out


def _inquire_row(lb: Label, photo: Photo | None, scores: Mapping[int, float], roots: Sequence[Path | str]) -> dict:
    p = photo or Photo(path="")
    extra = p.extra or {}
    return {"query": lb.query, "relevant": lb.label, "annotator": lb.annotator,
            "clip_score": scores.get(lb.photo_id, ""),
            # the dataset's own id; EcoLens's row id means nothing to INQUIRE's tools, so a photo without one is ''
            "inat24_image_id": extra.get("inat24_image_id", ""),
            "inat24_file_name": public_name(p, roots) if photo else "",
            "supercategory": extra.get("supercategory", p.kingdom), "category": extra.get("category", p.class_name),
            "iconic_group": extra.get("iconic_group", p.class_name),
            "inat24_species_id": extra.get("inat24_species_id", ""), "inat24_species_name": p.scientific_name,
            "latitude": "" if p.latitude is None else p.latitude,
            "longitude": "" if p.longitude is None else p.longitude,
            "location_uncertainty": extra.get("location_uncertainty", ""),
            "date": p.observed_on.isoformat() if p.observed_on else "", "license": p.license,
            "rights_holder": p.rights_holder}


def export_labels(labels: Sequence[Label], fmt: str, path: Path | str,
                  photos: Mapping[int, Photo] | None = None, scores: Mapping[int, float] | None = None,
                  roots: Sequence[Path | str] = (), dwc: Mapping[str, object] | None = None) -> int:
    """Write `labels` to `path` in `fmt` (EXPORT_FORMATS) and return the number of rows.

    csv and jsonl hold one row per (query, photo, annotator): that annotator's final judgement (a relabel
    replaces a label, a skip then a label is the label), with its time; keypresses holds every label as
    made. inquire-rerank keeps the latest relevant / not relevant judgements (skips dropped) with the photo's
    metadata from `photos` and its file named relative to `roots` (core.exports.public_name). dwc writes a
    Darwin Core Archive of the photos judged relevant (core.darwincore; `dwc` holds its write_archive
    options: synthetic, default_basis)."""
    if fmt not in EXPORT_FORMATS:
        raise InputError(f"Unknown export format {fmt!r}", "choose one of: " + ", ".join(EXPORT_FORMATS))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "dwc":
        found = relevant_occurrences(labels, photos or {})
        if not found:
            raise InputError("No photo of these labels is judged relevant",
                             "a Darwin Core export holds the photos judged relevant: judge some first")
        return darwincore.write_archive(path, found, roots, **dict(dwc or {}))
    final = latest(labels)
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8") as fh:
            for lb in final:
                fh.write(json.dumps(_label_row(lb), ensure_ascii=False) + "\n")
        return len(final)
    if fmt in ("csv", "keypresses"):
        rows, columns = [_label_row(lb) for lb in (final if fmt == "csv" else labels)], LABEL_COLUMNS
    else:
        photos, scores = photos or {}, scores or {}
        rows = [_inquire_row(lb, photos.get(lb.photo_id), scores, roots)
                for lb in latest(labels) if lb.label != SKIPPED]
        columns = INQUIRE_RERANK_COLUMNS
    write_csv(path, columns, rows)  # text cells that a spreadsheet would run as formulas are neutralised
    return len(rows)


@dataclass
class Agreement:
    annotators: tuple[str, str]
    pairs: int  # (query, photo) pairs both annotators labelled relevant / not relevant
    observed: float  # share of those pairs on which they agree
    kappa: float | None  # None when there are no shared pairs


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's kappa of two equally long label sequences; 1.0 when chance agreement is already perfect."""
    if len(a) != len(b):
        raise InputError("The two annotators' label lists differ in length", "compare the same pairs")
    n = len(a)
    if n == 0:
        raise InputError("No shared pairs to compare", "let both annotators label the same photos")
    cats = sorted(set(a) | set(b))
    p_o = sum(x == y for x, y in zip(a, b)) / n
    p_e = sum((list(a).count(c) / n) * (list(b).count(c) / n) for c in cats)
    if p_e >= 1.0:  # both always used the same single category: agreement cannot be beyond chance
        return 1.0
    return (p_o - p_e) / (1.0 - p_e)


def agreement(labels: Sequence[Label], first: str = "", second: str = "") -> list[Agreement]:
    """Kappa for each pair of annotators (or just `first` vs `second`) over the pairs both judged."""
    by_annotator = _judgements(labels)
    names = sorted(by_annotator)
    if first and second:  # the names as the caller typed them, matched like every other name
        shown = {bounds.name_key(n): n for n in names}
        first, second = (shown.get(bounds.name_key(n), bounds.name(n)) for n in (first, second))
    pairs = [(first, second)] if first and second else [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]
    out = []
    for x, y in pairs:
        ax, ay = by_annotator.get(x, {}), by_annotator.get(y, {})
        shared = sorted(set(ax) & set(ay))
        if not shared:
            out.append(Agreement((x, y), 0, 0.0, None))
            continue
        la, lb_ = [ax[k] for k in shared], [ay[k] for k in shared]
        observed = sum(p == q for p, q in zip(la, lb_)) / len(shared)
        out.append(Agreement((x, y), len(shared), observed, cohen_kappa(la, lb_)))
    return out


def _judgements(labels: Sequence[Label]) -> dict[str, dict[tuple[str, int], int]]:
    """annotator (as first written) -> (query, photo) -> latest relevant / not relevant label; skips and
    adjudications left out."""
    shown = annotator_names(labels)
    out: dict[str, dict[tuple[str, int], int]] = {}
    for lb in latest(labels):
        if lb.label != SKIPPED and not same_annotator(lb.annotator, ADJUDICATED):
            out.setdefault(shown[bounds.name_key(lb.annotator)], {})[(lb.query, lb.photo_id)] = lb.label
    return out


@dataclass
class Disagreement:
    query: str
    photo_id: int
    labels: dict[str, int]  # annotator -> latest label (1 / 0)
    adjudicated: int | None  # the adjudicator's label, None while undecided


def disagreements(labels: Sequence[Label]) -> list[Disagreement]:
    """The (query, photo) pairs on which annotators' latest labels differ, in first-labelled order, each with
    the adjudicated label if one was given."""
    by_annotator = _judgements(labels)
    shown = annotator_names(labels)
    pairs: dict[tuple[str, int], dict[str, int]] = {}
    for lb in latest(labels):
        key, who = (lb.query, lb.photo_id), shown[bounds.name_key(lb.annotator)]
        if who in by_annotator and key in by_annotator[who]:
            pairs.setdefault(key, {})[who] = by_annotator[who][key]
    final = {(lb.query, lb.photo_id): lb.label for lb in latest(labels) if same_annotator(lb.annotator, ADJUDICATED)}
    return [Disagreement(q, pid, dict(sorted(who.items())), final.get((q, pid)))
            for (q, pid), who in pairs.items() if len(set(who.values())) > 1]
