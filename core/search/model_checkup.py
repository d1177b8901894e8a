"""The doctor's verdict where users look: the checks `python app.py doctor` runs (core.doctor) are run once, in the
background, on each real model the web app loads (not on the offline stand-ins, nor on backends behind a server,
whose checks cost calls: `doctor` checks those). A model that fails its check is named in the banner
("SmolVLM-256M-Instruct answers like random weights: its checks are not used"), and a judge that fails has its
checks shown as not checked: every answer is an abstention whose reason says why, so no photo gets a score on
the checks-passed scale (core.methods.cached_backends reads
`Backends.unusable`).

The generator's check draws one picture and tells nothing of its weights, so it is not run here."""
from __future__ import annotations

import logging
import threading
from typing import Any

from core.backends.registry import runs_model
from core.doctor import ProbeResult, probe

log = logging.getLogger(__name__)
CHECKED = ("embedder", "judge", "llm", "captioner")  # the kinds whose check can find random weights
# what a failed model's work means for the user, by kind (the banner's words)
CONSEQUENCE = {"judge": "its checks are not used", "embedder": "its rankings are not meaningful",
               "llm": "its written questions and rewrites are not meaningful",
               "captioner": "its captions are not meaningful"}


def local_model(kind: str, setting: str) -> bool:
    """Whether backend `setting` of `kind` runs a model on this machine (in the process or a worker)."""
    return runs_model(kind, setting) or setting.startswith("transformers:") or setting == "llama_cpp"


def model_name(setting: str) -> str:
    """'transformers:HuggingFaceTB/SmolVLM-256M-Instruct' -> 'SmolVLM-256M-Instruct'."""
    return str(setting).rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]


class ModelCheckup:
    """Checks each real model once, in a thread of its own, after `Backends` built it (`loaded` is its
    on_load). `done` is set whenever no check is running; `version` grows with every verdict (the banner is
    rebuilt when it changes)."""

    def __init__(self, backends: Any):
        self.backends = backends
        self.results: dict[str, ProbeResult] = {}
        self.done = threading.Event()
        self.done.set()
        self.version = 0
        self._started: set[str] = set()
        self._running = 0
        self._lock = threading.Lock()

    def loaded(self, kind: str, backend: Any) -> None:
        """Start the check of backend `kind` (once) when it is a real model; called by Backends after a build."""
        if kind not in CHECKED or getattr(backend, "is_standin", False):
            return
        setting = str(getattr(self.backends.settings, kind))
        if not local_model(kind, setting):
            return
        with self._lock:
            if kind in self._started:
                return
            self._started.add(kind)
            self._running += 1
            self.done.clear()
        threading.Thread(target=self._check, args=(kind,), name=f"model-checkup-{kind}", daemon=True).start()

    def _check(self, kind: str) -> None:
        try:
            result = probe(self.backends, kind)  # never raises for the backend's fault: a failed row
        except Exception:  # a fault of the check itself: no verdict, logged
            log.exception("the background check of the %s backend could not run", kind)
            result = None
        with self._lock:
            if result is not None:
                self.results[kind] = result
                if not result.ok:
                    self.backends.unusable[kind] = self.sentence([kind])
                    log.warning("background check: %s", self.backends.unusable[kind])
                else:
                    log.info("background check: the %s backend %s passed (%s)", kind, result.setting, result.detail)
            self.version += 1
            self._running -= 1
            if self._running == 0:
                self.done.set()

    def failed(self) -> list[str]:
        """The kinds whose check failed, in CHECKED order."""
        return [k for k in CHECKED if k in self.results and not self.results[k].ok]

    def sentence(self, kinds: list[str]) -> str:
        """One sentence per model (a model serving two kinds is named once): what it does and what that means."""
        settings = self.backends.settings
        by_model: dict[str, list[str]] = {}
        for kind in kinds:
            by_model.setdefault(model_name(getattr(settings, kind)), []).append(kind)
        out = []
        for name, its in by_model.items():
            details = [self.results[k].detail for k in its if k in self.results]
            how = ("answers like random weights" if all(d.startswith("not usable") for d in details)
                   else "failed its check")
            out.append(f"{name} {how}: {', '.join(CONSEQUENCE[k] for k in its)}.")
        return " ".join(out)

    def banner(self) -> str:
        """The banner's words for every model that failed its check ('' when none did)."""
        with self._lock:
            failed = self.failed()
            return self.sentence(failed) if failed else ""
