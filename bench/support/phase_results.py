"""The results file of a bench/scale.py run: `<workdir>/results.jsonl`, one line per finished phase."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from bench.support.measure import Pauses


def write_result(workdir: Path, phase: str, data: dict, load_at_start=None) -> None:
    data = {"phase": phase, "at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "load_average": os.getloadavg(), "load_average_start": load_at_start, "pauses": Pauses.count, **data}
    with open(workdir / "results.jsonl", "a") as f:
        f.write(json.dumps(data) + "\n")


def results(workdir: Path) -> dict[str, dict]:
    path = workdir / "results.jsonl"
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["phase"]] = row
    return out
