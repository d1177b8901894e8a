"""The check every written answer passes before it is shown as an answer with evidence.

A model's answer (the text LLM reading the photo notes, or a photo reader) is shown only when it cites at
least one photo it was shown, cites none it was not shown, is not an echo of the prompt, and names no organism
that none of its cited photos records (core/methods/evidence.py: claims naming such an organism are left out;
when no claim citing a photo is left, the answer is refused). Anything else is refused with the reason; a
refused answer is never `verified`. Names are those a world or the catalog knows, plus scientific binomials the
answer writes in parentheses ("Scorpionfish (Scopus angustus)"), which a cited photo must record (in its
catalog fields, or in the note the model was shown for it)."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from core.contracts.records import Photo
from core.methods import evidence

_CITE_GROUP = re.compile(r"\[([\d,\s]+)\]")
# the prompt's own framing (core/prompts/answer.py): an answer holding it repeats the prompt
_PROMPT_LABELS = re.compile(r"(^|\n)\s*(question|photo notes)\s*:|the photos follow, each after its id",
                            re.IGNORECASE)
_NOTE_LINE = re.compile(r"^\s*\[\d+\]\s*(.+)$")
# a binomial in parentheses, as a model writes a scientific name after a common one
_BINOMIAL = re.compile(r"\(\s*([A-Z][a-z]{2,}\s+[a-z]{3,})\s*\)")


@dataclass(frozen=True)
class Checked:
    """What the check found: the text to show (claims about unsupported organisms left out), the shown photos
    it cites, the organisms left out, and `refused` (the reason) when the answer cannot be shown at all."""

    text: str
    cited: list[int] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    refused: str | None = None


def citations(text: str) -> list[int]:
    """Every photo id `text` cites in square brackets ('[12]', '[12, 15]'), in order of first citation."""
    found: list[int] = []
    for group in _CITE_GROUP.findall(text or ""):
        for raw in re.findall(r"\d+", group):
            if len(raw) <= 18 and int(raw) not in found:
                found.append(int(raw))
    return found


def _plain(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", _CITE_GROUP.sub(" ", text or "").lower()))


def echo_of_prompt(text: str, question: str, notes: Iterable[tuple[int, str]] = ()) -> bool:
    """True when the answer repeats its prompt instead of answering: it holds the prompt's labels ('Question:',
    'Photo notes:'), it is the question itself, or every line of it is a note written as the prompt lists
    them ('[12] note')."""
    if _PROMPT_LABELS.search(text or ""):
        return True
    if _plain(text) and _plain(text) == _plain(question):
        return True
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    given = {_plain(n) for _, n in notes if _plain(n)}
    listed = [_NOTE_LINE.match(ln) for ln in lines]
    return len(lines) >= 2 and all(m and _plain(m.group(1)) in given for m in listed)


def binomials(text: str) -> list[str]:
    """Scientific names the text writes in parentheses, as written."""
    return list(dict.fromkeys(" ".join(m.split()) for m in _BINOMIAL.findall(text or "")))


def _unrecorded_binomials(text: str, photos: Sequence[Photo], notes: Mapping[int, str]) -> list[str]:
    """Binomials of a claim that cites photos, recorded by none of the photos it cites (neither in their
    catalog fields nor in the notes the model was shown for them)."""
    by_id = {int(p.id): p for p in photos if p.id is not None}
    cited_all = [i for i in citations(text) if i in by_id]
    bad: list[str] = []
    for claim in re.split(r"(?<=[.!?])\s+|;\s+|\n+", text or ""):
        ids = [i for i in citations(claim) if i in by_id] or cited_all
        for name in binomials(claim):
            key = name.lower()
            if not any(key in by_id[i].taxon_names() or key in (notes.get(i) or "").lower() for i in ids):
                bad.append(name)
    return list(dict.fromkeys(bad))


def check(text: str, question: str, photos: Sequence[Photo], *, who: str = "the answer",
          notes: Sequence[tuple[int, str]] = (), catalog_names: Iterable[str] = (),
          checked: Mapping[int, Sequence[str]] | None = None) -> Checked:
    """The answer `who` wrote, checked against the photos it was shown (see the module note)."""
    shown = [int(p.id) for p in photos if p.id is not None]
    text = (text or "").strip()
    if not text:
        return Checked("", refused=f"{who} wrote nothing")
    if echo_of_prompt(text, question, notes):
        return Checked(text, refused=f"{who} repeated the question and photo notes it was given instead of "
                                     "answering")
    foreign = [i for i in citations(text) if i not in shown]
    if foreign:
        return Checked(text, refused=f"{who} cites photos it was not shown ({', '.join(map(str, foreign))}; "
                                     f"it was shown {_ids(shown)})")
    cited = [i for i in citations(text) if i in shown]
    if not cited:
        return Checked(text, refused=f"{who} cites none of the photos it was shown ({_ids(shown)}), so nothing "
                                     "it says rests on them")
    invented = _unrecorded_binomials(text, photos, dict(notes))
    if invented:
        return Checked(text, refused=f"{who} named {', '.join(invented)}, which none of the photos it cites "
                                     f"records (they are catalogued as {evidence.catalogued_as(photos)})")
    kept, bad = evidence.kept_to_evidence(text, question, photos, catalog_names, checked)
    if not bad:
        return Checked(text, cited)
    if citations(kept) and any(i in shown for i in citations(kept)):
        return Checked(kept, [i for i in citations(kept) if i in shown], bad)
    return Checked(text, left_out=bad, refused=(
        f"{who} named {', '.join(bad)}, which none of the photos it cites is catalogued as or was checked to "
        f"show (they are catalogued as {evidence.catalogued_as(photos)})"))


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(map(str, ids)) if ids else "none"
