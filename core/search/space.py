"""What EcoLens starts on, and where its downloads go.

On a Hugging Face Space (the environment has SPACE_ID) where neither `models` nor `corpus` was set, the app
starts on a real model profile (hub-gpu when a GPU is there, else hub-cpu) and the INQUIRE-Rerank validation
split, when the hub can be reached; when it cannot, it keeps the offline stand-in world and says why (the
banner shows the reason). Anywhere else nothing is chosen for the user: no setting, no change.

On a Space, the data directory is the Space's persistent storage (setting space_storage, /data by default)
when that folder exists and can be written, unless data_dir was set (ECOLENS_DATA_DIR or the file): a restart
or a wake from sleep then finds its downloads, catalog and index and neither downloads nor embeds again.
Without persistent storage the banner says that a restart starts over.

A real profile or a hub corpus keeps its downloads in the data directory (data_dir/models for models,
data_dir/hub for datasets) unless HF_HOME or HF_HUB_CACHE says otherwise; `preflight` fails within seconds
when what they need is neither here nor downloadable."""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from core.contracts import profiles

log = logging.getLogger(__name__)
SPACE_CORPUS = "hf://datasets/evendrow/INQUIRE-Rerank:validation"
NO_HUB = ("this Space cannot reach the Hugging Face hub, so it runs the offline stand-in world instead of real "
          "models and INQUIRE photos")


def on_space(environ: Mapping[str, str] = os.environ) -> bool:
    return bool(environ.get("SPACE_ID"))


NO_STORAGE = "this Space has no persistent storage ({folder}); a restart starts over"
STORAGE_READ_ONLY = "this Space's persistent storage ({folder}) cannot be written; a restart starts over"


def space_storage(settings: Any, environ: Mapping[str, str] = os.environ) -> tuple[Any, str]:
    """(the settings with data_dir on the Space's persistent storage, '') when on a Space with that folder and
    data_dir not set; (the settings unchanged, why a restart starts over) on a Space without it; unchanged and
    '' elsewhere, and wherever data_dir was set."""
    if not on_space(environ) or "data_dir" in settings.explicit():
        return settings, ""
    folder = Path(settings.space_storage).expanduser()
    if not folder.is_dir():
        log.warning("on a Space without persistent storage (%s): the data directory %s is lost at a restart",
                    folder, settings.data_dir)
        return settings, NO_STORAGE.format(folder=folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        log.warning("the Space's persistent storage %s cannot be written: the data directory stays %s", folder,
                    settings.data_dir)
        return settings, STORAGE_READ_ONLY.format(folder=folder)
    log.info("on a Space with persistent storage: the data directory is %s", folder)
    return settings.replace(data_dir=str(folder)), ""


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def space_start(settings: Any, environ: Mapping[str, str] = os.environ) -> tuple[Any, str]:
    """(the settings to start on, what the banner must note or '') for a Space: the data directory on its
    persistent storage (space_storage), and the real profile and INQUIRE unless the user chose models or a
    corpus (the note: why the stand-in world was kept, and when a restart starts over). Unchanged elsewhere."""
    if not on_space(environ):
        return settings, ""
    settings, storage = space_storage(settings, environ)
    if {"models", "corpus"} & set(settings.explicit()):
        return settings, storage
    from core.backends import hf_hub

    if not hf_hub.hub_reachable():
        log.warning("on a Space without the hub: starting on the stand-in world")
        return settings, "; ".join(t for t in (NO_HUB, storage) if t)
    profile = "hub-gpu" if _has_gpu() else "hub-cpu"
    log.info("on a Space with the hub: starting on models=%s and %s", profile, SPACE_CORPUS)
    return settings.replace(models=profile, corpus=SPACE_CORPUS), storage


def uses_hub(settings: Any) -> bool:
    from core.ingest import hub_dataset

    return profiles.is_real(settings.models) or hub_dataset.is_hub(settings.corpus)


def use_model_cache(settings: Any, environ=os.environ) -> None:
    """With a real profile, downloaded models live in data_dir/models (unless HF_HOME / HF_HUB_CACHE is set)."""
    if not profiles.is_real(settings.models) or environ.get("HF_HUB_CACHE") or environ.get("HF_HOME"):
        return
    folder = str(settings.path("models"))
    environ["HF_HUB_CACHE"] = folder
    hub = sys.modules.get("huggingface_hub.constants")
    if hub is not None:  # already imported: its paths were read from the environment then
        hub.HF_HUB_CACHE = folder


def preflight(settings: Any) -> None:
    """Fail within seconds (an EcoLensError with the fix) when the settings need the hub and it is not there:
    a model of the profile that is not cached, or a hub corpus that was never downloaded."""
    from core.backends import model_fetch
    from core.ingest import hub_dataset

    model_fetch.preflight(settings)
    if hub_dataset.is_hub(settings.corpus):
        error = hub_dataset.unreachable(settings, settings.corpus)
        if error is not None:
            raise error
