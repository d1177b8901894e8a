"""Training of the field-guide judge network (judge_net.py) on freshly drawn world pictures.

Three disjoint sets of pictures, each drawn from its own seed: training (the world's species plus a share of
invented colour schemes, so that colour heads learn colours rather than species), calibration (held out; one
temperature per head is fitted on it by minimising the negative log-likelihood) and test (held out; accuracy and
ECE per question type, asked through the judge, go into the JSON sidecar). Deterministic for a seed on CPU.

Besides each picture's attributes the training uses where the renderer drew the carried or eaten item (a few
pixels wide): the network's item map learns to find it cell by cell, which its behaviour and item heads could
not learn from the picture's labels alone in the time given (frogs catching a fly were read as perched)."""
from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from fieldguide.encoder import HEADS, scene_labels
from fieldguide.judge_net import (
    CONFIG_NAME,
    MAP,
    SIDE,
    VERSION,
    WEIGHTS_NAME,
    JudgeNet,
    predict_logits,
    to_array,
    to_tensor,
)
from fieldguide.render import SIZE, render, render_with_item_mask
from fieldguide.scene import Scene, sample_scene
from fieldguide.species import LOOKALIKE_PAIRS, SPECIES, Species
from fieldguide.training import _generic_species

TEMPERATURE_GRID = np.exp(np.linspace(math.log(0.2), math.log(8.0), 161))
# Heads the judge leans on most get more weight in the loss (the colour heads are many and easy), among them the
# colour of each part that tells a look-alike pair apart, by which the judge splits the pair (judge.py).
HEAD_WEIGHTS = {"species": 3.0, "behaviour": 3.0, "item": 3.0, "view": 2.0, "pose": 2.0, "count": 1.0,
                **{f"colour:{part}": 3.0 for _, _, part in LOOKALIKE_PAIRS}}


@dataclass
class JudgeTrainConfig:
    seed: int = 4321
    per_species: int = 500  # training pictures per species (plus the generic share)
    generic_share: float = 0.2
    calibration_per_species: int = 80
    test_per_species: int = 100
    width: int = 24
    hidden: int = 256
    dropout: float = 0.1
    batch: int = 128
    epochs: int = 12
    lr: float = 3e-3
    weight_decay: float = 1e-4
    shift: int = 6  # random translation in pixels (at the network's input size) during training
    item_map_weight: float = 1.0  # weight of the item map's loss beside the heads' weighted mean
    item_map_positive: float = 10.0  # weight of a cell showing an item against an empty cell
    threads: int = 2
    # Safety stop for the training loop in CPU seconds of this process (all threads; 2400 = 20 minutes on two
    # busy cores), far above a normal run. Counted in CPU time so that a machine shared with other jobs stops at
    # the same step; the sidecar says if it was hit.
    time_limit_s: float = 2400.0


def draw(seed: str, per_species: int, generic_share: float = 0.0) -> list[tuple[Species | None, Scene]]:
    """Scenes of every species (and of invented colour schemes, species None) from a named seed."""
    rng = random.Random(seed)
    items: list[tuple[Species | None, Scene]] = [(sp, sample_scene(sp, rng)) for sp in SPECIES
                                                 for _ in range(per_species)]
    for _ in range(int(len(items) * generic_share / max(1e-6, 1 - generic_share))):
        s = sample_scene(_generic_species(rng), rng)
        s.species = ""
        items.append((None, s))
    return items


def pictures(items) -> np.ndarray:
    return np.stack([to_array(render(s)) for _, s in items])


def pictures_with_items(items) -> tuple[np.ndarray, np.ndarray]:
    """uint8 pictures (n, SIDE, SIDE, 3) and where each one's item shows (bool, n, SIDE, SIDE)."""
    arrays, masks, f = [], [], SIZE // SIDE
    for _, s in items:
        img, mask = render_with_item_mask(s)
        arrays.append(to_array(img))
        masks.append(mask.reshape(SIDE, f, SIDE, f).any(axis=(1, 3)))
    return np.stack(arrays), np.stack(masks)


def _labels(items) -> dict[str, torch.Tensor]:
    rows = [scene_labels(s) for _, s in items]
    return {k: torch.tensor([r[k] for r in rows]) for k in HEADS}


def _shifted(x: torch.Tensor, shift: int, gen: torch.Generator) -> torch.Tensor:
    """Each picture (with any extra channels, such as its item mask) moved by up to `shift` pixels (edges
    repeated) and mirrored with probability 1/2."""
    n, c, h, w = x.shape
    if shift:
        padded = torch.nn.functional.pad(x, (shift,) * 4, mode="replicate")
        offs = torch.randint(0, 2 * shift + 1, (n, 2), generator=gen)
        rows, cols = offs[:, :1] + torch.arange(h), offs[:, 1:] + torch.arange(w)
        x = padded[torch.arange(n)[:, None, None, None], torch.arange(c)[None, :, None, None],
                   rows[:, None, :, None], cols[:, None, None, :]]
    flip = torch.rand(n, generator=gen) < 0.5
    return torch.where(flip[:, None, None, None], x.flip(-1), x)


def _loss(out: dict[str, torch.Tensor], labels: dict[str, torch.Tensor], idx: torch.Tensor) -> torch.Tensor:
    total = sum(HEAD_WEIGHTS.get(k, 1.0) * torch.nn.functional.cross_entropy(out[k], labels[k][idx]) for k in HEADS)
    return total / sum(HEAD_WEIGHTS.get(k, 1.0) for k in HEADS)


def _map_loss(item_map: torch.Tensor, shown: torch.Tensor, items: torch.Tensor, positive: float) -> torch.Tensor:
    """Cross-entropy of the item map against its target: a cell is the picture's item where any pixel of the
    item shows in it (`shown`, the mask at input size), else "no item"."""
    f = shown.shape[-1] // item_map.shape[-1]
    cells = torch.nn.functional.max_pool2d(shown[:, None].float(), f)[:, 0] > 0.5
    target = torch.where(cells, items[:, None, None], torch.zeros_like(items)[:, None, None])
    weight = torch.full((item_map.shape[1],), float(positive))
    weight[0] = 1.0
    return torch.nn.functional.cross_entropy(item_map, target, weight=weight)


def fit_temperatures(logits: dict[str, torch.Tensor], labels: dict[str, torch.Tensor]) -> dict[str, float]:
    """Per head, the temperature on TEMPERATURE_GRID with the lowest negative log-likelihood."""
    out = {}
    for k in HEADS:
        nll = [float(torch.nn.functional.cross_entropy(logits[k] / t, labels[k])) for t in TEMPERATURE_GRID]
        out[k] = round(float(TEMPERATURE_GRID[int(np.argmin(nll))]), 4)
    return out


def train_judge(out_dir: Path, cfg: JudgeTrainConfig | None = None, log=None) -> dict:
    """Draw, train, calibrate, test; save judge.pt + judge.json into out_dir and return the JSON written."""
    from fieldguide.judge import FieldGuideJudge
    from fieldguide.judge_eval import evaluate_judge
    from fieldguide.judge_net import JudgeReader

    cfg = cfg or JudgeTrainConfig()
    say = log or (lambda _msg: None)
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t0, c0 = time.time(), time.process_time()
    train_items = draw(f"fieldguide-judge-train:{cfg.seed}", cfg.per_species, cfg.generic_share)
    cal_items = draw(f"fieldguide-judge-calibration:{cfg.seed}", cfg.calibration_per_species)
    test_items = draw(f"fieldguide-judge-test:{cfg.seed}", cfg.test_per_species)
    (x_train, m_train), x_cal = pictures_with_items(train_items), pictures(cal_items)
    t_draw = time.time() - t0
    say(f"drew {len(train_items)} training and {len(cal_items)} calibration pictures in {t_draw:.0f} s")
    y_train, y_cal = _labels(train_items), _labels(cal_items)
    x_all, m_all = torch.from_numpy(x_train), torch.from_numpy(m_train)  # uint8 / bool; a batch at a time to float
    model = JudgeNet(cfg.width, cfg.hidden, cfg.dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    gen = torch.Generator().manual_seed(cfg.seed)
    n = len(train_items)
    steps_per_epoch = math.ceil(n / cfg.batch)
    total = cfg.epochs * steps_per_epoch
    step, losses, t_train = 0, [], time.time()
    stopped_early = False
    for epoch in range(cfg.epochs):
        model.train()
        order = torch.randperm(n, generator=gen)
        for b in range(steps_per_epoch):
            if time.process_time() - c0 > cfg.time_limit_s:
                stopped_early = True
                break
            idx = order[b * cfg.batch:(b + 1) * cfg.batch]
            batch = _shifted(torch.cat([to_tensor(x_all[idx].numpy()), m_all[idx, None].float()], dim=1),
                             cfg.shift, gen)
            out = model(batch[:, :3], with_map=True)
            loss = _loss(out, y_train, idx) + cfg.item_map_weight * _map_loss(
                out[MAP], batch[:, 3] > 0.5, y_train["item"][idx], cfg.item_map_positive)
            for g in opt.param_groups:
                g["lr"] = cfg.lr * 0.5 * (1 + math.cos(math.pi * step / total))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            step += 1
        say(f"epoch {epoch + 1}/{cfg.epochs}: loss {np.mean(losses[-steps_per_epoch:]):.4f} "
            f"({time.time() - t_train:.0f} s)")
        if stopped_early:
            break
    t_train = time.time() - t_train
    temperatures = fit_temperatures(predict_logits(model, x_cal), y_cal)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out_dir / WEIGHTS_NAME)
    info = {"version": VERSION, "synthetic": True, "seed": cfg.seed, "config": asdict(cfg),
            "pictures": {"train": n, "calibration": len(cal_items), "test": len(test_items)},
            "steps_done": step, "steps_planned": total, "stopped_by_time_limit": stopped_early,
            "final_loss": round(float(np.mean(losses[-20:])), 4) if losses else None,
            "temperatures": temperatures, "torch": torch.__version__,
            "timings_s": {"draw": round(t_draw, 1), "train": round(t_train, 1)}}
    (out_dir / CONFIG_NAME).write_text(json.dumps(info, indent=1) + "\n")
    t_test = time.time()
    judge = FieldGuideJudge(reader=JudgeReader(out_dir))
    info["metrics_test"] = evaluate_judge(judge, [(sp, s, render(s)) for sp, s in test_items], seed=cfg.seed)
    info["timings_s"]["test"] = round(time.time() - t_test, 1)
    info["timings_s"]["total"] = round(time.time() - t0, 1)
    info["timings_s"]["cpu"] = round(time.process_time() - c0, 1)
    (out_dir / CONFIG_NAME).write_text(json.dumps(info, indent=1) + "\n")
    return info
