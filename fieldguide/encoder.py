"""The field-guide dual encoder: a small CNN for pictures and, on purpose, a bag of concepts for text (the mean
of learned word vectors, so word order and which colour goes with which part are lost, like CLIP's known
weakness). Trained by scripts/train_fieldguide_encoder.py; small attribute heads on the image side let the
field-guide judge read attributes from pixels."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from PIL import Image
from torch import nn

from core.backends.base import l2_normalise
from core.contracts.errors import BackendError
from fieldguide.lexicon import tokens
from fieldguide.scene import BEHAVIOURS, HABITATS, POSES, STAGES, VIEWS, Scene, visible_parts
from fieldguide.species import COLOURS, PLAN_NOUN, PLAN_PARTS, SPECIES

VERSION = "fieldguide-dual-encoder@v1"
TEXT_VERSION = "plurals-1"  # how text is read into the vocabulary (vocab_word); cached text vectors follow it
ASSET_DIR = Path(__file__).resolve().parents[1] / "assets" / "fieldguide"
WEIGHTS_NAME, CONFIG_NAME = "encoder.pt", "encoder.json"
INPUT_SIDE = 64
ALL_PARTS = sorted({p for parts in PLAN_PARTS.values() for p in parts} | {"larva body", "larva stripes"})
HEADS: dict[str, list] = {
    "species": [s.scientific_name for s in SPECIES] + ["none"], "plan": list(PLAN_NOUN), "stage": list(STAGES),
    "view": list(VIEWS), "pose": list(POSES) + ["swimming"], "behaviour": list(BEHAVIOURS),
    "habitat": list(HABITATS), "count": [1, 2], "item": ["", "twig", "berry", "leaf", "seed", "fly", "nectar"],
    **{f"colour:{p}": list(COLOURS) + ["none"] for p in ALL_PARTS},
}


def scene_labels(s: Scene) -> dict[str, int]:
    """The class index of every head for a scene (the training targets)."""
    vis = set(visible_parts(s))
    out = {"species": HEADS["species"].index(s.species or "none")}
    for key in ("plan", "stage", "view", "pose", "behaviour", "habitat", "count", "item"):
        out[key] = HEADS[key].index(getattr(s, key))
    for p in ALL_PARTS:
        colour = "none"
        if p in vis:
            colour = s.larva[p.split()[1]] if p.startswith("larva ") else s.colours[p]
        out[f"colour:{p}"] = HEADS[f"colour:{p}"].index(colour)
    return out


class DualEncoder(nn.Module):
    def __init__(self, vocab_size: int, dim: int = 128, width: int = 16):
        super().__init__()
        w = width

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1), nn.BatchNorm2d(cout), nn.ReLU())

        self.cnn = nn.Sequential(block(3, w), block(w, 2 * w), block(2 * w, 4 * w), block(4 * w, 4 * w),
                                 nn.Flatten(), nn.Linear(4 * w * 16, 256), nn.ReLU())
        self.image_proj = nn.Linear(256, dim)
        self.words = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.logit_scale = nn.Parameter(torch.tensor(2.66))
        self.heads = nn.Linear(256, sum(len(v) for v in HEADS.values()))  # all attribute heads side by side

    def image_hidden(self, x: torch.Tensor) -> torch.Tensor:
        return self.cnn(x)

    def encode_image(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.image_proj(self.image_hidden(x)), dim=-1)

    def encode_text(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.words(ids, offsets), dim=-1)

    def head_logits(self, hidden: torch.Tensor) -> dict[str, torch.Tensor]:
        out, start, logits = {}, 0, self.heads(hidden)
        for k, labels in HEADS.items():
            out[k] = logits[:, start:start + len(labels)]
            start += len(labels)
        return out


def to_tensor(images: Sequence[Image.Image]) -> torch.Tensor:
    """Pictures -> (n, 3, 64, 64) float tensor, roughly centred."""
    arr = np.stack([np.asarray(im.convert("RGB").resize((INPUT_SIDE, INPUT_SIDE), Image.BILINEAR))
                    for im in images]).astype(np.float32)
    return torch.from_numpy((arr / 255.0 - 0.5) / 0.25).permute(0, 3, 1, 2).contiguous()


# words the captions never used, read as the caption word of the same meaning: more than one is "two"
SAME_AS = {"several": "two", "multiple": "two", "couple": "pair"}


def vocab_word(word: str, vocab: dict[str, int]) -> str | None:
    """`word` as the encoder knows it: itself, else its singular ('pondhoppers' -> 'pondhopper', 'butterflies'
    -> 'butterfly'), else a caption word of the same meaning ('several' -> 'two'); None when unknown."""
    if word in vocab:
        return word
    if word in SAME_AS:
        return SAME_AS[word] if SAME_AS[word] in vocab else None
    for ending, repl in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(ending) and len(word) > len(ending) + 2 and word[:-len(ending)] + repl in vocab:
            return word[:-len(ending)] + repl
    return None


def bag(texts: Sequence[str], vocab: dict[str, int], limit: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Word ids and offsets for EmbeddingBag: the first `limit` words, plurals read as their singular
    (`vocab_word`), unknown words dropped."""
    ids, offsets = [], []
    for t in texts:
        offsets.append(len(ids))
        known = (vocab_word(w, vocab) for w in tokens(t)[:limit])
        ids.extend(vocab[w] for w in known if w is not None)
    return torch.tensor(ids, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)


class FieldGuideEmbedder:
    """Embedder backend around a trained DualEncoder (CPU, no gradients, batched)."""

    is_standin = True

    def __init__(self, weights_dir: Path = ASSET_DIR, batch_size: int = 64, threads: int = 0):
        weights, config = Path(weights_dir) / WEIGHTS_NAME, Path(weights_dir) / CONFIG_NAME
        if not weights.exists() or not config.exists():
            raise BackendError(f"The field-guide encoder weights are missing ({weights})",
                               "run `python scripts/train_fieldguide_encoder.py` (about 4 minutes on CPU) or "
                               "restore assets/fieldguide/ from the repository")
        self.config = json.loads(config.read_text())
        self.vocab = {w: i for i, w in enumerate(self.config["vocab"])}
        self.dim = int(self.config["dim"])
        self.max_text_tokens = int(self.config.get("max_text_tokens", 32))
        self.model_id = self.config.get("version", VERSION)
        self.text_version = TEXT_VERSION  # part of the cache key of text embeddings (how words are read)
        self.batch_size = max(1, int(batch_size))
        if threads:
            torch.set_num_threads(int(threads))
        self.model = DualEncoder(len(self.vocab), self.dim, int(self.config["width"]))
        self.model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.model.eval()

    def count_tokens(self, text: str) -> int:
        return len(tokens(text))

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        out = [np.zeros((0, self.dim), np.float32)]
        with torch.no_grad():
            for i in range(0, len(images), self.batch_size):
                out.append(self.model.encode_image(to_tensor(images[i:i + self.batch_size])).numpy())
        return l2_normalise(np.concatenate(out))

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with torch.no_grad():
            ids, offsets = bag(list(texts), self.vocab, self.max_text_tokens)
            return l2_normalise(self.model.words(ids, offsets).numpy())

    def attribute_probs(self, images: Sequence[Image.Image]) -> list[dict[str, dict]]:
        """Per picture: head -> {label: probability}, read from the pixels by the attribute heads."""
        with torch.no_grad():
            logits = self.model.head_logits(self.model.image_hidden(to_tensor(images)))
        out: list[dict[str, dict]] = [{} for _ in images]
        for key, lg in logits.items():
            probs = torch.softmax(lg, dim=-1).numpy()
            for i in range(len(images)):
                out[i][key] = {lab: float(p) for lab, p in zip(HEADS[key], probs[i])}
        return out


def create_fieldguide_embedder(settings, spec: str = "fieldguide") -> FieldGuideEmbedder:
    """Registry factory: 'fieldguide' uses the committed weights; 'fieldguide:/some/dir' another folder."""
    folder = ASSET_DIR
    if spec and spec != "fieldguide":
        folder = Path(spec.split(":", 1)[-1]).expanduser()
    return FieldGuideEmbedder(folder, batch_size=settings.batch_size,
                              threads=settings.threads)
