"""Model profiles as data: the setting `models` (ECOLENS_MODELS) names one row of PROFILES, and the row fills
every setting it names with a coherent set of real models and what they need (how many photos Verify checks,
how long a model call may take). A setting given explicitly (constructor, ECOLENS_* variable, TOML file)
beats the profile, and the profile beats the default (core/config/settings.py applies it).

Rows are plain tables keyed by setting name, so that a new setting (a per-preset search deadline, say) joins a
profile by adding one key; tests/unit/test_profiles.py checks that every key is a setting and every value is
valid. 'standin' fills nothing: the offline stand-ins and the synthetic world, as with no setting at all.

Figures behind the CPU row (docs/deployment.md): a SmolVLM-256M-sized judge took 5-10 s per check on this
2-core machine under load (bench/vlm_judge.py); 12 photos x 2 questions keeps a Verify search near a minute
on a free Space's two cores (an estimate until measured there)."""
from __future__ import annotations

from typing import Any

STANDIN = "standin"

# what a profile is for, shown by `app.py doctor` and docs/deployment.md
PURPOSE = {
    "standin": "offline stand-in models and the synthetic field-guide world (no download)",
    "hub-cpu": "small real models for a CPU with 2-4 cores and 16 GB of memory (a free Space)",
    "hub-gpu": "larger real models for one GPU with at least 16 GB of memory",
}

SMOLVLM_256M = "HuggingFaceTB/SmolVLM-256M-Instruct"
SMOLVLM2_2B = "HuggingFaceTB/SmolVLM2-2.2B-Instruct"

PROFILES: dict[str, dict[str, Any]] = {
    STANDIN: {},
    "hub-cpu": {
        "embedder": "open_clip:hf-hub:imageomics/bioclip",
        "judge": f"transformers:{SMOLVLM_256M}",
        "captioner": f"transformers:{SMOLVLM_256M}",
        "llm": "transformers:HuggingFaceTB/SmolLM2-360M-Instruct",
        "generator": "diffusers:stabilityai/sd-turbo",  # one denoising step (model_facts.py)
        "answer_reader": "captions",
        "visret_m": 1,
        "image_size": 512,
        "rerank_k": 12,
        "rerank_subquestions": 2,
        "judge_concurrency": 4,
        "plugir_check_depth": 12,
        "backend_timeout_s": 180.0,
        # search time limits for models on two CPU cores (estimates until measured on a Space)
        "deadline_fast_s": 20.0,
        "deadline_visualize_s": 240.0,
        "deadline_verify_s": 300.0,
        "deadline_cover_s": 180.0,
    },
    "hub-gpu": {
        "embedder": "open_clip:hf-hub:imageomics/bioclip-2",
        "judge": f"transformers:{SMOLVLM2_2B}",
        "captioner": f"transformers:{SMOLVLM2_2B}",
        "llm": "transformers:Qwen/Qwen2.5-1.5B-Instruct",
        "generator": "diffusers:stabilityai/sdxl-turbo",
        "answer_reader": "captions",
        "visret_m": 3,
        "image_size": 512,
        "rerank_k": 100,
        "rerank_subquestions": 3,
        "judge_concurrency": 32,
        "plugir_check_depth": 100,
        "backend_timeout_s": 120.0,
        "deadline_fast_s": 10.0,
        "deadline_visualize_s": 90.0,
        "deadline_verify_s": 120.0,
        "deadline_cover_s": 60.0,
    },
}

# settings that name a backend (the doctor checks these as a whole; hub models among them are downloaded)
BACKEND_SETTINGS = ("embedder", "llm", "judge", "generator", "captioner")


def names() -> tuple[str, ...]:
    return tuple(PROFILES)


def values(profile: str) -> dict[str, Any]:
    """The settings profile `profile` fills (a copy; {} for an unknown name, which the settings refuse)."""
    return dict(PROFILES.get(profile, {}))


def is_real(profile: str) -> bool:
    """A profile that names models to download (anything but the stand-ins)."""
    return bool(PROFILES.get(profile))
