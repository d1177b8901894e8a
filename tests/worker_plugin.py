"""Backends for the worker-pool tests, registered by name in every worker process (as a world plug-in's are):
a judge that says which process answered, and a painter that logs what it drew, can be held until a gate file
exists, and dies in the middle of a call when asked to draw a crash."""
from __future__ import annotations

import os
import time
from pathlib import Path

from PIL import Image

from core.backends.base import GeneratedImage, JudgeAnswer
from core.contracts.world import World
from core.plugins import registry

GATE_WAIT_S = 60  # a held call gives up after this long (a test that never opens the gate still ends)


class PidJudge:
    model_id = "test-pid-judge"
    is_standin = True

    @classmethod
    def from_settings(cls, settings=None, spec: str = "", embedder=None) -> "PidJudge":
        return cls()

    def ask(self, request) -> JudgeAnswer:
        return JudgeAnswer("yes", {"Yes": -0.1, "No": -2.4}, reason=f"pid {os.getpid()}")


class GatePainter:
    """Solid pictures. A prompt with 'crash' ends the process (exit code 7); one with 'hold:PATH' waits until
    PATH exists; every picture drawn is logged, one prompt a line, in data_dir/painted.txt."""

    model_id = "test-gate-painter"
    is_standin = True

    def __init__(self, log: Path):
        self.log = log

    @classmethod
    def from_settings(cls, settings, spec: str = "") -> "GatePainter":
        return cls(settings.path("painted.txt"))

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage:
        if "crash" in prompt:
            os._exit(7)
        if "hold:" in prompt:
            gate = Path(prompt.split("hold:", 1)[1].split()[0])
            deadline = time.monotonic() + GATE_WAIT_S
            while not gate.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        with open(self.log, "a") as f:
            f.write(prompt + "\n")
        return GeneratedImage(Image.new("RGB", (size, size), (seed % 256, 40, 90)), prompt, seed, self.model_id, [])


def register() -> None:
    """One registration, as a world plug-in's: two backends that run in worker processes, and nothing else."""
    registry.register(World(name="test-workers", runs_model=True, backends={
        "judge": {"test-pid": "tests.worker_plugin:PidJudge.from_settings"},
        "generator": {"test-gate": "tests.worker_plugin:GatePainter.from_settings"}}))
