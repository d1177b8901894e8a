"""The wording of the benchmark's questions, in the world's own vocabulary, and the ground-truth conditions
behind the behaviour / context queries."""
from __future__ import annotations

from fieldguide.species import PART_PHRASE, Species

# Parts worth a feature question: each is visible in only some views, poses or stages.
FEATURE_PARTS = {
    "bird": ("crest", "belly", "back"),
    "moth": ("wings", "underside", "larva stripes"),
    "frog": ("markings", "belly"),
    "beetle": ("markings", "legs"),
    "flower": ("petals", "centre"),
}
# Two parts of one animal that no single view shows together (many-part queries).
MULTI_PART = {"bird": ("crest", "belly"), "moth": ("wings", "underside"), "frog": ("markings", "belly"),
              "beetle": ("markings", "legs")}
_PLURAL = {"wings", "legs", "petals", "markings", "leaves"}


def part_answer(sp: Species, part: str) -> str:
    """The colour of `part` on species `sp` (larva parts read from the caterpillar)."""
    if part.startswith("larva "):
        return sp.larva[part.split()[1]]
    return sp.colours[part]


def feature_text(sp: Species, part: str) -> str:
    """'What colour is the crest of the Ember-crested Tuftling (Tuftilla rubrifrons)?'"""
    name = f"the {sp.common_name} ({sp.scientific_name})"
    if part == "larva stripes":
        return f"What colour are the stripes on the caterpillar larva of {name}?"
    verb = "are" if part in _PLURAL else "is"
    return f"What colour {verb} the {PART_PHRASE[part]} of {name}?"


def _is(**want):
    def cond(s) -> bool:
        return all(getattr(s, k) == v for k, v in want.items())
    return cond


# (text, INQUIRE-style supercategory, category, condition on the scene)
BEHAVIOUR_QUERIES = [
    ("a bird carrying a twig in its beak", "Behavior", "carrying", _is(plan="bird", item="twig")),
    ("a bird carrying a berry", "Behavior", "carrying", _is(plan="bird", behaviour="carrying", item="berry")),
    ("a bird carrying a green leaf", "Behavior", "carrying", _is(plan="bird", item="leaf")),
    ("a bird feeding on a berry", "Behavior", "feeding", _is(plan="bird", behaviour="feeding")),
    ("a bird flying low over water", "Behavior", "flight", _is(plan="bird", behaviour="flying", habitat="water")),
    ("a bird flying against the sky", "Behavior", "flight", _is(plan="bird", behaviour="flying", habitat="sky")),
    ("a bird in flight seen from below", "Appearance", "view",
     _is(plan="bird", behaviour="flying", view="underside")),
    ("two birds perched together", "Context", "group", _is(plan="bird", behaviour="perched", count=2)),
    ("a moth feeding on nectar at a flower", "Behavior", "feeding", _is(plan="moth", stage="adult",
                                                                        behaviour="feeding")),
    ("a moth resting on tree bark", "Context", "habitat", _is(plan="moth", stage="adult", habitat="bark")),
    ("a moth flying with its wings spread", "Behavior", "flight", _is(plan="moth", behaviour="flying")),
    ("a moth with folded wings seen from the side", "Appearance", "pose",
     _is(plan="moth", stage="adult", view="side")),
    ("a caterpillar larva feeding on a leaf", "Behavior", "feeding", _is(plan="moth", stage="larva",
                                                                         behaviour="feeding")),
    ("a caterpillar larva curled up", "Appearance", "pose", _is(plan="moth", stage="larva", pose="curled")),
    ("two caterpillar larvae together", "Context", "group", _is(plan="moth", stage="larva", count=2)),
    ("a tadpole swimming in water", "Appearance", "life stage", _is(plan="frog", stage="tadpole")),
    ("an adult frog swimming in water", "Behavior", "swimming", _is(plan="frog", stage="adult",
                                                                    behaviour="swimming")),
    ("a frog leaping", "Behavior", "movement", _is(plan="frog", stage="adult", pose="leaping")),
    ("a frog catching a fly", "Behavior", "feeding", _is(plan="frog", behaviour="feeding")),
    ("a frog sitting on sand", "Context", "habitat", _is(plan="frog", stage="adult", habitat="sand",
                                                         pose="sitting")),
    ("a frog seen from below showing its belly", "Appearance", "view", _is(plan="frog", stage="adult",
                                                                         view="underside")),
    ("a beetle flying with its wing cases open", "Behavior", "flight", _is(plan="beetle", behaviour="flying")),
    ("a beetle carrying a seed", "Behavior", "carrying", _is(plan="beetle", item="seed")),
    ("a beetle feeding on a leaf", "Behavior", "feeding", _is(plan="beetle", behaviour="feeding")),
    ("two beetles on a branch", "Context", "group", _is(plan="beetle", behaviour="perched", count=2)),
    ("a beetle on sand", "Context", "habitat", _is(plan="beetle", habitat="sand")),
    ("a flower in bud", "Appearance", "life stage", _is(plan="flower", pose="bud")),
    ("an open flower seen from above", "Appearance", "view", _is(plan="flower", pose="open", view="top")),
    ("a flower growing by the water", "Context", "habitat", _is(plan="flower", habitat="water")),
    ("two open flowers side by side", "Context", "group", _is(plan="flower", pose="open", count=2)),
]
