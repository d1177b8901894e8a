"""The deterministic rules behind every LLM task (used offline and whenever the LLM is unusable)."""
from __future__ import annotations

import re
from collections import Counter

from core.methods.decompose import MODIFIERS, rule_decompose, tokens

COLOURS = frozenset("red orange yellow green blue purple violet pink white black brown grey gray golden silver "
                    "rusty tan buff olive cream crimson scarlet".split())
_FEATURE = re.compile(
    r"^(?:what|which|how)\s+(?:(?:is|are)\s+the\s+)?(?:colou?rs?|shapes?|patterns?|markings?|sizes?|lengths?|"
    r"many|number|kind|type)\b(?:\s+of)?\s*(?:(?:is|are|does|do|did|has|have)\s+)?", re.IGNORECASE)
_WH = re.compile(r"^(?:what|which|how|does|do|did|is|are|can|has|have)\b", re.IGNORECASE)
_FRAME_WORDS = frozenset(
    "what which how who does do did is are was were has have had one the a an of difference differences between "
    "compare comparison colour color colours colors shape pattern size length longer shorter larger smaller "
    "bigger darker lighter brighter more less vs versus or and both same differ from that those".split())
_SCENE_TAIL = "the whole organism in clear view, natural posture, in its usual surroundings"


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ?.!,")
    return re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.IGNORECASE)


def comparison_organisms(query: str) -> list[str] | None:
    """The two organisms of a comparison question, or None."""
    q = " ".join(query.split()).rstrip("?. ")
    m = re.search(r"^how\s+(?:do|does)\s+(?:the\s+)?.+\s+of\s+(?:the\s+)?(.+?)\s+differ\s+from\s+"
                  r"(?:that|those)\s+of\s+(?:the\s+)?(.+)$", q, re.IGNORECASE)  # "how does the crest of A differ from that of B"
    if m and _clean(m.group(1)).lower() != _clean(m.group(2)).lower():
        return [_clean(m.group(1)), _clean(m.group(2))]
    for pattern in (r"\bbetween\s+(?:the\s+)?(.+?)\s+and\s+(?:the\s+)?(.+)$",
                    r"^(?:compare\s+)?(?:the\s+)?(.+?)\s+(?:vs\.?|versus|compared (?:to|with))\s+(?:the\s+)?(.+)$",
                    r",\s*(?:the\s+)?(.+?)\s+or\s+(?:the\s+)?(.+)$",
                    r"^(?:do|does|did)\s+(?:the\s+)?(.+?)\s+and\s+(?:the\s+)?(.+?)\s+(?:both|differ|share|have)\b.*$"):
        m = re.search(pattern, q, re.IGNORECASE)
        if m:
            a, b = _clean(m.group(1)), _clean(m.group(2))
            b = re.split(r"\s+(?:in|on|by|when)\s+(?:their|its|the)\b", b)[0]
            if a and b and a.lower() != b.lower():
                return [a, b]
    return None


def _without_values(text: str) -> str:
    words = [w for w in text.split() if w.lower().strip(",.") not in COLOURS]
    return " ".join(words)


def _feature_part(query: str) -> str | None:
    q = " ".join(query.split()).rstrip("?. ")
    m = _FEATURE.match(q)
    if m:
        rest = q[m.end():]
        rest = re.sub(r"\s+(?:have|has|show|display)$", "", rest, flags=re.IGNORECASE)
        return _clean(_without_values(rest)) or None
    return None


def instruction(query: str):
    """Feature questions: organism + part, value left out. Comparisons: one per organism. Else: the query
    plus a short note on appearance and posture (well under 30 words)."""
    from core.methods.llm_tasks import Instruction

    q = " ".join(query.split())
    pair = comparison_organisms(q)
    if pair:
        head = re.split(r",|\bbetween\b", q)[0]
        names = {w.lower() for w in re.findall(r"[A-Za-z'-]+", " ".join(pair))}
        part_words = [w for w in re.findall(r"[A-Za-z'-]+", head) if w.lower() not in names
                      and w.lower() not in _FRAME_WORDS and w.lower() not in COLOURS]
        tail = f", {' '.join(part_words)} clearly visible" if part_words else ", whole body in clear side view"
        return Instruction("comparison", [f"a {org}{tail}" for org in pair], pair, "rule")
    part = _feature_part(q)
    if part:
        return Instruction("feature", [f"{part}, shown from an angle where this part is clearly visible"], [], "rule")
    if _WH.match(q):  # a yes/no or wh- question about a feature: drop the question words and the values
        body = _clean(_without_values(re.sub(_WH, "", q, count=1)))
        return Instruction("feature", [f"{body}, clearly visible"], [], "rule")
    return Instruction("scene", [f"{q.rstrip('.')}, {_SCENE_TAIL}"], [], "rule")


def context(query: str) -> str:
    parts = rule_decompose(query)
    cues = "; ".join(p.text for p in parts)
    return (f"A matching photo shows {parts[0].core} and every part of the request visibly: {cues}. "
            "(Written by an offline rule, not by an expert model.)")


def subject_text(query: str) -> str:
    """The query as a noun phrase: question words and asked-about values removed."""
    q = " ".join(query.split()).rstrip("?. ")
    part = _feature_part(q)
    if part:
        return part
    if _WH.match(q):
        return _clean(_without_values(re.sub(_WH, "", q, count=1))) or q
    return q


def _a(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def subquestions(query: str, n: int) -> list[str]:
    text = subject_text(query)
    parts = rule_decompose(text)
    qs = [f"Is there {_a(parts[0].core)} in the photo?"]
    for p in parts:
        if len(qs) >= n:
            break
        if p.text.lower() != parts[0].core.lower():
            qs.append(f"Does the photo show {p.text}?")
    if len(qs) < 2:
        qs.append(f"Does the photo show {text}?")
    return qs[:n]


_YES = {"yes", "y", "yeah", "yep", "correct", "true"}
_UNSURE = {"not sure", "unsure", "don't know", "dont know", "no idea", "maybe", "unknown", "?"}


def _statement(question: str) -> str:
    q = question.strip().rstrip("?")
    q = re.sub(r"^(?:is|are|does|do|did|can|has|have)\s+(?:there\s+)?(?:the\s+photo\s+show\s+)?", "", q,
               flags=re.IGNORECASE)
    return q.strip()


_WORD_AND_REASON = re.compile(r"^(yes|y|yeah|yep|no|n|nope)\s*:\s*(.+)$", re.IGNORECASE)  # the simulated user's form


def reformulate(description: str, turns) -> str:
    """The description plus what each answer confirmed: yes -> the question's content, free text as given,
    no / not sure -> nothing. "yes: <reason>" adds the reason too; "no: <reason>" adds nothing, because a rule
    cannot tell whether the reason names what the photo shows or what it lacks."""
    bits = [" ".join(description.split()).rstrip(".")]
    for q, a in turns:
        a_norm = a.strip().lower().rstrip(".!")
        said = _WORD_AND_REASON.match(" ".join(a.split()))
        if said:
            if said.group(1).lower() in _YES:
                bits += [_statement(q), said.group(2).rstrip(".")]
            continue
        if not a_norm or a_norm in _UNSURE or a_norm in {"no", "n", "nope"}:
            continue
        bits.append(_statement(q) if a_norm in _YES else " ".join(a.split()).rstrip("."))
    return ", ".join(b for b in bits if b)


_NOT_ATTRIBUTES = ("note", "photo of", "taken on", "near", "observer", "visible")


def _phrase_question(phrase: str) -> str:
    """A yes/no question about a caption phrase that reads naturally for verbs and participles too."""
    if re.match(r"^(?:seen|shown|viewed|photographed|perched|sitting|resting|flying|feeding|carrying|"
                r"swimming|crawling|climbing|standing|wings|petals)\b", phrase):
        return f"Is the subject {phrase}?" if not phrase.startswith(("wings", "petals")) else f"Are its {phrase}?"
    return f"Does the photo show {phrase}?"


def questions(caption: str, turns, candidates: list[str], n: int) -> list[str]:
    """Questions about caption phrases that split the candidates best (present in about half of them) and that
    the caption and dialogue do not mention yet."""
    known = set(tokens(caption + " " + " ".join(q + " " + a for q, a in turns)))
    counts: Counter[str] = Counter()
    for cap in candidates:
        phrases = {" ".join(p.split()).lower() for p in re.split(r"[,.;:()]", cap)}
        counts.update(p for p in phrases if 1 <= len(p.split()) <= 5 and not re.search(r"\d", p)
                      and not p.startswith(_NOT_ATTRIBUTES) and any(t not in known for t in tokens(p)))
    half = len(candidates) / 2.0
    ranked = sorted(counts, key=lambda p: (abs(counts[p] - half), -counts[p], p))
    out = [_phrase_question(p) for p in ranked[:n]]
    fallback = ["Is the subject seen from the side?", "Is the background plain vegetation?",
                "Is more than one organism visible?", "Is the subject in flight or moving?",
                "Is the photo taken at night?"]
    return (out + [q for q in fallback if q not in out])[:n]


def uncertain_questions(caption: str, turns, questions_: list[str]) -> list[str]:
    """Questions whose content words are not all found in the caption and dialogue."""
    known = set(tokens(caption + " " + " ".join(q + " " + a for q, a in turns)))
    asked = {q.strip().lower() for q, _ in turns}
    return [q for q in questions_ if q.strip().lower() not in asked
            and any(t not in known and t not in MODIFIERS for t in tokens(_statement(q)))]


def unverified_answer(notes: list[tuple[int, str]]) -> dict:
    listing = " ".join(f"[{pid}] {note}" for pid, note in notes)
    return {"text": "Unverified: no language model answered; these are the best-matching photos and what the "
                    f"catalog says about them. {listing}".strip(),
            "cited_ids": [pid for pid, _ in notes], "verified": False}
