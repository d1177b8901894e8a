"""Making sure there is something to search before the first query: the configured corpus, or (with the
offline stand-in models) the demo world of the world plug-in the composition root registered (the synthetic
field guide). `Preparation` runs that once, in the background
for the web app, and reports its progress ("drawing the demo world: 120/480 pictures")."""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable

from core.contracts.errors import EcoLensError
from core.plugins.registry import demo_world

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]  # (what, done, total)
ADDING = "adding your photos"  # the ingest phase of a configured corpus: the photos added so far are searchable


def prepare_corpus(settings, catalog, corpus, embedder_is_standin: bool, ingest: Callable,
                   progress: Progress | None = None) -> list[str]:
    """Build the catalog on first use and return notices for the user. `ingest(path, progress, **card)` runs an
    ingest (core.ingest.ingestor.Ingestor.run; `card`: the files beside a camera card, e.g. detections=FILE);
    `progress(what, done, total)` follows both building and embedding."""
    step = progress or (lambda what, done, total: None)
    notices: list[str] = []
    if catalog.count() == 0:
        if settings.corpus:
            for path in corpus_files(settings, step):
                report = ingest(path, lambda d, t: step(ADDING, d, t))
                notices.append(f"built the catalog from {path}: {report.added} photos")
                notices += getattr(report, "vector_notes", [])  # precomputed vectors beside a hub dataset
        elif embedder_is_standin and demo_world() is not None:
            world = demo_world()
            folder = settings.path(world.demo_folder)
            csv_path = world.build_demo(folder, seed=0, progress=lambda d, t: step("drawing the demo world", d, t))
            report = ingest(csv_path, lambda d, t: step("indexing the demo world", d, t))
            notices.append(f"built the synthetic {world.title or world.name} world into {folder}: "
                           f"{report.added} photos")
            if world.build_card is not None:
                notices.append(_prepare_card(world, folder, ingest, step))
        corpus.reload()
    return notices


def _prepare_card(world, folder, ingest: Callable, step: Progress) -> str:
    """Draw the world's camera-trap side (a camera card inside its demo folder) and ingest it as a card."""
    card = world.build_card(folder, seed=0, progress=lambda d, t: step("drawing the camera-trap demo", d, t))
    beside = {"detections": card.detections, "deployments": card.deployments}
    report = ingest(card.folder, lambda d, t: step("indexing the camera-trap demo", d, t),
                    **{k: v for k, v in beside.items() if v})
    return f"built its synthetic camera-trap card into {card.folder}: {report.added} frames"


def corpus_files(settings, progress: Progress | None = None, corpus: str | None = None) -> list[str]:
    """The files or folder `corpus` (default: the corpus setting) names: a hub dataset is downloaded first
    (with progress) and is its parquet files."""
    from core.ingest import hub_dataset

    corpus = settings.corpus if corpus is None else corpus
    if hub_dataset.is_hub(corpus):
        return [str(p) for p in hub_dataset.fetch(settings, corpus, progress)]
    return [corpus]


def amount(what: str, done: int, total: int) -> str:
    """'1.2 of 1.7 GB' for a download (what starts with 'downloading'), else '120 of 480'."""
    if what.startswith("downloading") and total:
        unit, size = ("GB", 1e9) if total >= 1e9 else ("MB", 1e6)
        return f"{done / size:.1f} of {total / size:.1f} {unit}"
    return f"{done} of {total}"


PREPARED = "the photo collection is prepared"  # the log line at the end of a preparation (tests wait on it)


@dataclass
class Preparation:
    """Runs `work(progress) -> notices` once and tells anyone who asks how far it got."""

    work: Callable[[Progress], list[str]]
    what: str = "starting"
    done: int = 0
    total: int = 0
    notices: list[str] = field(default_factory=list)
    error: str = ""
    _finished: threading.Event = field(default_factory=threading.Event)

    def _step(self, what: str, done: int, total: int) -> None:
        self.what, self.done, self.total = what, done, total

    def run(self) -> None:
        try:
            self.notices = list(self.work(self._step))
            log.info("%s: %s", PREPARED, "; ".join(self.notices) or "nothing to do")
        except EcoLensError as exc:
            log.error("preparing the photo collection failed: %s", exc)
            self.error = str(exc)
        except Exception as exc:  # reported to every user of the app, and logged with its traceback
            log.exception("preparing the photo collection failed")
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self._finished.set()

    def start(self) -> "Preparation":
        threading.Thread(target=self.run, daemon=True, name="prepare-corpus").start()
        return self

    @property
    def ready(self) -> bool:
        return self._finished.is_set() and not self.error

    @property
    def searchable(self) -> bool:
        """While the user's photos are being added: the ones embedded so far (saved at each index checkpoint,
        checkpoint_s) are searched; the page keeps showing the progress."""
        return not self._finished.is_set() and self.what == ADDING and self.done > 0

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    def status(self) -> str:
        """One sentence for the page: progress, failure, or "" when ready."""
        if self.error:
            return f"The photo collection could not be prepared: {self.error}"
        if self._finished.is_set():
            return ""
        if self.total:
            return f"Preparing the photo collection, {self.what}: {amount(self.what, self.done, self.total)}…"
        return "Preparing the photo collection…"
