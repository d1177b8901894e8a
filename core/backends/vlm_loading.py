"""Loading a vision-language model (transformers image-text-to-text) once per process and (model, device,
precision), shared by the judge and the captioner under a lock; a failed load is remembered and raised again at
once. `locate` finds a model's folder (a local folder, or the cached snapshot of a hub id; offline with no cached
copy: a BackendError within seconds naming the fix, hf_hub.py); the in-process LLM uses it too. Device and
precision come from the device/dtype settings and the model's facts (torch_device.py, model_facts.py)."""
from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

from core.backends import hf_hub, torch_device
from core.backends.model_facts import ModelFacts, model_facts
from core.backends.vlm_model import VisionLanguageModel
from core.contracts.errors import BackendError

log = logging.getLogger(__name__)
INSTALL = "pip install transformers num2words"


def example(setting: str) -> str:
    return f"{setting}=transformers:/path/to/model-folder"


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
    except Exception as exc:
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

