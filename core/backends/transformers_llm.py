"""Text LLM in process on transformers (llm='transformers:MODEL'; MODEL is a hub id such as
HuggingFaceTB/SmolLM2-360M-Instruct or Qwen/Qwen2.5-1.5B-Instruct, or a local folder). No server, no API key,
no llama.cpp build.

Prompts go through the model's own chat template (the tokenizer's). A JSON task's schema is enforced while
generating by xgrammar: its logits processor masks every token that would leave the schema's grammar, so the
reply parses (callers still validate it, core/methods/llm_checks.py, like any LLM's). xgrammar was chosen by
measurement over lm-format-enforcer, whose transformers integration does not import with transformers 5, and
over outlines, which pulls a much larger dependency set (docs/benchmarks-log.md has the figures). A schema xgrammar
cannot compile is logged and the reply is generated unconstrained (and then validated). xgrammar 0.2's
length-bounded strings (maxLength) admit raw control characters, which JSON forbids: a JSON reply has them
turned into spaces.

Decoding is greedy at temperature 0, else sampled with the call's seed. One generation at a time per model
(under a lock); the compiled grammar of each schema is kept. The model's facts (size: the tiny-model notice
and the request's-own-words rule) come from its parameter count (model_facts.llm_facts)."""
from __future__ import annotations

import json
import logging
import re
import threading
from collections import OrderedDict
from typing import Any, Sequence

from core.backends import torch_device
from core.backends.base import ChatMessage
from core.backends.fluency import Fluency, fluency
from core.backends.model_facts import FactsCaveats, llm_facts
from core.backends.served_model import ServedModel
from core.backends.vlm_loading import locate
from core.contracts.errors import BackendError

log = logging.getLogger(__name__)
INSTALL = "pip install transformers xgrammar"
HUB_EXAMPLE = "HuggingFaceTB/SmolLM2-360M-Instruct"
GRAMMARS_KEPT = 32
# raw control characters, which JSON text may hold only escaped (no whitespace is generated between tokens)
_CONTROL = re.compile(r"[\x00-\x1f]")


class TransformersLLM(FactsCaveats):
    is_standin = False

    def __init__(self, spec: str, model: Any, tokenizer: Any, *, device: str = "cpu"):
        self.spec = spec
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.device = device
        self.model_id = f"transformers:{spec}"
        self.n_params = int(sum(p.numel() for p in model.parameters()))
        self.facts = llm_facts(spec.rstrip("/").rsplit("/", 1)[-1], self.n_params)
        self.display_name = ServedModel(spec.rstrip("/").rsplit("/", 1)[-1], self.n_params).label
        self._lock = threading.Lock()
        self._grammars: OrderedDict[str, Any] = OrderedDict()
        self._compiler = None
        if not getattr(tokenizer, "chat_template", None):
            raise BackendError(f"The model {spec!r} has no chat template",
                               "use an instruction-tuned chat model (e.g. transformers:" + HUB_EXAMPLE + ")")

    @classmethod
    def from_settings(cls, settings: Any, spec: str) -> "TransformersLLM":
        spec = (spec or "").strip()
        if not spec or spec == "transformers:":
            raise BackendError("llm='transformers:' needs a model id or folder", f"e.g. llm=transformers:{HUB_EXAMPLE}")
        folder = locate(spec, "llm", HUB_EXAMPLE)
        try:
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise BackendError("transformers is not installed (needed by llm='transformers:...')",
                               f"{INSTALL}, or choose another llm") from None
        device, _ = torch_device.resolve(settings)
        dtype = torch_device.dtype_of(torch_device.precision_for(settings.dtype, device, "bf16"))
        source = str(folder) if folder is not None else spec
        local = {"local_files_only": True} if folder is not None else {}
        transformers.utils.logging.disable_progress_bar()
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, **local)
            model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **local).to(device)
        except Exception as exc:
            raise BackendError(f"Could not load the language model {spec!r} ({type(exc).__name__}: {str(exc)[:200]})",
                               "check that it is a causal language model with its tokenizer, downloaded once "
                               "while online (it is cached) or in a local folder "
                               "(llm=transformers:/path/to/folder)") from None
        log.info("loaded %s as the text LLM on %s", spec, device)
        return cls(spec, model, tokenizer, device=device)

    # -- structured generation -----------------------------------------------------------------------------
    def _grammar(self, schema: dict[str, Any]) -> Any:
        """The compiled grammar of `schema` (kept), or None when xgrammar is missing or cannot compile it."""
        key = json.dumps(schema, sort_keys=True)
        if key in self._grammars:
            self._grammars.move_to_end(key)
            return self._grammars[key]
        try:
            import xgrammar as xgr
        except ImportError:
            log.warning("xgrammar is not installed: JSON replies of %s are not constrained (%s)", self.spec, INSTALL)
            return None
        try:
            if self._compiler is None:
                info = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=self.model.config.vocab_size)
                self._compiler = xgr.GrammarCompiler(info)
            compiled = self._compiler.compile_json_schema(key, any_whitespace=False)
        except Exception:
            log.warning("xgrammar could not compile a JSON schema for %s; the reply is generated unconstrained "
                        "and validated", self.spec, exc_info=True)
            compiled = None
        self._grammars[key] = compiled
        while len(self._grammars) > GRAMMARS_KEPT:
            self._grammars.popitem(last=False)
        return compiled

    def _processors(self, schema: dict[str, Any] | None) -> list[Any]:
        compiled = self._grammar(schema) if schema is not None else None
        if compiled is None:
            return []
        import xgrammar as xgr

        return [xgr.contrib.hf.LogitsProcessor(compiled)]

    # -- chat ----------------------------------------------------------------------------------------------
    def prompt_ids(self, messages: Sequence[ChatMessage]) -> dict[str, Any]:
        """The chat as the model's template lays it out, ending where the assistant's reply starts."""
        turns = [{"role": m.role, "content": m.content} for m in messages]
        batch = self.tokenizer.apply_chat_template(turns, add_generation_prompt=True, return_tensors="pt",
                                                   return_dict=True)
        return {k: v.to(self.device) for k, v in batch.items()}

    def chat(self, messages: Sequence[ChatMessage], *, temperature: float = 0.0, seed: int = 0,
             max_tokens: int = 256, json_schema: dict[str, Any] | None = None) -> str:
        import torch

        inputs = self.prompt_ids(messages)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        sampling = {"do_sample": True, "temperature": float(temperature)} if temperature > 0 else {"do_sample": False}
        try:
            with self._lock, torch.inference_mode():
                if temperature > 0:
                    torch.manual_seed(int(seed))
                out = self.model.generate(**inputs, max_new_tokens=int(max_tokens), pad_token_id=pad,
                                          logits_processor=self._processors(json_schema), **sampling)
        except Exception as exc:
            raise BackendError(f"The language model {self.spec!r} failed to answer ({type(exc).__name__}: "
                               f"{str(exc)[:200]})", "shorten the prompt or check the model and free memory") from None
        reply = out[0, inputs["input_ids"].shape[1]:]
        text = self.tokenizer.decode(reply, skip_special_tokens=True).strip()
        if json_schema is not None:  # xgrammar's length-bounded strings let raw control characters through
            text = _CONTROL.sub(" ", text)
        return text

    def fluency(self) -> Fluency:
        """How much likelier the model finds an English sentence than its words backwards (the doctor's check
        for random weights, core/backends/fluency.py)."""
        return fluency(self.model, self.tokenizer, self.device, self._lock)
