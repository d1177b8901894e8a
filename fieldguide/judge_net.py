"""The field-guide judge's own network: a small CNN that reads every attribute of a picture (species, body plan,
stage, view, pose, behaviour, habitat, count, carried item, colour of each part) from a 112 px copy, with one
temperature per attribute fitted on held-out pictures (temperature scaling) so that its probabilities are
calibrated. Beside the attribute heads it has an item map: per cell of its 28 x 28 feature map, which item (if
any) is drawn there. The carried or eaten item is a few pixels wide, so the map is what teaches the network
to find it (trained on where the renderer drew the item); its per-item maxima feed the attribute heads.
Trained by scripts/train_fieldguide_judge.py; the retrieval encoder is a separate network and is not changed
by it."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from PIL import Image
from torch import nn

from core.contracts.errors import BackendError
from fieldguide.encoder import ASSET_DIR, HEADS

VERSION = "fieldguide-judge-net@v2"
WEIGHTS_NAME, CONFIG_NAME = "judge.pt", "judge.json"
SIDE = 112
MAP = "item map"


class JudgeNet(nn.Module):
    """Five 3x3 convolutions (four of them strided) on a SIDE x SIDE picture; a 1x1 convolution on the third
    one's 28 x 28 map gives the item map; one hidden layer on the last map plus each item's strongest cell of the
    item map; all attribute heads side by side in one linear layer."""

    def __init__(self, width: int = 24, hidden: int = 256, dropout: float = 0.1):
        super().__init__()
        w = width

        def block(cin: int, cout: int, stride: int) -> nn.Sequential:
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                                 nn.BatchNorm2d(cout), nn.ReLU())

        self.early = nn.Sequential(block(3, w, 2), block(w, 2 * w, 2), block(2 * w, 2 * w, 1))
        self.late = nn.Sequential(block(2 * w, 4 * w, 2), block(4 * w, 4 * w, 2), nn.Flatten())
        self.item_map = nn.Conv2d(2 * w, len(HEADS["item"]), 1)
        self.hidden = nn.Sequential(nn.Dropout(dropout),
                                    nn.Linear(4 * w * (SIDE // 16) ** 2 + len(HEADS["item"]), hidden), nn.ReLU())
        self.heads = nn.Linear(hidden, sum(len(v) for v in HEADS.values()))

    def forward(self, x: torch.Tensor, with_map: bool = False) -> dict[str, torch.Tensor]:
        """Each head's logits; with `with_map` also "item map" (n, items, SIDE / 4, SIDE / 4)."""
        f = self.early(x)
        item_map = self.item_map(f)
        z = self.hidden(torch.cat([self.late(f), item_map.amax(dim=(2, 3))], dim=1))
        logits, out, start = self.heads(z), {}, 0
        for key, labels in HEADS.items():
            out[key] = logits[:, start:start + len(labels)]
            start += len(labels)
        if with_map:
            out[MAP] = item_map
        return out


def to_array(image: Image.Image) -> np.ndarray:
    """A picture as the network's uint8 input (SIDE x SIDE x 3)."""
    return np.asarray(image.convert("RGB").resize((SIDE, SIDE), Image.BILINEAR), dtype=np.uint8)


def to_tensor(arrays: np.ndarray) -> torch.Tensor:
    """uint8 (n, SIDE, SIDE, 3) -> roughly centred float (n, 3, SIDE, SIDE)."""
    x = torch.from_numpy(np.ascontiguousarray(arrays)).float()
    return ((x / 255.0 - 0.5) / 0.25).permute(0, 3, 1, 2).contiguous()


def calibrated_probs(logits: dict[str, torch.Tensor], temperatures: dict[str, float]) -> dict[str, np.ndarray]:
    """Softmax of each head's logits divided by its fitted temperature."""
    return {k: torch.softmax(v / float(temperatures.get(k, 1.0)), dim=-1).numpy() for k, v in logits.items()}


def predict_logits(model: JudgeNet, arrays: np.ndarray, batch_size: int = 128) -> dict[str, torch.Tensor]:
    """Each head's logits for uint8 pictures, averaged over the picture and its mirror image (the world has no
    left and right, so both must read the same)."""
    model.eval()
    parts: list[dict[str, torch.Tensor]] = []
    with torch.no_grad():
        for i in range(0, len(arrays), batch_size):
            x = to_tensor(arrays[i:i + batch_size])
            both = model(torch.cat([x, x.flip(-1)]))  # one pass for the pictures and their mirror images
            parts.append({k: (v[:len(x)] + v[len(x):]) / 2 for k, v in both.items()})
    return {k: torch.cat([p[k] for p in parts]) for k in HEADS}


class JudgeReader:
    """Reads attribute probabilities from pictures with the trained judge network (CPU, no gradients)."""

    def __init__(self, weights_dir: Path = ASSET_DIR, batch_size: int = 64):
        weights, config = Path(weights_dir) / WEIGHTS_NAME, Path(weights_dir) / CONFIG_NAME
        if not weights.exists() or not config.exists():
            raise BackendError(f"The field-guide judge weights are missing ({weights})",
                               "run `python scripts/train_fieldguide_judge.py` (about 8 minutes on 2 CPU cores) "
                               "or restore assets/fieldguide/ from the repository")
        self.config = json.loads(config.read_text())
        # the weights' fingerprint is part of the id, so cached answers of other weights are never reused
        self.fingerprint = hashlib.sha256(weights.read_bytes()).hexdigest()[:10]
        self.model_id = f"{self.config.get('version', VERSION)}:{self.fingerprint}"
        self.temperatures = {k: float(v) for k, v in self.config.get("temperatures", {}).items()}
        self.batch_size = max(1, int(batch_size))
        self.model = JudgeNet(int(self.config["config"]["width"]), int(self.config["config"]["hidden"]),
                              float(self.config["config"]["dropout"]))
        self.model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.model.eval()

    def logits(self, arrays: np.ndarray) -> dict[str, torch.Tensor]:
        return predict_logits(self.model, arrays, self.batch_size)

    def attribute_probs(self, images: Sequence[Image.Image]) -> list[dict[str, dict]]:
        """Per picture: head -> {label: calibrated probability}."""
        if not images:
            return []
        probs = calibrated_probs(self.logits(np.stack([to_array(im) for im in images])), self.temperatures)
        return [{k: {lab: float(p) for lab, p in zip(HEADS[k], probs[k][i])} for k in HEADS}
                for i in range(len(images))]
