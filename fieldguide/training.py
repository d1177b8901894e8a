"""Contrastive training of the field-guide dual encoder on freshly drawn (picture, caption) pairs.

The pictures come from the same renderer as the world but from another seed, plus a share of invented
colour schemes so the attribute heads learn colours rather than species. Captions are re-worded every step
(training_caption). Loss: symmetric InfoNCE plus cross-entropy of the attribute heads."""
from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from fieldguide.encoder import CONFIG_NAME, HEADS, INPUT_SIDE, VERSION, WEIGHTS_NAME, DualEncoder, bag, scene_labels
from fieldguide.lexicon import all_training_words, training_caption
from fieldguide.render import render
from fieldguide.scene import sample_scene
from fieldguide.species import COLOURS, SPECIES, Species


@dataclass
class TrainConfig:
    seed: int = 1234  # drawing seed of the training pictures (the demo world uses seed 0)
    per_species: int = 160
    generic_share: float = 0.2  # extra pictures with invented colour schemes, as a share of the total
    dim: int = 128
    width: int = 16
    batch: int = 128
    steps: int = 360
    lr: float = 2e-3
    head_weight: float = 1.0
    time_limit_s: float = 540.0  # safety stop on a slow machine (then the result depends on speed)
    max_text_tokens: int = 32
    threads: int = 2


def _generic_species(rng: random.Random) -> Species:
    base = rng.choice(SPECIES)
    names = list(COLOURS)
    return Species("", "", base.plan, {p: rng.choice(names) for p in base.colours},
                   marking=rng.choice(("plain", "spots", "stripes", "bands")),
                   larva={"body": rng.choice(names), "stripes": rng.choice(names)})


def draw_training_set(cfg: TrainConfig):
    """Scenes and their pictures at the encoder's input size, as uint8 (n, 64, 64, 3)."""
    rng = random.Random(f"fieldguide-train:{cfg.seed}")
    items = []
    for sp in SPECIES:
        for _ in range(cfg.per_species):
            items.append((sp, sample_scene(sp, rng)))
    n_generic = int(len(items) * cfg.generic_share / max(1e-6, 1 - cfg.generic_share))
    for _ in range(n_generic):
        g = _generic_species(rng)
        s = sample_scene(g, rng)
        s.species = ""
        items.append((None, s))
    pics = np.stack([np.asarray(render(s).resize((INPUT_SIDE, INPUT_SIDE), resample=2)) for _, s in items])
    return items, pics


def train(out_dir: Path, cfg: TrainConfig | None = None) -> dict:
    """Train, save encoder.pt + encoder.json into out_dir, and return the JSON written."""
    cfg = cfg or TrainConfig()
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t0 = time.time()
    items, pics = draw_training_set(cfg)
    t_draw = time.time() - t0
    vocab_list = sorted(all_training_words())
    vocab = {w: i for i, w in enumerate(vocab_list)}
    x_all = torch.from_numpy((pics.astype(np.float32) / 255.0 - 0.5) / 0.25).permute(0, 3, 1, 2).contiguous()
    labels = {k: torch.tensor([scene_labels(s)[k] for _, s in items]) for k in HEADS}
    model = DualEncoder(len(vocab), cfg.dim, cfg.width)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
    rng = random.Random(f"fieldguide-captions:{cfg.seed}")
    gen = torch.Generator().manual_seed(cfg.seed)
    n, step, losses = len(items), 0, []
    model.train()
    while step < cfg.steps and time.time() - t0 < cfg.time_limit_s:
        idx = torch.randperm(n, generator=gen)[:cfg.batch]
        x = x_all[idx]
        flip = torch.rand(len(idx), generator=gen) < 0.5
        x = torch.where(flip[:, None, None, None], x.flip(-1), x)
        texts = [training_caption(items[i][1], items[i][0], rng) for i in idx.tolist()]
        ids, offsets = bag(texts, vocab, cfg.max_text_tokens)
        hidden = model.image_hidden(x)
        img = torch.nn.functional.normalize(model.image_proj(hidden), dim=-1)
        txt = model.encode_text(ids, offsets)
        logits = model.logit_scale.clamp(0, 4.6).exp() * img @ txt.T
        target = torch.arange(len(idx))
        nce = (torch.nn.functional.cross_entropy(logits, target) +
               torch.nn.functional.cross_entropy(logits.T, target)) / 2
        heads = model.head_logits(hidden)
        ce = sum(torch.nn.functional.cross_entropy(heads[k], labels[k][idx]) for k in HEADS) / len(HEADS)
        loss = nce + cfg.head_weight * ce
        lr = cfg.lr * 0.5 * (1 + math.cos(math.pi * min(1.0, step / max(1, cfg.steps))))
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append((float(nce.detach()), float(ce.detach())))
        step += 1
    model.eval()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out_dir / WEIGHTS_NAME)
    tail = losses[-20:] or [(float("nan"), float("nan"))]
    info = {"version": VERSION, "synthetic": True, "dim": cfg.dim, "width": cfg.width,
            "max_text_tokens": cfg.max_text_tokens, "seed": cfg.seed, "config": asdict(cfg),
            "steps_done": step, "pictures": n, "draw_seconds": round(t_draw, 1),
            "train_seconds": round(time.time() - t0, 1), "torch": torch.__version__,
            "final_loss": {"infonce": round(float(np.mean([a for a, _ in tail])), 4),
                           "heads": round(float(np.mean([b for _, b in tail])), 4)},
            "text_side": "bag of concepts: mean of learned word vectors (word order ignored on purpose)",
            "vocab": vocab_list}
    (out_dir / CONFIG_NAME).write_text(json.dumps(info, indent=1) + "\n")
    return info
