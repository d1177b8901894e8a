"""The loaded vision-language model (VisionLanguageModel): a photo prepared once and reused for all its
questions, prompts in the model's layout ('chat', 'chat-no-system' or PaliGemma's 'plain' prefix), left-padded
batches, first-token readings and greedy captions. One forward pass at a time per model, under a lock shared by
the judge and the captioner; loading and sharing per process is core/backends/vlm_loading.py."""
from __future__ import annotations

import inspect
import logging
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Sequence

from PIL import Image

from core.backends.model_facts import ModelFacts, model_facts
from core.backends.vlm_reading import YesNoReading, answer_token_ids, reading_from_probs

log = logging.getLogger(__name__)
CAPTION_TOKENS = 60  # one sentence
PREPARED_KEEP = 64  # prepared photos kept, by image object, so that each photo's questions reuse them


@dataclass
class PreparedImage:
    """One photo as the model reads it: the image processor's tensors (batch of one, on the CPU) and the text
    that the photo's single image placeholder expands to."""

    tensors: dict[str, Any]
    placeholder: str


def _cat_padded(parts: list[Any]) -> Any:
    """Concatenate along the first dimension, padding every other dimension with zeros to the largest (tiles
    and picture sides differ between photos; zero pixels and a zero mask are what the processors pad with)."""
    import torch

    shape = [max(p.shape[d] for p in parts) for d in range(1, parts[0].dim())]
    padded = []
    for p in parts:
        if list(p.shape[1:]) != shape:
            room = torch.zeros((p.shape[0], *shape), dtype=p.dtype)
            room[(slice(None), *(slice(0, s) for s in p.shape[1:]))] = p
            p = room
        padded.append(p)
    return torch.cat(padded, 0)


class VisionLanguageModel:
    """A loaded image-text-to-text model with its processor: prepared photos, batched first-token readings,
    captions. One per (model, device, precision) in a process (`shared_model`)."""

    def __init__(self, spec: str, model: Any, processor: Any, *, device: str = "cpu", dtype: Any = None,
                 facts: ModelFacts | None = None):
        self.spec = spec
        self.model = model.eval()
        self.processor = processor
        self.tokenizer = getattr(processor, "tokenizer", processor)
        self.device = device
        self.dtype = dtype if dtype is not None else next(model.parameters()).dtype
        self.facts = facts or model_facts("vlm", spec)
        self.batch_size = int((self.facts.batch_gpu if device != "cpu" else self.facts.batch_cpu) or 1)
        self.min_answer_mass = float(self.facts.min_answer_mass if self.facts.min_answer_mass is not None
                                     else model_facts("vlm", "").min_answer_mass)
        self.image_token = getattr(processor, "image_token", None) or "<image>"
        self.layout = self.facts.prompt_layout or "chat"
        if self.layout.startswith("chat") and not getattr(processor, "chat_template", None):
            log.warning("%s has no chat template; its prompts use the plain prefix layout", spec)
            self.layout = "plain"
        self._keeps_last = "logits_to_keep" in inspect.signature(model.forward).parameters
        self._answer_ids: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        self._prepared: OrderedDict[int, tuple[Any, PreparedImage]] = OrderedDict()
        self._prep_lock = threading.Lock()
        self._ids_lock = threading.Lock()
        self.forward_lock = threading.Lock()  # one forward pass at a time (the judge and captioner share it)
        self.preparations = 0  # photos put through the image processor (tests check the reuse)

    # -- vocabulary ----------------------------------------------------------------------------------------
    @property
    def answer_ids(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(yes ids, no ids), decoded once per loaded model."""
        with self._ids_lock:
            if self._answer_ids is None:
                self._answer_ids = self._find_answer_ids()
            return self._answer_ids

    def _find_answer_ids(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        out = self.model.get_output_embeddings()
        size = getattr(out, "out_features", None) or getattr(getattr(out, "weight", None), "shape", [None])[0]
        found = answer_token_ids(self.tokenizer, size)
        if not found[0] or not found[1]:
            log.warning("%s: no token spells %s; its judgements will abstain", self.spec,
                        "yes" if not found[0] else "no")
        return found

    # -- photos --------------------------------------------------------------------------------------------
    def image_kwargs(self) -> dict[str, Any]:
        ip = self.processor.image_processor
        kwargs = dict(getattr(self.processor, "images_kwargs", None) or {})
        if self.facts.image_splitting is not None and hasattr(ip, "do_image_splitting"):
            kwargs["do_image_splitting"] = bool(self.facts.image_splitting)
        if self.facts.native_size and hasattr(ip, "max_pixels"):
            kwargs["max_pixels"] = int(self.facts.native_size) ** 2
        kwargs["return_tensors"] = "pt"
        return kwargs

    def prepare(self, image: Image.Image) -> PreparedImage:
        """The photo's tensors and placeholder text, computed once per image object while it is kept."""
        key = id(image)
        with self._prep_lock:
            hit = self._prepared.get(key)
            if hit is not None and hit[0]() is image:
                self._prepared.move_to_end(key)
                return hit[1]
        processed = self.processor.image_processor([image.convert("RGB")], **self.image_kwargs())
        unused = set(getattr(self.processor, "unused_input_names", None) or ())
        if self.layout == "plain" or not hasattr(self.processor, "replace_image_token"):
            placeholder = self.image_token * int(getattr(self.processor, "image_seq_length", 1) or 1)
        else:
            placeholder = self.processor.replace_image_token(processed, 0)
        tensors = {k: v for k, v in processed.items() if k not in unused and hasattr(v, "shape")}
        prepared = PreparedImage(tensors=tensors, placeholder=placeholder)
        with self._prep_lock:
            self.preparations += 1
            self._prepared[key] = (weakref.ref(image), prepared)
            while len(self._prepared) > PREPARED_KEEP:
                self._prepared.popitem(last=False)
        return prepared

    def forget_prepared(self) -> None:
        """Drop the prepared photos (benchmarks time the preparation)."""
        with self._prep_lock:
            self._prepared.clear()

    # -- prompts -------------------------------------------------------------------------------------------
    def prompt(self, system: str, user: str) -> str:
        """The prompt text with one image placeholder, the answer to be read right after it."""
        if self.layout == "plain":
            bos = getattr(self.tokenizer, "bos_token", None) or ""
            return f"{self.image_token}{bos}{user}\n"
        content = [{"type": "image"}, {"type": "text", "text": user}]
        if self.layout == "chat-no-system" or not system:
            content[1]["text"] = f"{system}\n\n{user}" if system else user
            messages = [{"role": "user", "content": content}]
        else:
            messages = [{"role": "system", "content": [{"type": "text", "text": system}]},
                        {"role": "user", "content": content}]
        return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def inputs(self, items: Sequence[tuple[PreparedImage, str]]) -> dict[str, Any]:
        """One batch of (prepared photo, prompt) as model inputs on the model's device, left-padded."""
        texts = [text.replace(self.image_token, prep.placeholder, 1) for prep, text in items]
        batch = dict(self.tokenizer(texts, padding=True, padding_side="left", add_special_tokens=False,
                                    return_tensors="pt"))
        batch.pop("token_type_ids", None)
        for name in items[0][0].tensors:
            batch[name] = _cat_padded([prep.tensors[name] for prep, _ in items])
        return self.to_device(batch)

    def to_device(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {k: (v.to(self.device, dtype=self.dtype) if v.is_floating_point() else v.to(self.device))
                for k, v in batch.items()}

    # -- forward passes ------------------------------------------------------------------------------------
    def forward_last(self, batch: dict[str, Any]) -> Any:
        """The bare forward pass: next-token logits at the last position of each row, (batch, vocabulary)."""
        import torch

        extra = {"logits_to_keep": 1} if self._keeps_last else {}
        with self.forward_lock, torch.inference_mode():
            out = self.model(**batch, use_cache=False, **extra)
        return out.logits[:, -1, :]

    def read(self, items: Sequence[tuple[PreparedImage, str]]) -> list[YesNoReading]:
        """First-answer-token readings of one batch."""
        import torch

        logits = self.forward_last(self.inputs(items))
        probs = torch.softmax(logits.float(), dim=-1).cpu()
        yes_ids, no_ids = self.answer_ids
        return reading_from_probs(probs, yes_ids, no_ids)

    def generate(self, items: Sequence[tuple[PreparedImage, str]], max_new_tokens: int = CAPTION_TOKENS
                 ) -> list[str]:
        """Greedy continuations of one batch (captions)."""
        import torch

        batch = self.inputs(items)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with self.forward_lock, torch.inference_mode():
            out = self.model.generate(**batch, max_new_tokens=int(max_new_tokens), do_sample=False,
                                      pad_token_id=pad)
        new = out[:, batch["input_ids"].shape[1]:]
        return [t.strip() for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]
