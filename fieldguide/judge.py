"""The offline yes/no judge of the field-guide world. It reads attributes from the pixels with its own trained
network (judge_net.py; never from metadata), turns the question's words into checks (species, body plan, part
colours, view, pose, behaviour, habitat, life stage, count, carried item) and answers with the joint
probability of the checks as Yes/No log-probabilities. Each attribute's probability is temperature-scaled on
held-out pictures (see scripts/evaluate_fieldguide_judge.py for accuracy and calibration per question type).

Its reach is its heads: a question with a word none of them reads ("Is the frog calling at night?": calling,
at night) is not checked (an abstention naming those words), even when another word of it is visible (the frog),
since a yes for the frog alone is not a yes to the question. So is a question that names nothing at all."""
from __future__ import annotations

import hashlib
import logging
import math
import threading
from collections import OrderedDict

import numpy as np

from core.backends.base import JudgeAnswer, JudgeRequest
from core.backends.reach import abstain, phrases
from fieldguide.facts import unknown_words
from fieldguide.reading import read_text
from fieldguide.species import LOOKALIKE_PAIRS, by_name

P_MIN, P_MAX = 1e-3, 1 - 1e-3
MEMO_SIZE = 4096  # pictures whose attribute probabilities are kept
_ATTRS = ("plan", "stage", "view", "pose", "behaviour", "habitat", "count", "item")
# words that frame a question about a photo without asking for anything in it
QUESTION_FRAME = frozenset("match matches matching description described photographed shot taken request query".split())
SEES = ("species, body shape, colours of named parts, view, pose, behaviour, carried or eaten items, count, "
        "background and whether it is adult or young (caterpillar, tadpole)")
log = logging.getLogger(__name__)


def _answer(p: float, reason: str) -> JudgeAnswer:
    p = min(P_MAX, max(P_MIN, float(p)))
    return JudgeAnswer(answer="yes" if p >= 0.5 else "no",
                       top_logprobs={"Yes": math.log(p), "No": math.log(1 - p)}, reason=reason)


def species_probs(probs: dict[str, dict]) -> dict[str, float]:
    """The species head's probabilities, with the share of each look-alike pair split by the colour of the one
    part that tells the pair apart (as a field guide says: look at the crest). Where that part is hidden its
    colour head says "none" and the pair splits evenly, so the judge answers about 0.5 instead of guessing."""
    out = dict(probs["species"])
    for a, b, part in LOOKALIKE_PAIRS:
        colour = probs.get(f"colour:{part}", {})
        ca, cb = colour.get(by_name(a).colours[part], 0.0), colour.get(by_name(b).colours[part], 0.0)
        mass = out.get(a, 0.0) + out.get(b, 0.0)
        share = 0.5 + (ca - cb) / 2.0
        out[a], out[b] = mass * share, mass * (1.0 - share)
    return out


class FieldGuideJudge:
    """Judge backend. `reader` reads attribute probabilities from pictures (default: the committed judge
    network). `embedder` is accepted because the registry hands judges the embedder; this judge no longer
    uses it (a question without world words is not checked instead of guessed from similarity)."""

    model_id = "fieldguide-judge@v2"
    prompt_id = "reach-1"  # part of every cache key of its answers: answers from before abstentions are misses
    is_standin = True

    def __init__(self, embedder=None, reader=None):
        self.embedder = embedder
        if reader is None:
            from fieldguide.judge_net import JudgeReader

            reader = JudgeReader()
        self.reader = reader
        fingerprint = getattr(reader, "fingerprint", "")
        self.model_id = f"{type(self).model_id}:{fingerprint}" if fingerprint else type(self).model_id
        self._memo: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings=None, spec: str = "fieldguide", embedder=None) -> "FieldGuideJudge":
        return cls(embedder)

    @staticmethod
    def probe_case():
        """What `app.py doctor` asks this judge (it reads the world's pictures, not flat colours): whether the
        crest is red, of an Ember-crested Tuftling and of its look-alike, the Gold-crested Tuftling, both seen
        from the side (question, picture that shows it, picture that does not)."""
        from fieldguide.render import render
        from fieldguide.scene import scene_for

        pictures = []
        for name in ("Tuftilla rubrifrons", "Tuftilla aurifrons"):
            scene = scene_for(by_name(name), "bird")
            scene.view, scene.seed = "side", 1
            pictures.append(render(scene))
        return "Is its crest red?", pictures[0], pictures[1]

    @staticmethod
    def unseen(text: str) -> list[str]:
        """The phrases of `text` that none of the judge's heads reads ("calling", "at night")."""
        words = {w for w in unknown_words(text) if len(w) > 1 and w not in QUESTION_FRAME}
        return phrases(text, lambda w: w in words or w.replace("'", "") in words) if words else []

    def checks(self, question: str, probs: dict[str, dict]) -> list[tuple[str, float]]:
        """(what was checked, probability it holds) for every cue the question contains."""
        r = read_text(question)
        out: list[tuple[str, float]] = []
        if r.species:
            species = species_probs(probs)
            p = sum(species.get(sp.scientific_name, 0.0) for sp in r.species)
            out.append(("species " + " or ".join(sp.common_name for sp in r.species), min(1.0, p)))
        for key in _ATTRS:
            if key in r.attrs and not (key == "plan" and r.species):
                value = r.attrs[key]
                out.append((f"{key} {value}", probs[key].get(value, 0.0)))
        for part, colour in r.colours.items():
            if part == "any":
                best = max((v.get(colour, 0.0), k.split(":", 1)[1]) for k, v in probs.items()
                           if k.startswith("colour:"))
                out.append((f"{colour} on the {best[1]}", best[0]))
            else:
                out.append((f"{colour} {part}", probs[f"colour:{part}"].get(colour, 0.0)))
        for part in r.parts:
            if part not in r.colours:
                out.append((f"{part} visible", 1.0 - probs[f"colour:{part}"]["none"]))
        return out

    def probability(self, question: str, probs: dict[str, dict]) -> float | None:
        """p(yes) for `question` given one picture's attribute probabilities; None where the judge abstains
        (a word it cannot see, or nothing it can look for)."""
        if self.unseen(question):
            return None
        found = self.checks(question, probs)
        return float(np.prod([q for _, q in found])) if found else None

    def _probs(self, image) -> dict[str, dict]:
        """The picture's attribute probabilities, remembered for the last pictures seen (a photo is usually
        asked several questions: sub-questions, dialogue checks)."""
        key = (image.size, hashlib.blake2b(image.tobytes(), digest_size=16).digest())
        with self._lock:
            hit = self._memo.get(key)
            if hit is not None:
                self._memo.move_to_end(key)
                return hit
        probs = self.reader.attribute_probs([image])[0]
        with self._lock:
            self._memo[key] = probs
            while len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        return probs

    def ask(self, request: JudgeRequest) -> JudgeAnswer:
        unseen = self.unseen(request.question)
        if unseen:
            log.debug("field-guide judge: not checked %r (cannot see: %s)", request.question, ", ".join(unseen))
            return abstain(f"{', '.join(unseen)}: not something the photo checker can see (it reads {SEES}), "
                           "so this question was not checked", unseen)
        probs = self._probs(request.image)
        found = self.checks(request.question, probs)
        if found:
            p = float(np.prod([q for _, q in found]))
            detail = "; ".join(f"{what} {q:.2f}" for what, q in found)
            return _answer(p, f"read from the picture: {detail} -> p(yes) {p:.2f}")
        text = " ".join(request.question.split()).rstrip("?")
        log.debug("field-guide judge: not checked %r (names nothing it reads)", request.question)
        return abstain(f"this question names nothing the photo checker reads (it reads {SEES}), so it was not "
                       "checked", [f"“{text}”"])
