"""How well the field-guide judge answers yes/no questions about pictures it never saw: accuracy and expected
calibration error (ECE) per question type, asked through the judge's own question reading.

Per picture: for view, pose, behaviour, habitat, count and life stage one question per value the body plan
allows (one-vs-rest, so exactly one is true); for species the true one, the look-alike (if any) and one other
of the same body plan; for a visible part its true colour and one other. Species questions are split by
whether the part that tells a look-alike pair apart is visible: where it is hidden the pixels cannot decide,
and a calibrated judge says about 0.5 to both names."""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from fieldguide.scene import HABITATS, Scene, visible_parts
from fieldguide.species import COLOURS, LOOKALIKE_PAIRS, PART_PHRASE, SPECIES, Species

_PARTNER = {a: (b, part) for a, b, part in LOOKALIKE_PAIRS} | {b: (a, part) for a, b, part in LOOKALIKE_PAIRS}
_VIEW = {"side": "Is it seen from the side?", "top": "Is it seen from above?", "underside": "Is it seen from below?"}
_POSE = {"spread": "Are its wings spread?", "folded": "Are its wings folded?", "open": "Is the flower open?",
         "bud": "Is it in bud?", "sitting": "Is it sitting?", "leaping": "Is it leaping?",
         "stretched": "Is it stretched out?", "curled": "Is it curled up?"}
_POSES_OF = {"bird": ("spread", "folded"), "moth": ("spread", "folded"), "frog": ("sitting", "leaping"),
             "beetle": ("spread", "folded"), "flower": ("open", "bud")}
_LARVA_POSES = ("stretched", "curled")
_BEHAVIOUR = {"perched": "Is it perched?", "flying": "Is it flying?", "feeding": "Is it feeding?",
              "carrying": "Is it carrying something?", "swimming": "Is it swimming?"}
_BEHAVIOURS_OF = {"bird": ("perched", "flying", "feeding", "carrying"), "moth": ("perched", "flying", "feeding"),
                  "frog": ("perched", "feeding", "swimming"), "beetle": ("perched", "flying", "carrying", "feeding")}
_HABITAT = {"water": "Is it over water?", "grass": "Is it in grass?", "sky": "Is it against the sky?",
            "bark": "Is it on tree bark?", "sand": "Is it on sand?"}
_STAGE = {"adult": "Is it an adult?", "larva": "Is it a caterpillar?", "tadpole": "Is it a tadpole?"}
TYPES = ("species (telling part visible)", "species (telling part hidden)", "part colour", "view", "pose",
         "behaviour", "habitat", "count", "life stage")


@dataclass
class Asked:
    kind: str
    question: str
    truth: bool
    p: float = 0.0


def _hidden_lookalike(sp: Species, s: Scene) -> bool:
    pair = _PARTNER.get(sp.scientific_name)
    return pair is not None and pair[1] not in visible_parts(s)


def _other_species(sp: Species, rng: random.Random) -> list[Species]:
    """The look-alike (if any) and one other species of the same body plan."""
    pair = _PARTNER.get(sp.scientific_name)
    out = [next(x for x in SPECIES if x.scientific_name == pair[0])] if pair else []
    same = [x for x in SPECIES if x.plan == sp.plan and x is not sp and x not in out]
    if same:
        out.append(rng.choice(same))
    return out


def _each(kind: str, table: dict, true_value, options) -> list[Asked]:
    """One question per allowed value (one-vs-rest)."""
    if true_value not in table:
        return []
    return [Asked(kind, table[v], v == true_value) for v in options if v in table]


def questions_for(sp: Species, s: Scene, rng: random.Random) -> list[Asked]:
    """The true and false questions asked about one picture of species `sp` showing scene `s`."""
    out: list[Asked] = []
    hidden = _hidden_lookalike(sp, s)
    kind = "species (telling part hidden)" if hidden else "species (telling part visible)"
    out.append(Asked(kind, f"Is this {_a(sp.common_name)}?", True))
    for i, other in enumerate(_other_species(sp, rng)):  # the look-alike comes first
        out.append(Asked(kind if i == 0 or not hidden else "species (telling part visible)",
                         f"Is this {_a(other.common_name)}?", False))
    parts = [p for p in visible_parts(s) if not p.startswith("larva ")]
    if parts:
        part = rng.choice(parts)
        colour = s.colours[part]
        other = rng.choice([c for c in COLOURS if c != colour])
        verb = "are" if PART_PHRASE[part].endswith("s") else "is"
        for c, truth in ((colour, True), (other, False)):
            out.append(Asked("part colour", f"{verb.capitalize()} its {PART_PHRASE[part]} {c}?", truth))
    if s.stage == "adult" and s.plan != "flower":
        out += _each("view", _VIEW, s.view, tuple(_VIEW))
    poses = _LARVA_POSES if s.stage == "larva" else _POSES_OF[s.plan] if s.stage == "adult" else ()
    out += _each("pose", _POSE, s.pose, poses)
    if s.stage == "adult" and s.plan != "flower":
        out += _each("behaviour", _BEHAVIOUR, s.behaviour, _BEHAVIOURS_OF[s.plan])
    out += _each("habitat", _HABITAT, s.habitat, HABITATS)
    out.append(Asked("count", "Are there two of them?", s.count == 2))
    if len(sp.stages) > 1:
        out += _each("life stage", _STAGE, s.stage, sp.stages)
    return out


def _a(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def ece(p: np.ndarray, truth: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error of p(yes): sum over equal-width bins of share x |mean truth - mean p|."""
    p, truth = np.asarray(p, dtype=np.float64), np.asarray(truth, dtype=np.float64)
    if len(p) == 0:
        return 0.0
    which = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        m = which == b
        if m.any():
            total += m.mean() * abs(truth[m].mean() - p[m].mean())
    return float(total)


def score(asked: list[Asked]) -> dict[str, dict]:
    """Per question type and overall: questions, accuracy, ECE, mean p(yes) on true questions; for hidden
    look-alikes also the mean distance of p from 0.5. A question the judge did not check (p None) counts as
    wrong in the accuracy and is left out of the calibration; `abstained` counts them."""
    out: dict[str, dict] = {}
    for kind in (*TYPES, "all"):
        rows = [a for a in asked if kind == "all" or a.kind == kind]
        if not rows:
            continue
        answered = [a for a in rows if a.p is not None]
        p = np.array([a.p for a in answered], dtype=np.float64)
        t = np.array([a.truth for a in answered], dtype=bool)
        right = int(((p >= 0.5) == t).sum())
        entry = {"questions": len(rows), "accuracy": round(right / len(rows), 4), "ece": round(ece(p, t), 4),
                 "abstained": len(rows) - len(answered)}
        if kind == "species (telling part hidden)" and len(p):
            entry["mean_p"] = round(float(p.mean()), 4)
            entry["mean_abs_p_minus_half"] = round(float(np.abs(p - 0.5).mean()), 4)
        out[kind] = entry
    return out


def evaluate_judge(judge, pictures: list[tuple[Species, Scene, object]], seed: int = 0) -> dict[str, dict]:
    """Ask the questions of every (species, scene, image) through `judge` (a FieldGuideJudge) and score them."""
    rng = random.Random(f"judge-eval:{seed}")
    asked: list[Asked] = []
    images = [im for _, _, im in pictures]
    probs = []
    for i in range(0, len(images), 64):
        probs += judge.reader.attribute_probs(images[i:i + 64])
    for (sp, s, _), pr in zip(pictures, probs):
        for a in questions_for(sp, s, rng):
            a.p = judge.probability(a.question, pr)
            asked.append(a)
    return score(asked)


def format_table(metrics: dict[str, dict]) -> str:
    """The metrics as a Markdown table."""
    lines = ["| question type | questions | accuracy | ECE | note |", "| --- | --- | --- | --- | --- |"]
    for kind, m in metrics.items():
        note = ""
        if "mean_abs_p_minus_half" in m:
            note = f"mean p(yes) {m['mean_p']:.2f}, mean abs(p - 0.5) {m['mean_abs_p_minus_half']:.2f}"
        if m.get("abstained"):
            note = "; ".join(x for x in (note, f"{m['abstained']} not checked (counted as wrong)") if x)
        lines.append(f"| {kind} | {m['questions']} | {m['accuracy']:.3f} | {m['ece']:.3f} | {note} |")
    return "\n".join(lines)
