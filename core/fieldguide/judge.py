"""The offline yes/no judge of the field-guide world. It reads attributes from the pixels with the encoder's
attribute heads (never from metadata), turns the question's words into checks (species, body plan, part
colours, view, pose, behaviour, habitat, life stage, count, carried item) and answers with the joint
probability of the checks as calibrated Yes/No log-probabilities."""
from __future__ import annotations

import math

import numpy as np

from core.backends.base import JudgeAnswer, JudgeRequest
from core.fieldguide.reading import read_text

P_MIN, P_MAX = 1e-3, 1 - 1e-3
_ATTRS = ("plan", "stage", "view", "pose", "behaviour", "habitat", "count", "item")


def _answer(p: float, reason: str) -> JudgeAnswer:
    p = min(P_MAX, max(P_MIN, float(p)))
    return JudgeAnswer(answer="yes" if p >= 0.5 else "no",
                       top_logprobs={"Yes": math.log(p), "No": math.log(1 - p)}, reason=reason)


class FieldGuideJudge:
    """Judge backend; `embedder` is used for the fallback, the attribute heads come from the field-guide
    encoder (the embedder itself when it is one, else the committed weights)."""

    model_id = "fieldguide-judge@v1"
    is_standin = True

    def __init__(self, embedder=None, reader=None):
        self.embedder = embedder
        if reader is None:
            if embedder is not None and hasattr(embedder, "attribute_probs"):
                reader = embedder
            else:
                from core.fieldguide.encoder import FieldGuideEmbedder

                reader = FieldGuideEmbedder()
        self.reader = reader

    @classmethod
    def from_settings(cls, settings=None, spec: str = "fieldguide", embedder=None) -> "FieldGuideJudge":
        return cls(embedder)

    def checks(self, question: str, probs: dict[str, dict]) -> list[tuple[str, float]]:
        """(what was checked, probability it holds) for every cue the question contains."""
        r = read_text(question)
        out: list[tuple[str, float]] = []
        if r.species:
            p = sum(probs["species"].get(sp.scientific_name, 0.0) for sp in r.species)
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

    def ask(self, request: JudgeRequest) -> JudgeAnswer:
        probs = self.reader.attribute_probs([request.image])[0]
        found = self.checks(request.question, probs)
        if found:
            p = float(np.prod([q for _, q in found]))
            detail = "; ".join(f"{what} {q:.2f}" for what, q in found)
            return _answer(p, f"read from the picture: {detail} -> p(yes) {p:.2f}")
        return self._fallback(request)

    def _fallback(self, request: JudgeRequest) -> JudgeAnswer:
        """No world words in the question: compare the picture with the question and with its negation."""
        emb = self.embedder if self.embedder is not None else self.reader
        img = emb.embed_images([request.image])[0]
        txt = emb.embed_texts([request.question, "not " + request.question])
        s_yes, s_no = (txt @ img).tolist()
        z = 20.0 * (s_yes - s_no)
        p = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
        return _answer(p, "no attribute words recognised; fell back to embedder similarity of the question "
                          f"vs its negation ({s_yes:.3f} vs {s_no:.3f})")
