"""What the fake hub (tests/fake_hub.py) serves: a tiny parquet in the INQUIRE-Rerank schema, and tiny random
models under the hub ids of the hub-cpu profile (an open_clip model, a SmolVLM judge and captioner, a Llama
chat model), each built here and read back as path -> bytes."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

DATASET = "evendrow/INQUIRE-Rerank"
SPLIT_FILE = "data/validation-00000-of-00001.parquet"
QUERIES = ("a heron eating a fish", "a frog on a green leaf", "a red flower in the rain")
TINY_CLIP = {"embed_dim": 32,
             "vision_cfg": {"image_size": 32, "layers": 1, "width": 64, "head_width": 32, "patch_size": 8},
             "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 64, "heads": 2, "layers": 1}}


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def inquire_parquet(rows_per_query: int = 4, row_group_size: int = 4, side: int = 48) -> bytes:
    """Photos of noise in the INQUIRE-Rerank columns (image bytes, query, relevant, licence, rights holder,
    place, date), several row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image

    rng = np.random.default_rng(0)
    rows = []
    for q, query in enumerate(QUERIES):
        for i in range(rows_per_query):
            n = q * rows_per_query + i
            buf = io.BytesIO()
            Image.fromarray(rng.integers(0, 255, (side, side, 3), dtype=np.uint8)).save(buf, "PNG")
            rows.append({"image": {"bytes": buf.getvalue(), "path": f"{n}.png"}, "query": query,
                         "relevant": int(i == 0), "clip_score": 0.3 - 0.01 * i, "inat24_image_id": 1000 + n,
                         "inat24_file_name": f"train/{n:05d}.jpg", "supercategory": "Appearance",
                         "category": "Birds", "iconic_group": "Aves", "inat24_species_id": n,
                         "inat24_species_name": f"Species {n}", "latitude": 45.0 + n, "longitude": -73.0,
                         "location_uncertainty": 10.0, "date": "2021-06-0%d" % (1 + n % 9),
                         "license": "cc-by-nc" if n % 2 else "cc-by", "rights_holder": f"observer {n}"})
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), out, row_group_size=row_group_size)
    return out.getvalue()


def vector_parquet(model_id: str, dim: int, image_ids, seed: int = 1, model_in: str = "metadata") -> bytes:
    """A precomputed-vector file for photos `image_ids` (INQUIRE's inat24_image_id): random vectors of `dim`
    numbers, the model named in the parquet metadata (or a model_id column, or nowhere)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = list(image_ids)
    rng = np.random.default_rng(seed)
    table = pa.table({"inat24_image_id": ids,
                      "embedding": [rng.standard_normal(dim).astype(np.float32).tolist() for _ in ids]})
    if model_in == "column":
        table = table.append_column("model_id", pa.array([model_id] * len(ids)))
    elif model_in == "metadata":
        table = table.replace_schema_metadata({"model_id": model_id})
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def image_ids(rows_per_query: int = 4) -> list[int]:
    """The inat24_image_id values of inquire_parquet(rows_per_query)."""
    return [1000 + n for n in range(len(QUERIES) * rows_per_query)]


def dataset_files() -> dict[str, bytes]:
    return {SPLIT_FILE: inquire_parquet(), "data/test-00000-of-00001.parquet": inquire_parquet(2),
            "README.md": b"---\nlicense: cc-by-nc-4.0\n---\n# tiny INQUIRE-Rerank stand-in\n"}


def tiny_open_clip_repo(folder: Path) -> dict[str, bytes]:
    """An open_clip hub repository: open_clip_config.json and open_clip_model.safetensors of a tiny model."""
    import torch
    from open_clip.model import CLIP
    from safetensors.torch import save_file

    torch.manual_seed(0)
    model = CLIP(**TINY_CLIP)
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, folder / "open_clip_model.safetensors")
    config = {"model_cfg": TINY_CLIP, "preprocess_cfg": {"mean": [0.48, 0.46, 0.41], "std": [0.27, 0.26, 0.28]}}
    (folder / "open_clip_config.json").write_text(json.dumps(config))
    return files_of(folder)


def profile_repos(root: Path) -> dict[tuple[str, str], dict[str, bytes]]:
    """(kind, hub id) -> files for the hub-cpu profile's models (its generator is left to the test)."""
    from tests.tiny_llm import build_tiny_llama
    from tests.tiny_vlm import build_tiny_smolvlm

    return {("model", "imageomics/bioclip"): tiny_open_clip_repo(root / "clip"),
            ("model", "HuggingFaceTB/SmolVLM-256M-Instruct"): files_of(build_tiny_smolvlm(root / "vlm", yes_no=True)),
            ("model", "HuggingFaceTB/SmolLM2-360M-Instruct"): files_of(build_tiny_llama(root / "llm")),
            ("dataset", DATASET): dataset_files()}


def profile_hub(root: Path):
    """A started fake hub (tests/fake_hub.py) serving profile_repos(root); the caller stops it."""
    from tests.fake_hub import FakeHub

    server = FakeHub()
    for (kind, repo), files in profile_repos(root).items():
        server.add(kind, repo, files)
    return server.start()
