"""Image/text embedder through open_clip (embedder='open_clip:SPEC').

SPEC forms:
  ARCH/PRETRAINED      a named architecture with a pretrained tag, e.g. ViT-B-32/laion2b_s34b_b79k
  hf-hub:ORG/REPO      a model published on the Hugging Face hub, e.g. hf-hub:imageomics/bioclip-2
  ARCH@/path/ckpt.pt   a named architecture with a local checkpoint file
  ARCH                 random weights (tests and benchmarks only: meaningless vectors, so a stand-in)
Weights come from the local cache; without network a missing download fails with a hint. Rows come out
L2-normalised float32; text longer than the encoder's context is cut by the tokenizer, never an error."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
from PIL import Image

from core.backends import torch_device
from core.backends.base import l2_normalise
from core.errors import BackendError

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


class OpenClipEmbedder:
    def __init__(self, model: Any, preprocess: Any, tokenizer: Any, *, model_id: str, device: str = "cpu",
                 dtype: Any = None, batch_size: int = 32, is_standin: bool = False):
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
        device, dtype = torch_device.resolve(settings)
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(name, pretrained=pretrained,
                                                                         device=device)
            tokenizer = open_clip.get_tokenizer(name)
        except Exception as exc:
            raise _load_error(spec, exc) from None
        model = model.to(device=device, dtype=dtype)
        version = getattr(open_clip, "__version__", "?")
        random_weights = pretrained is None and not name.startswith("hf-hub:")
        return cls(model, preprocess, tokenizer, model_id=f"open_clip:{spec}#open_clip={version}",
                   device=device, dtype=dtype, batch_size=getattr(settings, "batch_size", 32),
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
            tokens = self.tokenizer(texts[i:i + self.batch_size])  # pads and truncates to the context
            with torch.inference_mode():
                feats = self.model.encode_text(tokens.to(self.device))
            parts.append(l2_normalise(feats.float().cpu().numpy()))
        return np.concatenate(parts, axis=0)

    def count_tokens(self, text: str) -> int:
        """Tokens the text encoder would see before truncation, start and end markers included."""
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
