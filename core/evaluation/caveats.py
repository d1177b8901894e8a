"""What the numbers of an evaluation can and cannot mean, given the models that made them: the first section of
every report. A stand-in (the offline models of the demo world, the hash embedder, the rule LLM) or a tiny
model (the per-model facts of core/backends/model_facts.py) gets a line saying what its numbers measure and
what they do not; an answer judge below the capability floor is named as not a valid judge."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.methods.llm_call import backend_attr

STANDIN_MARK = "(stand-in)"

# role -> (what the numbers can mean, what they cannot mean) when that role is played by a stand-in
STANDIN: dict[str, tuple[str, str]] = {
    "embedder": ("how the methods compare when the first stage is this offline encoder, on the photos it was made "
                 "for (the synthetic field-guide world)",
                 "how well any method retrieves real photos with a real image-text model"),
    "judge": ("what the rerank gives with this offline checker, which reads only what it was trained to read "
              "(and says 'not checked' for the rest)",
              "what a vision-language judge would give; rerank gains are the stand-in's, not the method's"),
    "llm": ("what the methods give when rules write the sub-questions, instructions and descriptions",
            "what a language model would write; gains that depend on the LLM's text are not measured"),
    "generator": ("VisRet with pictures painted by the offline painter of the synthetic world",
                  "VisRet with a text-to-image model"),
    "captioner": ("answers and dialogue read from the catalog's metadata or the stand-in's captions",
                  "what a captioning model would say about the photos"),
    "reader": ("answers read by the offline reader, only for the synthetic world's photos",
               "answers read from the photos by a vision-language model"),
}
# a model id starting with one of these -> its own caveat, whatever the role
BY_MODEL: dict[str, tuple[str, str]] = {
    "hash-standin": ("only that the pipeline runs end to end: its vectors are hashes of the pixels and words, so "
                     "rankings are close to chance", "anything about retrieval quality"),
    "clip-judge": ("what the rerank gives when an image-text similarity of a statement and its negation stands in "
                   "for a judge (it abstains inside the undecided band and on sounds or time of day)",
                   "what a vision-language judge would give"),
    "standin-generator": ("VisRet with plain pictures drawn from the words of the instruction",
                          "VisRet with a text-to-image model"),
}
TINY = ("what the methods give with this model, its text checked and replaced by the offline rules where it fails",
        "what the methods give with a capable language model (the papers use GPT-4-class models)")


@dataclass(frozen=True)
class Caveat:
    role: str
    model: str
    kind: str  # "stand-in", "tiny", "not a valid judge"
    can: str
    cannot: str

    def line(self) -> str:
        return (f"- {self.role}: `{self.model}` is {self.kind}. Its numbers can mean {self.can}; they cannot mean "
                f"{self.cannot}.")


def standin_caveats(models: Mapping[str, str]) -> list[Caveat]:
    """A caveat for each model the models mapping marks as a stand-in ('fieldguide-judge@v2 (stand-in)')."""
    out = []
    for role, name in models.items():
        if STANDIN_MARK in str(name):
            own = next((v for k, v in BY_MODEL.items() if str(name).startswith(k)), None)
            can, cannot = own or STANDIN.get(role, ("what this offline stand-in gives", "what a real model would give"))
            out.append(Caveat(role, str(name).replace(STANDIN_MARK, "").strip(), "an offline stand-in", can, cannot))
    return out


def tiny_caveats(backends, described: Mapping[str, Mapping]) -> list[Caveat]:
    """A caveat for a text LLM the model facts call tiny (its notice, its own-words grammar)."""
    if "llm" not in described or described["llm"].get("standin"):
        return []
    facts = backend_attr(backends.llm, "facts", None)
    if facts is None or not (facts.own_words or facts.note):
        return []
    label = backend_attr(backends.llm, "display_name", None) or described["llm"].get("model_id", "")
    return [Caveat("llm", str(label), f"a very small model ({facts.matched})", *TINY)]


def model_caveats(backends, models: Mapping[str, str]) -> list[Caveat]:
    """Every caveat for the models of a run: the stand-ins, then a tiny LLM."""
    return standin_caveats(models) + tiny_caveats(backends, backends.describe())
