"""The field-guide world's kinds of organism and taxa: the kind words of the species a text names, the taxa
that hold exactly one body plan, a group word's taxa ('moths', 'tadpoles'), and a which-species question as a
catalog topic by scientific name."""
from __future__ import annotations

import re

from core.contracts.world import CatalogTopic
from fieldguide.facts import PLANS_OF_STAGE, question_facts, understood
from fieldguide.reading import read_text
from fieldguide.species import SPECIES


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
