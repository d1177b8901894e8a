"""Reading a yes/no judgement from the first answer token of a vision-language model (methods.md 3.4).

One forward pass per (photo, question) gives the probability distribution of the FIRST answer token; p(yes)
and p(no) are the summed probabilities of every token of the vocabulary that spells yes or no (' yes', 'Yes',
'YES', '▁yes', 'yes.' ...), found once per model by decoding each token id. The rest, p(other), is mass on
neither word: below the model's `min_answer_mass` on yes and no together the judge abstains. The answer carries
{'Yes': log p(yes), 'No': log p(no), '<other>': log p(other)} as its `top_logprobs`, so the confidence and the
abstention can both be read back from a cached answer."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from core.backends.base import JudgeAnswer

# what may surround the word in a token: SentencePiece / byte-level space marks, quotes, markdown, punctuation
_AROUND_WORD = " \t\r\n\u2581\u0120*_`\"'\u201c\u201d\u2018\u2019:;-\u2013\u2014.,!?()[]<>"
TINY = 1e-30  # floor before taking a logarithm (JSON has no -inf)


def spelled_word(text: str) -> str:
    """'yes' for ' Yes', '▁YES', 'yes.' ...; the bare lower-cased word of a decoded token."""
    return (text or "").strip(_AROUND_WORD).lower()


def answer_token_ids(tokenizer: Any, vocab_size: int | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(ids spelling yes, ids spelling no) over the whole vocabulary, added tokens included, found by decoding
    every id on its own (byte-level and SentencePiece pieces alike). `vocab_size`: the model's output size,
    which may differ from the tokenizer's length (padded embedding tables)."""
    n = len(tokenizer) if vocab_size is None else min(len(tokenizer), int(vocab_size))
    texts = tokenizer.batch_decode([[i] for i in range(n)], skip_special_tokens=False,
                                   clean_up_tokenization_spaces=False)
    yes = tuple(i for i, t in enumerate(texts) if spelled_word(t) == "yes")
    no = tuple(i for i, t in enumerate(texts) if spelled_word(t) == "no")
    return yes, no


@dataclass(frozen=True)
class YesNoReading:
    """Where the first answer token's probability went: a spelling of yes, of no, or anything else."""

    p_yes: float
    p_no: float
    p_other: float

    @property
    def answered(self) -> float:
        """p(yes) + p(no): how much of the first token is an answer at all."""
        return self.p_yes + self.p_no

    @property
    def confidence(self) -> float:
        """p(yes) / (p(yes) + p(no)), 0 when neither has any mass (methods.md 3.4)."""
        return self.p_yes / self.answered if self.answered > 0 else 0.0

    def abstains(self, min_answer_mass: float) -> bool:
        return self.answered < min_answer_mass

    def top_logprobs(self) -> dict[str, float]:
        return {"Yes": math.log(max(self.p_yes, TINY)), "No": math.log(max(self.p_no, TINY)),
                "<other>": math.log(max(self.p_other, TINY))}


def reading_from_probs(probs: Any, yes_ids: Sequence[int], no_ids: Sequence[int]) -> list[YesNoReading]:
    """One reading per row of a (batch, vocabulary) tensor of next-token probabilities."""
    import torch

    probs = probs.double()
    p_yes = probs[:, list(yes_ids)].sum(-1) if yes_ids else torch.zeros(len(probs), dtype=probs.dtype)
    p_no = probs[:, list(no_ids)].sum(-1) if no_ids else torch.zeros(len(probs), dtype=probs.dtype)
    out = []
    for y, n in zip(p_yes.tolist(), p_no.tolist()):
        out.append(YesNoReading(p_yes=y, p_no=n, p_other=max(0.0, 1.0 - y - n)))
    return out


def judge_answer(reading: YesNoReading, min_answer_mass: float) -> JudgeAnswer:
    """The contract's answer for a reading; below `min_answer_mass` on yes and no together it abstains."""
    word = "yes" if reading.p_yes > reading.p_no else "no"
    share = f"p(yes)={reading.p_yes:.3f}, p(no)={reading.p_no:.3f}, elsewhere {reading.p_other:.3f}"
    if reading.abstains(min_answer_mass):
        return JudgeAnswer(answer=word, top_logprobs=reading.top_logprobs(), abstained=True,
                           reason=f"not checked: the model's first answer token is neither yes nor no ({share}; "
                                  f"an answer needs {min_answer_mass:.2f} on yes and no)")
    return JudgeAnswer(answer=word, top_logprobs=reading.top_logprobs(),
                       reason=f"first answer token: {share}")

