"""Image/text embedder through open_clip (embedder='open_clip:SPEC').

SPEC forms:
  ARCH/PRETRAINED      a named architecture with a pretrained tag, e.g. ViT-B-32/laion2b_s34b_b79k
  hf-hub:ORG/REPO      a model published on the Hugging Face hub, e.g. hf-hub:imageomics/bioclip-2
  ARCH@/path/ckpt.pt   a named architecture with a local checkpoint file
  ARCH                 random weights (tests and benchmarks only: meaningless vectors, so a stand-in)
Weights come from the local Hugging Face cache when they are there (loaded from that folder, no network);
a model that is neither cached nor downloadable fails within seconds with the fix (core/backends/hf_hub.py).
Precision is open_clip's own (`precision='fp16'|'bf16'`: low-precision weights with LayerNorm kept in fp32),
chosen from the dtype setting and the model's facts (model_facts.py). Rows come out L2-normalised float32;
text longer than the encoder's context is cut by the tokenizer, never an error. The tokenizer runs under a
lock (Hugging Face fast tokenizers are not safe to share between threads)."""
from __future__ import annotations

import posixpath
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from PIL import Image

from core.backends import hf_hub, torch_device
from core.backends.base import l2_normalise
from core.backends.model_facts import model_facts
from core.contracts.errors import BackendError

INSTALL = "pip install open-clip-torch"


def parse_spec(spec: str) -> tuple[str, str | None]:
    """(model name for open_clip, pretrained tag / checkpoint path / None)."""
    spec = spec.strip()
    if not spec or spec == "open_clip:":  # the registry passes the bare prefix through unchanged
        raise BackendError("embedder='open_clip:' needs a model", "e.g. open_clip:ViT-B-32/laion2b_s34b_b79k")
    if spec.startswith("hf-hub:"):
        return spec, None
    if "@" in spec:
        arch, _, path = spec.partition("@")
        ckpt = Path(path).expanduser()
        if not ckpt.is_file():
            raise BackendError(f"Checkpoint {ckpt} for embedder 'open_clip:{spec}' does not exist",
                               "set embedder to open_clip:ARCH@/path/to/an/existing/checkpoint.pt")
        return arch, str(ckpt)
    arch, _, tag = spec.partition("/")
    return arch, (tag or None)


def import_open_clip() -> Any:
    try:
        import open_clip
    except ImportError:
        raise BackendError("open_clip is not installed (needed by embedder='open_clip:...')",
                           f"{INSTALL}, or set embedder to 'fieldguide' or 'hash'") from None
    return open_clip


LOCAL_EXAMPLE = "embedder=open_clip:ARCH@/path/to/checkpoint.pt"
WEIGHT_FILES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")


def _cached_weights(folder: Path, filename: str) -> Path | None:
    names = [filename] if filename else []
    names += [n for n in WEIGHT_FILES if n not in names]
    if filename.endswith(".bin"):
        names.insert(0, filename[:-4] + ".safetensors")
    return next((folder / n for n in names if (folder / n).is_file()), None)


def locate_weights(open_clip: Any, name: str, pretrained: str | None) -> tuple[str, str | None]:
    """(model name, pretrained) pointing at the local cache when the weights are there, unchanged when they
    can be downloaded; BackendError within seconds when neither (no 30-50 s of retries)."""
    if name.startswith("hf-hub:"):
        local = hf_hub.require(name[len("hf-hub:"):], "embedder", LOCAL_EXAMPLE)
        return (f"local-dir:{local}", None) if local is not None else (name, None)
    if not pretrained or Path(pretrained).expanduser().is_file():
        return name, pretrained
    cfg = open_clip.get_pretrained_cfg(name, pretrained) if hasattr(open_clip, "get_pretrained_cfg") else {}
    source = (cfg or {}).get("hf_hub", "")
    if not source:  # an unknown tag (open_clip explains) or a plain URL download
        return name, pretrained
    repo, filename = posixpath.split(source)  # 'org/repo/' (default file name) or 'org/repo/file.bin'
    local = hf_hub.require(repo, "embedder", LOCAL_EXAMPLE)
    if local is None:
        return name, pretrained
    weights = _cached_weights(local, filename)
    return (name, str(weights)) if weights is not None else (name, pretrained)


class OpenClipEmbedder:
    def __init__(self, model: Any, preprocess: Any, tokenizer: Any, *, model_id: str, device: str = "cpu",
                 dtype: Any = None, batch_size: int = 32, is_standin: bool = False):
        self._tokenizer_lock = threading.Lock()
        self.model = model.eval()
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.device = device
        self.dtype = dtype if dtype is not None else next(model.parameters()).dtype
        self.batch_size = max(1, int(batch_size))
        self.is_standin = is_standin
        self.max_text_tokens: int | None = getattr(tokenizer, "context_length", None) or \
            getattr(model, "context_length", None)
        self.dim = int(self.embed_texts(["a photo"]).shape[1])

    @classmethod
    def from_settings(cls, settings: Any, spec: str) -> "OpenClipEmbedder":
        open_clip = import_open_clip()
        name, pretrained = parse_spec(spec)
        device, _ = torch_device.resolve(settings)
        precision = torch_device.precision_for(settings.dtype, device,
                                               model_facts("embedder", spec).precision)
        load_name, load_pretrained = locate_weights(open_clip, name, pretrained)
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                load_name, pretrained=load_pretrained, device=device, precision=precision)
            tokenizer = open_clip.get_tokenizer(load_name)
        except Exception as exc:
            raise _load_error(spec, exc) from None
        dtype = torch_device.dtype_of(precision)  # the input dtype open_clip expects for this precision
        version = getattr(open_clip, "__version__", "?")
        random_weights = pretrained is None and not name.startswith("hf-hub:")
        return cls(model, preprocess, tokenizer, model_id=f"open_clip:{spec}#open_clip={version}",
                   device=device, dtype=dtype, batch_size=settings.batch_size,
                   is_standin=random_weights)

    # --- forward passes -------------------------------------------------------------------------
    def preprocess_images(self, images: Sequence[Image.Image]) -> Any:
        """A CPU tensor batch ready for `encode_preprocessed`."""
        import torch

        return torch.stack([self.preprocess(im.convert("RGB")) for im in images])

    def encode_preprocessed(self, batch: Any) -> np.ndarray:
        """The bare image forward pass on an already preprocessed batch (also used by benchmarks)."""
        import torch

        with torch.inference_mode():
            feats = self.model.encode_image(batch.to(device=self.device, dtype=self.dtype))
        return l2_normalise(feats.float().cpu().numpy())

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        images = list(images)
        if not images:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        parts = [self.encode_preprocessed(self.preprocess_images(images[i:i + self.batch_size]))
                 for i in range(0, len(images), self.batch_size)]
        return np.concatenate(parts, axis=0)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        parts = []
        for i in range(0, len(texts), self.batch_size):
            with self._tokenizer_lock:
                tokens = self.tokenizer(texts[i:i + self.batch_size])  # pads and truncates to the context
            with torch.inference_mode():
                feats = self.model.encode_text(tokens.to(self.device))
            parts.append(l2_normalise(feats.float().cpu().numpy()))
        return np.concatenate(parts, axis=0)

    def count_tokens(self, text: str) -> int:
        """Tokens the text encoder would see before truncation, start and end markers included."""
        with self._tokenizer_lock:
            encode = getattr(self.tokenizer, "encode", None)
            if callable(encode):
                return len(encode(text)) + 2
            inner = getattr(self.tokenizer, "tokenizer", None)  # open_clip's wrapper of a HF tokenizer
            if inner is not None:
                return len(inner(text)["input_ids"])
            return int((self.tokenizer([text]) != 0).sum())


def _load_error(spec: str, exc: Exception) -> BackendError:
    text = f"{type(exc).__name__}: {exc}"[:300]
    lowered = text.lower()
    if "not found" in lowered and "config" in lowered:
        return BackendError(f"open_clip does not know the architecture in 'open_clip:{spec}' ({text})",
                            "use a name from open_clip.list_models(), e.g. ViT-B-32")
    return BackendError(f"Could not load the weights for embedder 'open_clip:{spec}' ({text})",
                        "download them once while online (they are cached), or use a local checkpoint "
                        "open_clip:ARCH@/path/to/checkpoint.pt")
