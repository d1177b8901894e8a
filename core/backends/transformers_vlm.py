"""In-process vision-language judge and captioner on transformers image-text-to-text models
(judge='transformers:MODEL', captioner='transformers:MODEL'; MODEL is a hub id such as
HuggingFaceTB/SmolVLM-256M-Instruct, or a local folder). No server, no API key.

Confidence (methods.md 3.4): one forward pass per (photo, question) gives the probability distribution of the
FIRST answer token; p(yes) and p(no) are the summed probabilities of every token of the vocabulary that spells
yes or no (' yes', 'Yes', 'YES', '▁yes', 'yes.' ...), found once per model by decoding each token id. The
rest, p(other), is mass on neither word: when p(yes) + p(no) is below the model's `min_answer_mass` fact
(model_facts.py; 0.5 unless a row says otherwise) the judge abstains (JudgeAnswer.abstained: the photo is not
checked). The answer carries {'Yes': log p(yes), 'No': log p(no), '<other>': log p(other)} as its
`top_logprobs`, so the usual p(yes) / (p(yes) + p(no)) confidence and the abstention can both be read back
from a cached answer. No text is generated for a judgement, so the reason names the probabilities.

Speed: the model is loaded once per process and (model, device, precision) and shared by the judge and the
captioner, under a lock; a failed load is remembered and raised again at once (the registry logs it once).
A photo is prepared once (the image processor's tensors and the text its image tokens expand to) and reused
for all its questions; concurrent `ask` calls from the reranker's threads are gathered into one batched
forward pass (up to the model's batch_cpu / batch_gpu fact), with left padding so that the last position of
every row is its own first answer position; `ask_many` batches a list of requests directly. Device and
precision come from the device/dtype settings and the model's facts (torch_device.py). Offline with no
cached copy of a hub model: a BackendError within seconds naming the fix (hf_hub.py).

Per-model facts (kind 'vlm' in model_facts.py): prompt layout ('chat' with the processor's chat template,
'chat-no-system', or 'plain' for PaliGemma's prefix layout), whether pictures are cut into tiles, batch sizes,
GPU precision and the abstention threshold. A folder whose name says nothing is matched by its config's
model_type."""
from __future__ import annotations

import inspect
import json
import logging
import math
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from PIL import Image

from core.backends import hf_hub, torch_device
from core.backends.base import JudgeAnswer, JudgeRequest
from core.backends.model_facts import ModelFacts, model_facts
from core.contracts.errors import BackendError
from core.prompts import judge as prompts

log = logging.getLogger(__name__)
INSTALL = "pip install transformers num2words"
PROMPT_ID = "transformers-first-token@v1"  # changes when the way a judgement is read changes (cache keys)
CAPTION_TOKENS = 60  # one sentence
PREPARED_KEEP = 64  # prepared photos kept, by image object, so that each photo's questions reuse them
# what may surround the word in a token: SentencePiece / byte-level space marks, quotes, markdown, punctuation
_AROUND_WORD = " \t\r\n\u2581\u0120*_`\"'\u201c\u201d\u2018\u2019:;-\u2013\u2014.,!?()[]<>"
TINY = 1e-30  # floor before taking a logarithm (JSON has no -inf)


def example(setting: str) -> str:
    return f"{setting}=transformers:/path/to/model-folder"


# --- reading the first answer token -----------------------------------------------------------------------
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


# --- batching calls that arrive together ------------------------------------------------------------------
class _Slot:
    __slots__ = ("item", "done", "result", "error")

    def __init__(self, item: Any):
        self.item, self.done, self.result, self.error = item, False, None, None


class Combiner:
    """Gathers calls made at once from several threads into batches: the first caller runs batches of what is
    waiting (at most `batch_size`) until its own item is done, then hands over to a waiting caller. No call
    waits for a timer: a lone call runs at once, and calls that arrive during a forward pass go together in
    the next one."""

    def __init__(self, run_batch: Callable[[list], list], batch_size: int):
        self._run = run_batch
        self.batch_size = max(1, int(batch_size))
        self._cond = threading.Condition()
        self._pending: list[_Slot] = []
        self._running = False

    def submit(self, item: Any) -> Any:
        slot = _Slot(item)
        with self._cond:
            self._pending.append(slot)
            while not slot.done and self._running:
                self._cond.wait()
            if not slot.done:
                self._running = True
        if not slot.done:
            try:
                self._drain(slot)
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()
        if slot.error is not None:
            err = slot.error
            raise BackendError(err.message, err.hint) if isinstance(err, BackendError) else err
        return slot.result

    def _drain(self, mine: _Slot) -> None:
        while not mine.done:
            with self._cond:
                batch, self._pending = self._pending[:self.batch_size], self._pending[self.batch_size:]
            if not batch:
                return
            try:
                results = self._run([s.item for s in batch])
            except Exception as exc:  # noqa: BLE001  (handed to each caller of the batch)
                for s in batch:
                    s.error = exc
            else:
                for s, r in zip(batch, results):
                    s.result = r
            with self._cond:
                for s in batch:
                    s.done = True
                self._cond.notify_all()


# --- the loaded model -------------------------------------------------------------------------------------
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


# --- loading, shared per process --------------------------------------------------------------------------
_MODELS: dict[tuple[str, str, str], VisionLanguageModel] = {}
_LOAD_ERRORS: dict[tuple[str, str, str], BackendError] = {}
_MODELS_LOCK = threading.Lock()


def facts_for(spec: str, folder: Path | None = None) -> ModelFacts:
    """The model's facts by its name, else by the model_type in its folder's config.json."""
    facts = model_facts("vlm", spec)
    if facts.matched == "default" and folder is not None:
        try:
            kind = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type", "")
        except (OSError, ValueError, AttributeError):
            kind = ""
        if kind:
            facts = model_facts("vlm", str(kind))
    return facts


def locate(spec: str, setting: str, hub_example: str = "HuggingFaceTB/SmolVLM-256M-Instruct") -> Path | None:
    """The local folder of the model (a folder given, or the cached snapshot of a hub id); None when a hub
    id is not cached but can be downloaded; a BackendError within seconds when it is neither."""
    folder = Path(spec).expanduser()
    if folder.is_dir():
        return folder
    if spec.startswith(("/", ".", "~")) or spec.count("/") > 1 or "\\" in spec:
        raise BackendError(f"The model folder {folder} for {setting}='transformers:{spec}' does not exist",
                           f"point {setting} at a folder holding config.json and the weights ({example(setting)}), "
                           f"or name a hub model, e.g. transformers:{hub_example}")
    return hf_hub.require(spec, setting, example(setting))


def load_model(spec: str, settings: Any, setting: str = "judge") -> VisionLanguageModel:
    """Load the model and its processor (no sharing; `shared_model` shares)."""
    folder = locate(spec, setting)  # first: a model that cannot be had fails before the slow import
    try:
        import transformers
        from transformers import AutoModelForImageTextToText, AutoProcessor
    except ImportError:
        raise BackendError(f"transformers is not installed (needed by {setting}='transformers:...')",
                           f"{INSTALL}, or choose another {setting}") from None
    facts = facts_for(spec, folder)
    device, _ = torch_device.resolve(settings)
    precision = torch_device.precision_for(settings.dtype, device, facts.precision)
    dtype = torch_device.dtype_of(precision)
    source = str(folder) if folder is not None else spec
    local = {"local_files_only": True} if folder is not None else {}
    transformers.utils.logging.disable_progress_bar()  # library code never prints
    try:
        processor = AutoProcessor.from_pretrained(source, **local)
        model = AutoModelForImageTextToText.from_pretrained(source, dtype=dtype, **local)
        model.to(device)
    except ImportError as exc:  # a processor's own dependency (SmolVLM's needs num2words)
        raise BackendError(f"The processor of {spec!r} needs a package that is not installed ({str(exc)[:200]})",
                           f"{INSTALL} (the message above names the package)") from None
    except Exception as exc:  # noqa: BLE001  (any failure to read the folder or the weights)
        raise BackendError(f"Could not load the vision-language model {spec!r} for {setting} "
                           f"({type(exc).__name__}: {str(exc)[:200]})",
                           f"check that it is an image-text-to-text model with its processor, downloaded once while "
                           f"online (it is cached) or in a local folder ({example(setting)})") from None
    log.info("loaded %s for %s on %s in %s (%s)", spec, setting, device, precision, facts.matched)
    return VisionLanguageModel(spec, model, processor, device=device, dtype=dtype, facts=facts)


def shared_model(spec: str, settings: Any, setting: str = "judge") -> VisionLanguageModel:
    """The process's one copy of the model for these device and precision settings, loaded at first use under
    a lock; a failed load is remembered and raised again at once."""
    spec = (spec or "").strip()
    if not spec or spec == "transformers:":  # the registry passes the bare prefix through unchanged
        raise BackendError(f"{setting}='transformers:' needs a model id or folder",
                           f"e.g. {setting}=transformers:HuggingFaceTB/SmolVLM-256M-Instruct")
    key = (spec, str(settings.device), str(settings.dtype))
    with _MODELS_LOCK:
        if key in _MODELS:
            return _MODELS[key]
        if key in _LOAD_ERRORS:
            err = _LOAD_ERRORS[key]
            raise BackendError(err.message, err.hint)
        try:
            _MODELS[key] = load_model(spec, settings, setting)
        except BackendError as exc:
            _LOAD_ERRORS[key] = BackendError(exc.message, exc.hint)
            raise
        return _MODELS[key]


def forget_models() -> None:
    """Drop every shared model and remembered failure (tests)."""
    with _MODELS_LOCK:
        _MODELS.clear()
        _LOAD_ERRORS.clear()


# --- the backends -----------------------------------------------------------------------------------------
class TransformersJudge:
    """Yes/no judge from the first answer token's probabilities (module docstring)."""

    is_standin = False
    prompt_id = PROMPT_ID

    def __init__(self, vlm: VisionLanguageModel, system: str = prompts.SYSTEM):
        self.vlm = vlm
        self.system = system
        self.model_id = f"transformers:{vlm.spec}"
        self.min_answer_mass = vlm.min_answer_mass
        self._combiner = Combiner(self._read_batch, vlm.batch_size)

    @classmethod
    def from_settings(cls, settings: Any, spec: str, embedder: Any = None) -> "TransformersJudge":
        return cls(shared_model(spec, settings, "judge"))

    def _item(self, request: JudgeRequest) -> tuple[PreparedImage, str]:
        if request.image is None:
            raise BackendError("a judge request reached the model without its photo", "pass the image or a loader")
        try:
            prepared = self.vlm.prepare(request.image)
        except Exception as exc:  # noqa: BLE001  (an unreadable picture fails only its own request)
            raise BackendError(f"The image processor of {self.vlm.spec!r} could not prepare the photo "
                               f"({type(exc).__name__}: {str(exc)[:200]})", "check the photo file") from None
        return prepared, self.vlm.prompt(self.system, prompts.user_text(request))

    def _entry(self, request: JudgeRequest) -> Any:
        """The request's (prepared photo, prompt), or the BackendError that preparing it raised."""
        try:
            return self._item(request)
        except BackendError as exc:
            return exc

    def _read_batch(self, entries: list[Any]) -> list[Any]:
        """Readings of one batch of prepared entries, a BackendError in the place of each that failed: one bad
        photo does not fail the others (a failed batch is run again one entry at a time)."""
        out: list[Any] = list(entries)
        where = [i for i, e in enumerate(entries) if not isinstance(e, BackendError)]
        items = [entries[i] for i in where]
        if not items:
            return out
        try:
            got: list[Any] = self._run(items)
        except BackendError as exc:
            got = [exc] if len(items) == 1 else []
            if len(items) > 1:
                log.warning("a batch of %d failed on %s (%s); running it one by one", len(items), self.vlm.spec, exc)
                for item in items:
                    try:
                        got.extend(self._run([item]))
                    except BackendError as one:
                        got.append(one)
        for i, reading in zip(where, got):
            out[i] = reading
        return out

    def _run(self, items: list[tuple[PreparedImage, str]]) -> list[YesNoReading]:
        try:
            return self.vlm.read(items)
        except Exception as exc:  # noqa: BLE001
            raise BackendError(f"The vision-language model {self.vlm.spec!r} failed on a batch of {len(items)} "
                               f"({type(exc).__name__}: {str(exc)[:200]})",
                               "check the model, the photos and free memory") from None

    def readings(self, requests: Sequence[JudgeRequest]) -> list[YesNoReading]:
        """Readings of many requests in batches of the model's batch size. On a GPU the next batch's photos
        are prepared (on the CPU) while the current batch runs; on the CPU the two would only compete for the
        same cores (and torch's worker threads wait on a core the preparation holds), so they take turns."""
        from concurrent.futures import ThreadPoolExecutor

        size = self.vlm.batch_size
        chunks = [list(requests[i:i + size]) for i in range(0, len(requests), size)]
        out: list[YesNoReading] = []

        def entries_of(chunk: list[JudgeRequest]) -> list[Any]:
            return [self._entry(r) for r in chunk]

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vlm-prepare") if self.vlm.device != "cpu" \
            else None
        try:
            ahead = pool.submit(entries_of, chunks[0]) if pool is not None and chunks else None
            for k, chunk in enumerate(chunks):
                entries = ahead.result() if ahead is not None else entries_of(chunk)
                if pool is not None and k + 1 < len(chunks):
                    ahead = pool.submit(entries_of, chunks[k + 1])
                for got in self._read_batch(entries):
                    if isinstance(got, BackendError):
                        raise BackendError(got.message, got.hint)
                    out.append(got)
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        return out

    def ask_many(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        return [judge_answer(r, self.min_answer_mass) for r in self.readings(requests)]

    def reading(self, request: JudgeRequest) -> YesNoReading:
        """One reading; the photo is prepared in the calling thread, and calls from several threads at once
        share forward passes."""
        entry = self._entry(request)
        if isinstance(entry, BackendError):
            raise entry
        got = self._combiner.submit(entry)
        if isinstance(got, BackendError):
            raise BackendError(got.message, got.hint)
        return got

    def ask(self, request: JudgeRequest) -> JudgeAnswer:
        return judge_answer(self.reading(request), self.min_answer_mass)


def _hint(photo: Any) -> str:
    if photo is None:
        return ""
    names = [n for n in (getattr(photo, "common_name", None), getattr(photo, "scientific_name", None)) if n]
    return " / ".join(names)


class TransformersCaptioner:
    """One sentence per photo from the same kind of model (greedy, at most CAPTION_TOKENS tokens)."""

    is_standin = False

    def __init__(self, vlm: VisionLanguageModel, max_tokens: int = CAPTION_TOKENS):
        self.vlm = vlm
        self.max_tokens = int(max_tokens)
        self.model_id = f"transformers-captioner:{vlm.spec}"
        self._combiner = Combiner(self._caption_batch, vlm.batch_size)

    @classmethod
    def from_settings(cls, settings: Any, spec: str) -> "TransformersCaptioner":
        return cls(shared_model(spec, settings, "captioner"))

    def _caption_batch(self, pairs: list[tuple[Image.Image, Any]]) -> list[str]:
        items = [(self.vlm.prepare(image), self.vlm.prompt(prompts.CAPTION_SYSTEM, prompts.caption_text(_hint(photo))))
                 for image, photo in pairs]
        try:
            texts = self.vlm.generate(items, self.max_tokens)
        except Exception as exc:  # noqa: BLE001
            raise BackendError(f"The vision-language model {self.vlm.spec!r} failed to caption "
                               f"({type(exc).__name__}: {str(exc)[:200]})",
                               "check the model, the photo and free memory") from None
        return [t.splitlines()[0].strip() if t else "" for t in texts]

    def caption(self, image: Image.Image, photo: Any = None) -> str:
        return self._combiner.submit((image, photo))

    def caption_many(self, images: Sequence[Image.Image], photos: Sequence[Any] | None = None) -> list[str]:
        photos = list(photos) if photos is not None else [None] * len(images)
        pairs = list(zip(images, photos))
        size = self.vlm.batch_size
        return [t for i in range(0, len(pairs), size) for t in self._caption_batch(pairs[i:i + size])]
