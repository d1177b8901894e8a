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
model_type.

Parts: vlm_reading.py (the first-token reading), combiner.py (calls gathered into batches), vlm_model.py (the
loaded model), vlm_loading.py (loading, shared per process); this module holds the two backends."""
from __future__ import annotations

import logging
from typing import Any, Sequence

from PIL import Image

from core.backends.base import JudgeAnswer, JudgeRequest
from core.backends.combiner import Combiner
from core.backends.fluency import Fluency, fluency
from core.backends.vlm_loading import shared_model
from core.backends.vlm_model import CAPTION_TOKENS, PreparedImage, VisionLanguageModel
from core.backends.vlm_reading import YesNoReading, judge_answer
from core.contracts.errors import BackendError
from core.prompts import judge as prompts

log = logging.getLogger(__name__)
PROMPT_ID = "transformers-first-token@v1"  # changes when the way a judgement is read changes (cache keys)


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
        except Exception as exc:
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
        except Exception as exc:
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
        except Exception as exc:
            raise BackendError(f"The vision-language model {self.vlm.spec!r} failed to caption "
                               f"({type(exc).__name__}: {str(exc)[:200]})",
                               "check the model, the photo and free memory") from None
        return [t.splitlines()[0].strip() if t else "" for t in texts]

    def caption(self, image: Image.Image, photo: Any = None) -> str:
        return self._combiner.submit((image, photo))

    def fluency(self) -> Fluency:
        """How much likelier the model's text part finds an English sentence than its words backwards (the
        doctor's check for random weights, core/backends/fluency.py)."""
        return fluency(self.vlm.model, self.vlm.tokenizer, self.vlm.device, self.vlm.forward_lock)

    def caption_many(self, images: Sequence[Image.Image], photos: Sequence[Any] | None = None) -> list[str]:
        photos = list(photos) if photos is not None else [None] * len(images)
        pairs = list(zip(images, photos))
        size = self.vlm.batch_size
        return [t for i in range(0, len(pairs), size) for t in self._caption_batch(pairs[i:i + size])]
