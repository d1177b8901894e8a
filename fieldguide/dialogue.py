"""The field-guide world's dialogue rules (PlugIR): which facts the caption and the answers settle or deny,
which candidates are still in play, the next questions to ask (the best split of the candidates' facts first),
what the caption and dialogue alone answer, and the first description rewritten with what each 'yes' confirmed,
in the world's own words. Every function returns None for text outside the world's terms."""
from __future__ import annotations

from collections import Counter

from core.contracts.world import answer_word
from fieldguide.facts import question_facts, text_facts, understood
from fieldguide.phrasing import (
    a,
    attr_question,
    behaviour_of,
    entity,
    modifier,
    picture_description,
    renamed_subject,
    species_fact_question,
)
from fieldguide.reading import read_text
from fieldguide.request import Attr, Target, _target, read_request
from fieldguide.species import SPECIES

_SINGLE = ("species", "plan", "view", "pose", "behaviour", "habitat", "count", "stage", "item")


def _conflicts(fact: str, known: set[str]) -> bool:
    key, _, value = fact.partition("=")
    if not value or not (key in _SINGLE or key.startswith("colour:")):
        return False
    return any(k.partition("=")[0] == key and k != fact for k in known)


def settled_by_denials(fact: str, denied: set[str], candidate_facts: list[set[str]]) -> bool:
    """True when the 'no' answers leave `fact` the only value of its attribute among the candidates (after "no"
    to "Are its wings folded?", asking "Are its wings spread?" would ask the same thing again)."""
    key = fact.partition("=")[0]
    if not (key in _SINGLE or key.startswith("colour:")) or not any(d.partition("=")[0] == key for d in denied):
        return False
    values = {f for fs in candidate_facts for f in fs if f.partition("=")[0] == key} - denied
    return values <= {fact}


def denied_facts(turns) -> set[str]:
    """Facts the user said no to."""
    return _settled("", turns)[1]


def consistent(caption: str, turns, per: list[set[str]]) -> list[set[str]]:
    """The candidates' facts, leaving out candidates whose kind of organism (body plan, species, life stage)
    contradicts the caption or a 'yes' (a moth among the candidates for "a bird") and candidates that have
    something the user said no to: questions are about the candidates still in play. All of them if fewer
    than two are left."""
    known, denied, _ = _settled(caption, turns)
    keep = [fs for fs in per if not (fs & denied) and not any(_conflicts(f, known) for f in fs
                                                               if f.partition("=")[0] in ("plan", "species", "stage"))]
    return keep if len(keep) >= 2 else per


def _settled(caption: str, turns) -> tuple[set[str], set[str], set[frozenset[str]]]:
    """Facts the caption and the yes answers state, facts the no answers deny, and the asked questions' facts."""
    known, denied, asked = set(text_facts(caption, defaults=False)), set(), set()
    for q, ans in turns:
        facts = question_facts(q)
        asked.add(facts)
        word = answer_word(ans)
        if word == "yes":
            known |= facts
        elif word == "no" and len(facts) == 1:
            denied |= facts
        elif word == "text":
            known |= set(text_facts(ans, defaults=False))
    return known, denied, asked


def _fact_question(fact: str, item_of: dict[str, str]) -> str:
    key, _, value = fact.partition("=")
    if key == "species":
        return species_fact_question(next(s for s in SPECIES if s.scientific_name == value))
    if key == "plan":
        return f"Is this {a(value)}?"
    if key.startswith("colour:"):
        return attr_question(Attr("colour", value, key.split(":", 1)[1]))
    if key == "item":
        return attr_question(Attr("behaviour", item_of.get(value, "carrying"), item=value))
    if key == "count":
        return attr_question(Attr("count", int(value)))
    return attr_question(Attr(key, value))


def questions(caption: str, turns, candidates: list[str], n: int) -> list[str] | None:
    """Questions about facts that some but not all candidate captions state (best split first), that the
    caption and the dialogue do not settle and that were not asked in any wording."""
    per = [text_facts(c) for c in candidates if c.strip()]
    if not per or not all(any(f.startswith(("species=", "plan=")) for f in fs) for fs in per):
        return None
    known, denied, asked = _settled(caption, turns)
    per = consistent(caption, turns, per)
    asked_facts = set().union(*asked) if asked else set()
    counts: Counter[str] = Counter(f for fs in per for f in fs if not f.startswith(("part:", "stage=adult")))
    item_of: dict[str, str] = {}
    for fs in per:
        for f in fs:
            if f.startswith("item="):
                beh = next((x.split("=")[1] for x in fs if x.startswith("behaviour=")), "carrying")
                item_of.setdefault(f.split("=")[1], beh)
    half = len(per) / 2.0
    usable = [f for f, c in counts.items() if 0 < c < len(per) and f not in known and f not in denied
              and f not in asked_facts and not _conflicts(f, known) and not f.startswith("behaviour=none")
              and not settled_by_denials(f, denied, per)]
    usable.sort(key=lambda f: (abs(counts[f] - half), f))
    return [_fact_question(f, item_of) for f in usable[:n]] or None


def filter_answers(caption: str, turns, questions_: list[str]) -> list[str] | None:
    """Per question what the caption and dialogue alone say: 'yes', 'no', 'asked before' or 'uncertain';
    None when no question is in the world's terms."""
    known, denied, asked = _settled(caption, turns)
    out = []
    seen = False
    for q in questions_:
        facts = question_facts(q)
        if not facts:
            out.append(None)
            continue
        seen = True
        if facts in asked:
            out.append("asked before")
        elif facts <= known:
            out.append("yes")
        elif facts & denied or any(_conflicts(f, known) for f in facts):
            out.append("no")
        else:
            out.append("uncertain")
    return out if seen else None


def caption_of(t: Target, part: str = "") -> str:
    """A target as a short caption: 'a Gold-crested Tuftling showing its crest', 'a bird carrying a twig'."""
    return f"{entity(t, article=True)} {modifier(Attr('part', '', part), t.plan)}" if part else \
        picture_description(t)


def _confirmed(text: str, have: set[str]) -> tuple[Target, list[str]] | None:
    """What a confirmed question (or an answer in the world's words) adds to a description: the organism as
    named there (its species, count and life stage go into the description's subject) and each attribute not
    already stated, in the world's words ('seen from below', 'with black wings'). None for text outside the
    world's terms."""
    if not understood(text):
        return None
    t = _target(read_text(text), text)
    extra = [modifier(x, t.plan, behaviour_of(t)) for x in t.attrs if x.fact not in have]
    if t.count == 1 and "count=1" not in have:
        extra.append(modifier(Attr("count", 1)))
    return t, extra


def _named_anew(base: str, t: Target, new: set[str]) -> str | None:
    """`base` with its organism named as the confirmed target `t` names it (species, two of them, caterpillar
    or tadpole); `base` itself when `t` adds none of these; None when its subject cannot take the new name."""
    species = t.species if t.species is not None and f"species={t.species.scientific_name}" in new else None
    count = 2 if t.count == 2 and "count=2" in new else None
    stage = t.stage if t.stage in ("larva", "tadpole") and f"stage={t.stage}" in new else None
    if species is None and count is None and stage is None:
        return base
    return renamed_subject(base, species, count, stage)


def _subject_phrases(t: Target, new: set[str]) -> list[str]:
    """The confirmed species, pair and life stage as phrases after a comma ('a Slate Reedpiper', 'in a pair')."""
    out = [a(t.species.common_name)] if t.species is not None and f"species={t.species.scientific_name}" in new \
        else []
    if t.stage in ("larva", "tadpole") and f"stage={t.stage}" in new:
        out.append(a({"larva": "caterpillar"}.get(t.stage, t.stage)))
    if t.count == 2 and "count=2" in new:
        out.append(modifier(Attr("count", 2)))
    return out


def reformulate(description: str, turns) -> str | None:
    """The first description, every word of it kept, with what each 'yes' confirmed (and each answer given in
    the world's words) added as a naturalist writes it: a confirmed species, pair or life stage names the
    organism anew ('a Slate Reedpiper perched on a branch'), other attributes follow after commas ('..., seen
    from below, with black wings'). A feature question or a comparison is first said as what a matching photo
    shows. 'No' and 'not sure' add nothing here (the dialogue turns a 'no' into a negative constraint). None
    when a confirmed question is not in the world's terms."""
    base = " ".join(description.split()).rstrip(".?!")
    req = read_request(base)
    if req is not None and req.kind in ("feature", "comparison"):  # a question, said as what a photo shows
        base = (" or " if req.kind == "comparison" else " and ").join(caption_of(t, req.part) for t in req.targets)
    have = set(text_facts(base, defaults=False))
    bits = [base]
    for q, ans in turns:
        word = answer_word(ans)
        if word not in ("yes", "text"):
            continue
        said = q if word == "yes" else " ".join(ans.split()).rstrip(".")
        found = _confirmed(said, have)
        if found is None:
            if word == "yes":
                return None
            bits.append(said)  # free text outside the world's words, as given
            continue
        t, extra = found
        new = set(question_facts(said) if word == "yes" else text_facts(said, defaults=False)) - have
        renamed = _named_anew(bits[0], t, new)
        if renamed is None:  # the subject cannot take the new name: say it after a comma
            renamed, extra = bits[0], [*_subject_phrases(t, new), *extra]
        bits[0] = renamed
        bits += [x for x in extra if x not in bits]
        have |= new
    return ", ".join(b for b in bits if b)
