"""The world's data on what each kind of organism can have (fieldguide/traits.py) agrees with the scenes the
world samples, and the dialogue reads it: wings are never asked of a frog; two questions true of the same (or
of exactly the opposite) scenes of what is named are one question ("Is it alone?", "Are there two of them?")."""
from __future__ import annotations

import random

from fieldguide.scene import sample_scene, visible_parts
from fieldguide.species import SPECIES
from fieldguide.traits import CAN_HAVE, impossible, kinds, meaning_key, parts_of


def test_every_sampled_scene_is_within_the_table_and_the_table_holds_nothing_never_sampled():
    seen: dict[tuple[str, str], dict[str, set]] = {}
    parts: dict[tuple[str, str], set[str]] = {}
    for sp in SPECIES:
        rng = random.Random(f"traits:{sp.scientific_name}")
        for _ in range(400):
            s = sample_scene(sp, rng)
            kind = (s.plan, s.stage)
            assert kind in CAN_HAVE, kind
            for key in ("view", "pose", "behaviour", "item"):
                value = getattr(s, key)
                if value:
                    seen.setdefault(kind, {}).setdefault(key, set()).add(value)
            parts.setdefault(kind, set()).update(visible_parts(s))
    for kind, table in CAN_HAVE.items():
        for key in ("view", "pose", "behaviour", "item"):
            assert seen[kind].get(key, set()) == set(table[key]), (kind, key)
        assert parts[kind] <= set(parts_of(kind)), kind


def test_questions_impossible_for_what_is_named():
    assert impossible("Are its wings blue?", "a frog on sand", []) == "frogs have no wings"
    assert impossible("Are its wings blue?", "a Cobalt Pondhopper on sand", []) == "frogs have no wings"
    assert impossible("Is it in bud?", "a bird", []) == "birds are never in bud"
    assert impossible("Are its wings brown?", "a caterpillar on a leaf", []) == "caterpillars have no wings"
    assert "black" in impossible("Are its wings blue?", "a Slate Reedpiper", [])
    assert impossible("Are its wings blue?", "an animal", [("Is this a frog?", "yes")]) == "frogs have no wings"
    assert impossible("Is it flying?", "something blue", []) is None  # nothing named: nothing ruled out
    assert impossible("Is it sitting?", "a frog", []) is None and impossible("Is it a tadpole?", "a frog", []) is None
    assert kinds({"frog"}) == [("frog", "adult"), ("frog", "tadpole")]


def test_two_valued_attributes_are_one_question_and_others_are_not():
    same = [("Is it alone?", "Are there two of them?", "a Cobalt Pondhopper"),
            ("Are its wings spread?", "Are its wings folded?", "a bird"),
            ("Is it a tadpole?", "Is it an adult?", "a frog"),
            ("Is this an underside view?", "Is it seen from below?", "a bird"),
            ("Is it feeding?", "Is it feeding on a leaf?", "a beetle")]  # a feeding beetle eats nothing else
    for a, b, caption in same:
        assert meaning_key(a, caption, []) == meaning_key(b, caption, []), (a, b)
    different = [("Is it perched?", "Is it flying?", "a bird"), ("Is it sitting?", "Is it leaping?", "a frog"),
                 ("Are its wings spread?", "Are its wings folded?", "a moth"),  # a moth's young curl up
                 ("Is it flying?", "Are its wings spread?", "a bird"),  # a perched bird may spread them too
                 ("Is it feeding?", "Is it feeding on a berry?", "a beetle")]
    for a, b, caption in different:
        assert meaning_key(a, caption, []) != meaning_key(b, caption, []), (a, b)
    assert meaning_key("Does the photo show a nest?", "a bird", []) is None  # outside the world's terms


def test_reasons_read_as_plain_words():
    assert impossible("Is it feeding on a berry?", "a beetle", []) == "beetles never carry or eat a berry"
    assert impossible("Is it a caterpillar?", "a bird", []) == "it is named as one of the birds, not the moths"
    assert impossible("Is it seen from below?", "a flower", []) == "flowers are never seen from below"
