"""PNG plots for the evaluation report (matplotlib, Agg backend: no display needed)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def bar_charts(overall: Mapping[str, Mapping[str, float]], metrics: Sequence[str], out_dir: Path) -> list[Path]:
    """One bar chart per metric (methods on the x axis); returns the PNG paths."""
    plt = _pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    methods = list(overall)
    for m in metrics:
        fig, ax = plt.subplots(figsize=(max(3.5, 1.1 * len(methods) + 1.5), 3.2), dpi=100)
        vals = [overall[x][m] for x in methods]
        bars = ax.bar(methods, vals, color="#4c72b0")
        ax.bar_label(bars, labels=[f"{v:.3f}" for v in vals], fontsize=8)
        ax.set_ylim(0, max(1.0, max(vals, default=0) * 1.15))
        ax.set_title(m)
        ax.set_ylabel("mean over queries")
        ax.tick_params(axis="x", labelrotation=20, labelsize=8)
        fig.tight_layout()
        p = out_dir / f"bar_{_safe(m)}.png"
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)
    return paths


def dialogue_curves(summaries: Mapping[str, Mapping], out_dir: Path, k: int = 10) -> list[Path]:
    """Per-round curves of Hits@k and of BRI (budget cut after each round), one line per system."""
    plt = _pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for key, title, fname in ((f"hits@{k}", f"Hits@{k} per round (higher is better)", f"dialogue_hits_{k}.png"),
                              ("bri_per_round", "BRI per round (lower is better)", "dialogue_bri.png")):
        fig, ax = plt.subplots(figsize=(5, 3.2), dpi=100)
        for name, s in summaries.items():
            ys = s.get(key) or []
            if ys:
                ax.plot(range(len(ys)), ys, marker="o", label=name)
        ax.set_xlabel("round")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_title(title)
        if summaries:
            ax.legend(fontsize=8)
        fig.tight_layout()
        p = out_dir / fname
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)
    return paths
