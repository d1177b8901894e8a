"""The hub models that the settings name (a model profile's, or a backend set by hand), fetched once with
progress in bytes ("downloading bioclip-2: 1.2 of 1.7 GB") before the backends load them from the cache.

Which files each library reads is data (WANTED): a transformers model's top-level configuration, tokenizer
and safetensors weights; an open_clip hub model's open_clip_* files; a diffusers pipeline's model_index.json
and each component's configuration and weights (the fp16 variant on a GPU, the full-precision files on the
CPU, as diffusers_generator.py loads them). A file a library wants beyond these is fetched by the library
itself when it loads (no progress for it, nothing lost).

`preflight` is the offline check: a hub model that is not in the cache while the hub cannot be reached (or
HF_HUB_OFFLINE is set) fails within seconds, naming every such model and the fix."""
from __future__ import annotations

import fnmatch
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from core.backends import hf_hub, hub_download
from core.contracts.errors import BackendError

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]  # (what, done, total) as core.search.preparation reports it

# library -> (patterns of files it reads, patterns it never needs)
WANTED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "transformers": (("*.json", "*.safetensors", "*.txt", "*.model", "*.jinja", "*.tiktoken"),
                     ("*/*", "onnx*", "*.bin", "*.gguf", "*.msgpack", "*.h5")),
    "open_clip": (("open_clip_config.json", "open_clip_model.safetensors", "*.txt", "tokenizer*.json",
                   "special_tokens_map.json"), ("*/*",)),
    "diffusers": (("model_index.json", "*/*.json", "*/*.txt", "*/*.safetensors", "*/*.model"),
                  ("*/*/*", "*.bin", "*.ckpt", "*.msgpack", "*.onnx", "*.pb", "*.xml")),
}


@dataclass(frozen=True)
class HubModel:
    setting: str  # embedder | llm | judge | captioner | generator
    repo_id: str
    library: str  # a key of WANTED

    @property
    def short(self) -> str:
        return self.repo_id.rsplit("/", 1)[-1]


def _repo(spec: str) -> str | None:
    """A hub id ('owner/name') in a backend spec, or None for a local path or a bare name."""
    spec = spec.strip()
    if not spec or spec.startswith(("/", ".", "~")) or spec.count("/") != 1 or "\\" in spec or "@" in spec:
        return None
    return None if Path(spec).expanduser().exists() else spec


def hub_models(settings: Any) -> list[HubModel]:
    """Every hub model the settings name, each repository once (the judge and captioner may share one)."""
    found: list[HubModel] = []
    for setting in ("embedder", "judge", "captioner", "llm", "generator"):
        value = str(getattr(settings, setting))
        prefix, _, rest = value.partition(":")
        library = {"open_clip": "open_clip", "transformers": "transformers", "diffusers": "diffusers"}.get(prefix)
        if library == "open_clip":
            rest = rest[len("hf-hub:"):] if rest.startswith("hf-hub:") else ""
        repo = _repo(rest) if library else None
        if repo and all(m.repo_id != repo for m in found):
            found.append(HubModel(setting, repo, library))
    return found


def wanted(library: str, paths: list[str], half: bool = False) -> list[str]:
    """The files of a repository that `library` reads (half: the diffusers fp16 variant, where it exists)."""
    take, skip = WANTED[library]
    chosen = [p for p in paths if any(fnmatch.fnmatch(p, t) for t in take)
              and not any(fnmatch.fnmatch(p, s) for s in skip)]
    if library == "diffusers":
        fp16 = {p for p in chosen if ".fp16." in p}
        if half and fp16:  # the fp16 file instead of its full-precision twin
            chosen = [p for p in chosen if p.replace(".safetensors", ".fp16.safetensors") not in fp16]
        else:
            chosen = [p for p in chosen if p not in fp16]
    return chosen


def missing(settings: Any) -> list[HubModel]:
    """The hub models of the settings that are not in the local cache."""
    return [m for m in hub_models(settings) if hf_hub.cached_snapshot(m.repo_id) is None]


def preflight(settings: Any) -> None:
    """Raise within seconds when a hub model of the settings is neither cached nor downloadable."""
    absent = missing(settings)
    if not absent or hf_hub.hub_reachable():
        return
    why = hf_hub.why_offline()
    listed = ", ".join(f"{m.repo_id} ({m.setting})" for m in absent)
    raise BackendError(
        f"The model profile models={settings.models!r} needs {listed}, not in the local cache "
        f"({hf_hub.cache_folder()}), and {why}",
        "download the models once where there is network (`hf download REPO`) and copy their folders ("
        + ", ".join(hf_hub.repo_folder(m.repo_id) for m in absent)
        + f") from that machine's Hugging Face cache ({hf_hub.DEFAULT_CACHE} unless HF_HOME says otherwise) into "
        f"{hf_hub.cache_folder()} here, or point each backend setting at a local folder, or set "
        "ECOLENS_MODELS=standin for the offline stand-ins")


def fetch(settings: Any, progress: Progress | None = None) -> list[str]:
    """Download the missing hub models of the settings, with progress; returns notices ('' for none)."""
    absent = missing(settings)
    if not absent:
        return []
    preflight(settings)
    from core.backends import torch_device

    device, _ = torch_device.resolve(settings)
    max_bytes = int(settings.hub_max_gb * 1e9)
    notices = []
    for m in absent:
        files = hub_download.list_files(m.repo_id)
        chosen = set(wanted(m.library, [f.path for f in files], half=device != "cpu"))
        todo = [f for f in files if f.path in chosen]
        what = f"downloading {m.short}"
        log.info("%s: %d files, %d bytes", what, len(todo), sum(f.size for f in todo))
        report = (lambda done, total, w=what: progress(w, done, total)) if progress is not None else None
        hub_download.download(m.repo_id, todo, max_bytes=max_bytes, progress=report, what=m.repo_id)
        notices.append(f"downloaded {m.repo_id} ({sum(f.size for f in todo) / 1e6:.1f} MB) into "
                       f"{hf_hub.cache_folder()}")
    return notices
