"""The field-guide world's rule book (core.contracts.world.RuleBook): the offline rules for requests in its vocabulary: sub-questions, picture descriptions,
decompositions, field-guide context, dialogue questions, the uncertainty filter, reformulation and answers,
all written as short sentences from the world's lexicon. Every function returns None for text it cannot
read; rules.py then uses its plain generic wording."""
from __future__ import annotations

import re
from collections import Counter

from fieldguide.facts import PLANS_OF_STAGE, content_key, question_facts, text_facts, understood
from fieldguide.phrasing import (a, attr_question, behaviour_of, count_question, describe_request, entity,
                                 field_note, identity_question, identity_with, known_colour, modifier, part_with,
                                 picture_description, renamed_subject, species_fact_question)
from fieldguide.reading import read_text
from fieldguide.request import Attr, Request, Target, _target, read_request
from fieldguide.species import PART_PHRASE, SPECIES
from fieldguide.traits import impossible, meaning_key
from core.contracts.world import CatalogTopic, RuleBook, answer_word
from core.methods.decompose import SubQuery
from core.methods.instruction import Instruction
from core.methods.rules import comparison_organisms

RULE_NOTE = "(Written by the offline rule from the field guide, not by an expert model.)"
_SINGLE = ("species", "plan", "view", "pose", "behaviour", "habitat", "count", "stage", "item")


def _main_attr(t: Target, part: str) -> Attr:
    colour = known_colour(t, part)
    return Attr("colour", colour, part) if colour else Attr("part", "", part)


def subquestions(query: str, n: int) -> list[str] | None:
    req = read_request(query)
    if req is None:
        return None
    ts = req.targets
    if req.kind == "feature":
        return [identity_question(ts[0]), attr_question(_main_attr(ts[0], req.part), ts[0])][:n]
    if req.kind == "comparison":
        return [f"Is this {a(ts[0].noun)} or {a(ts[1].noun)}?", attr_question(Attr("part", "", req.part), ts[0])]
    if len(ts) == 1:
        t = ts[0]
        qs = [identity_question(t)]
        if t.count == 2:
            qs.append(count_question(t))
        qs += [attr_question(x, t) for x in t.attrs]
        if len(qs) < 2:
            qs.append(f"Is the whole {t.noun} visible?")
        return qs[:n]
    qs = [identity_with(t, t.attrs[0]) if t.attrs else identity_question(t) for t in ts]
    return qs[:n]


def decomposition(query: str, limit: int) -> list[SubQuery] | None:
    req = read_request(query)
    if req is None:
        return None
    if req.kind in ("feature", "comparison"):
        parts = [part_with(t, _main_attr(t, req.part)) for t in req.targets]
    else:
        parts = []
        for t in req.targets:
            parts += [part_with(t, x) for x in t.attrs] or [entity(t)]
    return [SubQuery(p, t) for p, t in zip(parts, _cores(req, parts))][:limit]


def _cores(req: Request, parts: list[str]) -> list[str]:
    out = []
    for p in parts:
        t = next((t for t in req.targets if t.noun in p), req.targets[0])
        out.append(t.noun)
    return out


def instruction(query: str):
    req = read_request(query)
    if req is None:
        return None
    if req.kind == "comparison":
        orgs = comparison_organisms(query) or [t.noun for t in req.targets]
        return Instruction("comparison", [picture_description(t, req.part) for t in req.targets], orgs, "rule")
    if req.kind == "feature":
        return Instruction("feature", [picture_description(req.targets[0], req.part)], [], "rule")
    return Instruction("scene", [" and ".join(picture_description(t) for t in req.targets)], [], "rule")


def context(query: str) -> str | None:
    req = read_request(query)
    if req is None:
        return None
    notes = [field_note(t.species) for t in req.targets if t.species is not None]
    return " ".join([describe_request(req), *dict.fromkeys(notes), RULE_NOTE])


# ---- PlugIR -----------------------------------------------------------------------------------------------
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


def answer(question: str, notes: list[tuple[int, str]]) -> dict | None:
    """An unverified answer to a colour question read from the photos' notes, citing them; None otherwise."""
    req = read_request(question)
    if req is None or req.kind not in ("feature", "comparison") or not notes:
        return None
    head = "Unverified (offline rule, no language model):"
    said = []
    for t in req.targets:
        if t.species is None:
            return None
        colours: dict[str, list[int]] = {}
        for pid, note in notes:
            facts = text_facts(note)
            if f"species={t.species.scientific_name}" in facts:
                for f in facts:
                    if f.startswith(f"colour:{req.part}="):
                        colours.setdefault(f.split("=", 1)[1], []).append(pid)
        noun = PART_PHRASE.get(req.part, req.part)
        if colours:
            colour, ids = max(colours.items(), key=lambda kv: (len(kv[1]), kv[0]))
            cites = " ".join(f"[{i}]" for i in ids[:3])
            said.append(f"the notes of the best-matching photos describe the {noun} of the {t.noun} as {colour} "
                        f"{cites}")
        else:
            said.append(f"none of the best-matching photos' notes describes the {noun} of the {t.noun}")
    text = f"{head} " + "; ".join(said) + "."
    cited = [int(x) for x in re.findall(r"\[(\d+)\]", text)]
    return {"text": text, "cited_ids": list(dict.fromkeys(cited)), "verified": False}


def organism_kinds(text: str) -> set[str]:
    """The words for the kind of each species `text` names: its body plan's names and its young's names."""
    from fieldguide.lexicon import PLAN_SAY

    young = {"moth": ("caterpillar", "larva"), "frog": ("tadpole",)}
    return {w for sp in read_text(text).species for w in [*PLAN_SAY[sp.plan], *young.get(sp.plan, ())]}


def plan_taxa(plan: str) -> tuple[str, ...]:
    """The taxa of the world's taxonomy that hold every species of body plan `plan` and no other species,
    broadest first (frogs: their class, then order and family), read from the species' taxonomy."""
    ranks = range(len(SPECIES[0].taxonomy))
    mine = [sp for sp in SPECIES if sp.plan == plan]
    out = []
    for r in ranks:
        names = {sp.taxonomy[r] for sp in mine}
        if len(names) == 1 and all(sp.taxonomy[r] not in names for sp in SPECIES if sp.plan != plan):
            out.append(names.pop())
    return tuple(out)


def group_taxa(text: str) -> tuple[str, tuple[str, ...]] | None:
    """(the group word as written, the taxa of its body plan) when the subject of `text` is a group word of the
    world (bird, moths, frog, beetles, flower, caterpillar, tadpoles ...); None otherwise (a species name is
    no group)."""
    from core.methods.rules import head_phrase
    from fieldguide.lexicon import WORD_CUES

    _, head = head_phrase(text)
    if read_text(head).species:
        return None
    for word in head.split():
        cue = WORD_CUES.get(word.lower())
        plan = cue[1] if cue and cue[0] == "plan" else PLANS_OF_STAGE.get(str(cue[1])) if cue and cue[0] == "stage" \
            else None
        taxa = plan_taxa(str(plan)) if plan else ()
        if taxa:
            return word, taxa
    return None


def _fact_words(fact: str) -> str:
    """A fact in plain words: 'seen from the side', 'red crest', 'Slate Reedpiper', 'a twig'."""
    from fieldguide.lexicon import SAY
    from fieldguide.species import by_name

    key, _, value = fact.partition("=")
    if key == "species":
        return " or ".join(by_name(v).common_name for v in value.split(" or "))
    if key.startswith("colour:"):
        return f"{value} {PART_PHRASE.get(key[7:], key[7:])}"
    if key.startswith("part:"):
        return PART_PHRASE.get(key[5:], key[5:])
    said = SAY.get(key, {}).get(int(value) if key == "count" and value.isdigit() else value)
    return said[0] if said else value


def uncovered(query: str, questions_: list[str]) -> list[str]:
    """The parts of `query` in the world's terms that no question asks about, in plain words (a colour's part
    is not named again on its own, nor a body plan that a named species gives)."""
    wanted = text_facts(query, defaults=False)
    if not wanted:
        return []
    asked = set().union(*(text_facts(q, defaults=False) for q in questions_)) if questions_ else set()
    missing = [f for f in sorted(wanted - asked) if f]
    coloured = {f.split("=")[0][7:] for f in missing if f.startswith("colour:")}
    carried = bool(wanted & {"behaviour=carrying", "behaviour=feeding"})  # "in its beak" says how, not what
    missing = [f for f in missing if not (f.startswith("part:") and f[5:] in coloured)
               and not (f == "part:beak" and carried)
               and not (f.startswith("plan=") and any(a.startswith("species=") for a in asked))]
    return [_fact_words(f) for f in missing]


def catalog_topics(question: str) -> tuple[CatalogTopic, ...] | None:
    """A question that asks only which species (or which of two) is shown, as a taxon topic by scientific name;
    () for other questions in the world's terms, None outside them."""
    from fieldguide.species import by_name

    if not understood(question):
        return None
    facts = question_facts(question)
    named = [f.split("=", 1)[1] for f in facts if f.startswith("species=")]
    if len(named) != 1 or any(not f.startswith(("species=", "plan=")) for f in facts):
        return ()
    names = tuple(named[0].split(" or "))
    said = []
    for name in names:
        sp = by_name(name)
        found = re.search(rf"\b(?:{re.escape(sp.common_name)}|{re.escape(sp.scientific_name)})s?\b", question,
                          re.IGNORECASE)
        if found is None:
            return ()
        said.append(found.group(0))
    return (CatalogTopic("taxon", names, tuple(said)),)


class FieldGuideRules(RuleBook):
    """The field-guide world's answers to what the generic path asks (each None outside the world's terms)."""

    name = "fieldguide"
    subquestions = staticmethod(subquestions)
    decomposition = staticmethod(decomposition)
    instruction = staticmethod(instruction)
    context = staticmethod(context)
    questions = staticmethod(questions)
    filter_answers = staticmethod(filter_answers)
    reformulate = staticmethod(reformulate)
    answer = staticmethod(answer)
    text_facts = staticmethod(text_facts)
    question_facts = staticmethod(question_facts)
    understood = staticmethod(understood)
    content_key = staticmethod(content_key)
    consistent = staticmethod(consistent)
    denied_facts = staticmethod(denied_facts)
    settled_by_denials = staticmethod(settled_by_denials)
    organism_kinds = staticmethod(organism_kinds)
    uncovered = staticmethod(uncovered)
    group_taxa = staticmethod(group_taxa)
    catalog_topics = staticmethod(catalog_topics)
    impossible = staticmethod(impossible)
    meaning_key = staticmethod(meaning_key)
