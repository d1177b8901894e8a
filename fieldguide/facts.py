"""Facts in the world's terms, as normalised strings ("species=Tuftilla aurifrons", "plan=bird", "view=side",
"colour:crest=red", "part:crest", "behaviour=carrying", "item=twig", ...), read from text or taken from a
scene's ground truth. Two wordings of one attribute give the same fact ("seen from below" and "underside
view" are both "view=underside"), so facts serve as the meaning of a question, a caption or a sub-query."""
from __future__ import annotations

import re

from fieldguide.lexicon import STOPWORDS, tokens
from fieldguide.reading import Reading, read_text
from fieldguide.scene import Scene, visible_parts
from fieldguide.species import Species

# Words that frame a request or a question without naming anything in the world.
FRAME_WORDS = frozenset(
    "what which how who is are does do did can has have having there this these those that them something "
    "colour color colours colors differ both showing shows show find me photos photo image "
    "images picture pictures one clearly visible low growing look looks like whole organism natural posture "
    "usual surroundings clear or whose kind any against these you see".split()) | STOPWORDS
_SEGMENTS = re.compile(r"[,;.:()]|\band\b|\bbut\b")
PLANS_OF_STAGE = {"larva": "moth", "tadpole": "frog"}


def unknown_words(text: str) -> list[str]:
    """Words of `text` that neither the world's vocabulary nor the frame words cover."""
    return [w for w in read_text(text).unknown if w not in FRAME_WORDS and not w.isdigit()]


def understood(text: str) -> bool:
    """True when every word of `text` is the world's vocabulary or a frame word, and it names something."""
    r = read_text(text)
    return not r.empty and not unknown_words(text)


def reading_facts(r: Reading, *, default_stage: bool = False) -> set[str]:
    """The facts one Reading states (a species implies its body plan; a larva or tadpole implies one too)."""
    out: set[str] = set()
    if len(r.species) > 1:  # "Is this an A or a B?": one fact, either species
        out.add("species=" + " or ".join(sorted(sp.scientific_name for sp in r.species)))
    for sp in r.species[:1]:
        out |= {f"species={sp.scientific_name}" if len(r.species) == 1 else "", f"plan={sp.plan}"} - {""}
    for key, value in r.attrs.items():
        if key == "plan" and r.species:
            continue
        out.add(f"{key}={value}")
    stage = r.attrs.get("stage")
    if stage in PLANS_OF_STAGE and not r.species:
        out.add(f"plan={PLANS_OF_STAGE[stage]}")
    if default_stage and "stage" not in r.attrs and (r.species or "plan" in r.attrs):
        out.add("stage=adult")
    for part, colour in r.colours.items():
        if part != "any":
            out |= {f"colour:{part}={colour}", f"part:{part}"}
    out |= {f"part:{p}" for p in r.parts}
    return out


def text_facts(text: str, defaults: bool = True) -> set[str]:
    """Every fact a caption or note states, read segment by segment (a colour belongs to the part named next
    to it within its own segment: "yellow crest, red wings" has colour:crest=yellow, not colour:crest=red).
    A species named anywhere gives its body plan; otherwise plan nouns do. With `defaults` (notes, which
    always say when there are two or when it is a larva or tadpole): count 1 and the adult stage unless said."""
    segments = [s for s in _SEGMENTS.split(text or "") if s and s.strip()]
    whole = read_text(text or "")
    out: set[str] = set()
    for seg in segments:
        r = read_text(seg)
        facts = reading_facts(r)
        if whole.species:
            facts = {f for f in facts if not f.startswith("plan=")}
        out |= facts
    if whole.species:
        out |= {f"species={sp.scientific_name}" for sp in whole.species} | {f"plan={whole.species[0].plan}"}
    if defaults and not any(f.startswith("stage=") for f in out) and any(f.startswith(("species=", "plan="))
                                                                       for f in out):
        out.add("stage=adult")
    if defaults and "count=2" not in out:
        out.add("count=1")
    return out


def scene_facts(sp: Species | None, s: Scene) -> set[str]:
    """The ground truth of a scene as facts (the colours of visible parts only)."""
    out = {f"plan={s.plan}", f"stage={s.stage}", f"view={s.view}", f"pose={s.pose}", f"behaviour={s.behaviour}",
           f"habitat={s.habitat}", f"count={s.count}"}
    if s.item:
        out.add(f"item={s.item}")
    if sp is not None:
        out.add(f"species={sp.scientific_name}")
    for part in visible_parts(s):
        out.add(f"part:{part}")
        colour = s.larva[part.split()[1]] if part.startswith("larva ") else s.colours[part]
        out.add(f"colour:{part}={colour}")
    return out


def question_facts(question: str) -> frozenset[str]:
    """The meaning of a yes/no question as facts (empty when it names nothing in the world). "Is it seen from
    below?" and "Is this an underside view?" give the same set."""
    return frozenset(reading_facts(read_text(question)))


def content_key(text: str) -> frozenset[str]:
    """A wording-independent key for text outside the world's vocabulary: its content words, lower case,
    simple plural stripped."""
    words = {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in tokens(text)}
    return frozenset(w for w in words if w not in FRAME_WORDS)
