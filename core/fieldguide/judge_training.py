"""Training of the field-guide judge network (judge_net.py) on freshly drawn world pictures.

Three disjoint sets of pictures, each drawn from its own seed: training (the world's species plus a share of
invented colour schemes, so that colour heads learn colours rather than species), calibration (held out; one
temperature per head is fitted on it by minimising the negative log-likelihood) and test (held out; accuracy and
ECE per question type, asked through the judge, go into the JSON sidecar). Deterministic for a seed on CPU."""
from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from core.fieldguide.encoder import HEADS, scene_labels
from core.fieldguide.judge_net import (CONFIG_NAME, VERSION, WEIGHTS_NAME, JudgeNet, predict_logits, to_array,
                                      to_tensor)
from core.fieldguide.render import render
from core.fieldguide.scene import Scene, sample_scene
from core.fieldguide.species import SPECIES, Species
from core.fieldguide.training import _generic_species

TEMPERATURE_GRID = np.exp(np.linspace(math.log(0.2), math.log(8.0), 161))
# Heads the judge leans on most get more weight in the loss (the colour heads are many and easy).
HEAD_WEIGHTS = {"species": 3.0, "behaviour": 3.0, "item": 3.0, "view": 2.0, "pose": 2.0, "count": 1.0}


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
    epochs: int = 10
    lr: float = 3e-3
    weight_decay: float = 1e-4
    shift: int = 6  # random translation in pixels (at the network's input size) during training
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


def _labels(items) -> dict[str, torch.Tensor]:
    rows = [scene_labels(s) for _, s in items]
    return {k: torch.tensor([r[k] for r in rows]) for k in HEADS}


def _shifted(x: torch.Tensor, shift: int, gen: torch.Generator) -> torch.Tensor:
    """Each picture moved by up to `shift` pixels (edges repeated) and mirrored with probability 1/2."""
    if shift:
        padded = torch.nn.functional.pad(x, (shift,) * 4, mode="replicate")
        offs = torch.randint(0, 2 * shift + 1, (len(x), 2), generator=gen).tolist()
        side = x.shape[-1]
        x = torch.stack([padded[i, :, a:a + side, b:b + side] for i, (a, b) in enumerate(offs)])
    flip = torch.rand(len(x), generator=gen) < 0.5
    return torch.where(flip[:, None, None, None], x.flip(-1), x)


def _loss(out: dict[str, torch.Tensor], labels: dict[str, torch.Tensor], idx: torch.Tensor) -> torch.Tensor:
    total = sum(HEAD_WEIGHTS.get(k, 1.0) * torch.nn.functional.cross_entropy(out[k], labels[k][idx]) for k in HEADS)
    return total / sum(HEAD_WEIGHTS.get(k, 1.0) for k in HEADS)


def fit_temperatures(logits: dict[str, torch.Tensor], labels: dict[str, torch.Tensor]) -> dict[str, float]:
    """Per head, the temperature on TEMPERATURE_GRID with the lowest negative log-likelihood."""
    out = {}
    for k in HEADS:
        nll = [float(torch.nn.functional.cross_entropy(logits[k] / t, labels[k])) for t in TEMPERATURE_GRID]
        out[k] = round(float(TEMPERATURE_GRID[int(np.argmin(nll))]), 4)
    return out


def recalibrate(out_dir: Path, cfg: JudgeTrainConfig | None = None) -> dict[str, float]:
    """Fit the temperatures of saved weights again on the calibration pictures (same draw as training) and
    write them into the sidecar; returns them."""
    cfg = cfg or JudgeTrainConfig()
    side = json.loads((Path(out_dir) / CONFIG_NAME).read_text())
    model = JudgeNet(cfg.width, cfg.hidden, cfg.dropout)
    model.load_state_dict(torch.load(Path(out_dir) / WEIGHTS_NAME, map_location="cpu", weights_only=True))
    items = draw(f"fieldguide-judge-calibration:{cfg.seed}", cfg.calibration_per_species)
    side["temperatures"] = fit_temperatures(predict_logits(model, pictures(items)), _labels(items))
    (Path(out_dir) / CONFIG_NAME).write_text(json.dumps(side, indent=1) + "\n")
    return side["temperatures"]


def train_judge(out_dir: Path, cfg: JudgeTrainConfig | None = None, log=None) -> dict:
    """Draw, train, calibrate, test; save judge.pt + judge.json into out_dir and return the JSON written."""
    from core.fieldguide.judge import FieldGuideJudge
    from core.fieldguide.judge_eval import evaluate_judge
    from core.fieldguide.judge_net import JudgeReader

    cfg = cfg or JudgeTrainConfig()
    say = log or (lambda _msg: None)
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t0, c0 = time.time(), time.process_time()
    train_items = draw(f"fieldguide-judge-train:{cfg.seed}", cfg.per_species, cfg.generic_share)
    cal_items = draw(f"fieldguide-judge-calibration:{cfg.seed}", cfg.calibration_per_species)
    test_items = draw(f"fieldguide-judge-test:{cfg.seed}", cfg.test_per_species)
    x_train, x_cal = pictures(train_items), pictures(cal_items)
    t_draw = time.time() - t0
    say(f"drew {len(train_items)} training and {len(cal_items)} calibration pictures in {t_draw:.0f} s")
    y_train, y_cal = _labels(train_items), _labels(cal_items)
    x_all = to_tensor(x_train)
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
            loss = _loss(model(_shifted(x_all[idx], cfg.shift, gen)), y_train, idx)
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
