"""The offline yes/no judge of the field-guide world. It reads attributes from the pixels with its own trained
network (judge_net.py; never from metadata), turns the question's words into checks (species, body plan, part
colours, view, pose, behaviour, habitat, life stage, count, carried item) and answers with the joint
probability of the checks as Yes/No log-probabilities. Each attribute's probability is temperature-scaled on
held-out pictures (see scripts/evaluate_fieldguide_judge.py for accuracy and calibration per question type)."""
from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict

import numpy as np

from core.backends.base import JudgeAnswer, JudgeRequest
from fieldguide.reading import read_text
from fieldguide.species import LOOKALIKE_PAIRS, by_name

P_MIN, P_MAX = 1e-3, 1 - 1e-3
MEMO_SIZE = 4096  # pictures whose attribute probabilities are kept
_ATTRS = ("plan", "stage", "view", "pose", "behaviour", "habitat", "count", "item")


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
    network); `embedder` serves the fallback for questions without world words (default: the field-guide
    encoder, loaded when first needed)."""

    model_id = "fieldguide-judge@v2"
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
        """p(yes) for `question` given one picture's attribute probabilities; None without world words."""
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
        probs = self._probs(request.image)
        found = self.checks(request.question, probs)
        if found:
            p = float(np.prod([q for _, q in found]))
            detail = "; ".join(f"{what} {q:.2f}" for what, q in found)
            return _answer(p, f"read from the picture: {detail} -> p(yes) {p:.2f}")
        return self._fallback(request)

    def _fallback(self, request: JudgeRequest) -> JudgeAnswer:
        """No world words in the question: compare the picture with the question and with its negation."""
        if self.embedder is None:
            from fieldguide.encoder import FieldGuideEmbedder

            self.embedder = FieldGuideEmbedder()
        emb = self.embedder
        img = emb.embed_images([request.image])[0]
        txt = emb.embed_texts([request.question, "not " + request.question])
        s_yes, s_no = (txt @ img).tolist()
        z = 20.0 * (s_yes - s_no)
        p = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
        return _answer(p, "no attribute words recognised; fell back to embedder similarity of the question "
                          f"vs its negation ({s_yes:.3f} vs {s_no:.3f})")
