"""What EcoLens starts on, and where its downloads go.

On a Hugging Face Space (the environment has SPACE_ID) where neither `models` nor `corpus` was set, the app
starts on a real model profile (hub-gpu when a GPU is there, else hub-cpu) and the INQUIRE-Rerank validation
split, when the hub can be reached; when it cannot, it keeps the offline stand-in world and says why (the
banner shows the reason). Anywhere else nothing is chosen for the user: no setting, no change.

A real profile or a hub corpus keeps its downloads in the data directory (data_dir/models for models,
data_dir/hub for datasets) unless HF_HOME or HF_HUB_CACHE says otherwise; `preflight` fails within seconds
when what they need is neither here nor downloadable."""
from __future__ import annotations

import logging
import os
import sys
from typing import Any, Mapping

from core.contracts import profiles

log = logging.getLogger(__name__)
SPACE_CORPUS = "hf://datasets/evendrow/INQUIRE-Rerank:validation"
NO_HUB = ("this Space cannot reach the Hugging Face hub, so it runs the offline stand-in world instead of real "
          "models and INQUIRE photos")


def on_space(environ: Mapping[str, str] = os.environ) -> bool:
    return bool(environ.get("SPACE_ID"))


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def space_start(settings: Any, environ: Mapping[str, str] = os.environ) -> tuple[Any, str]:
    """(the settings to start on, why the stand-in world was kept or '') for a Space; unchanged elsewhere and
    wherever the user chose models or a corpus."""
    if not on_space(environ) or {"models", "corpus"} & set(settings.explicit()):
        return settings, ""
    from core.backends import hf_hub

    if not hf_hub.hub_reachable():
        log.warning("on a Space without the hub: starting on the stand-in world")
        return settings, NO_HUB
    profile = "hub-gpu" if _has_gpu() else "hub-cpu"
    log.info("on a Space with the hub: starting on models=%s and %s", profile, SPACE_CORPUS)
    return settings.replace(models=profile, corpus=SPACE_CORPUS), ""


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
