"""The camera-trap side of a search's pool: CamtrapFilters -> the photo ids they allow, intersected with the
pool of the other filters (core.search.corpus). The store answers deployment, detection category, species
and classified-by (one query); the time of day is worked out here from the sun (core.camtrap.daylight) for
the frames whose place and trusted time the store knows; empty frames (a detector looked and found nothing at
or above detection_threshold) are hidden unless include_empty is set. Each narrowing that leaves photos out
for a reason the user may not expect says so in a notice."""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from core.camtrap.daylight import TIMES_OF_DAY, time_of_day
from core.contracts.camtrap import CATEGORIES, CLASSIFIED, CamtrapFilters
from core.contracts.errors import InputError, NotFoundError

log = logging.getLogger(__name__)
MEMO_LIMIT = 2_000_000  # frames whose time of day is remembered (a frame's place and time rarely change)


def check(filters: CamtrapFilters) -> None:
    """InputError for a value no camera-trap filter takes, naming the allowed ones."""
    wrong = [t for t in filters.times_of_day if t not in TIMES_OF_DAY]
    if wrong:
        raise InputError(f"Time of day {', '.join(map(repr, wrong))} is not one of {', '.join(TIMES_OF_DAY)}",
                         "e.g. --time-of-day night or --time-of-day dawn,dusk")
    wrong = [c for c in filters.categories if c not in CATEGORIES]
    if wrong:
        raise InputError(f"Detection category {', '.join(map(repr, wrong))} is not one of {', '.join(CATEGORIES)}",
                         "e.g. --category animal or --category person,vehicle")
    if filters.classified not in CLASSIFIED:
        raise InputError(f"Classified by {filters.classified!r} is not human, machine or none",
                         "e.g. --classified human (identified by a person), machine, or none (not identified)")
    if len(filters.deployments) > 10_000 or any(len(d) > 200 for d in filters.deployments) or len(filters.species) > 200:
        raise InputError("The camera-trap filter is too long", "name at most 10,000 deployments of up to 200 characters")


class CamtrapPool:
    def __init__(self, store, threshold: float):
        self.store, self.threshold = store, threshold
        self._memo: dict[tuple, str | None] = {}  # (photo id, epoch, lat, lon) -> time of day
        self._lock = threading.Lock()

    def narrow(self, pool: np.ndarray | None, filters: CamtrapFilters | None,
               all_ids: Callable[[], np.ndarray]) -> tuple[np.ndarray | None, list[str]]:
        """The pool after the camera-trap filters (None: every indexed photo), and the notices to show."""
        filters = filters or CamtrapFilters()
        check(filters)
        notices: list[str] = []
        if filters.deployments:
            known = {d.key for d in self.store.deployments()}
            unknown = [d for d in filters.deployments if d not in known]
            if unknown:
                some = ", ".join(sorted(known)[:20]) or "none yet (ingest a camera card or a Camtrap DP package)"
                raise NotFoundError(f"No deployment named {', '.join(map(repr, unknown))}",
                                    f"the catalog's deployments are: {some}")
        allowed = self.store.camtrap_ids(filters, self.threshold)
        if allowed is not None:
            pool = allowed if pool is None else np.intersect1d(pool, allowed, assume_unique=True)
        if filters.times_of_day:
            pool, left_out = self._times_of_day(pool, set(filters.times_of_day), all_ids)
            if left_out:
                notices.append(f"{left_out} photo{'s' if left_out != 1 else ''} without a known place or a trusted "
                               "capture time left out by the time-of-day filter")
        if not filters.include_empty:
            empty = self.store.empty_ids(self.threshold)
            if len(empty):
                before = all_ids() if pool is None else pool
                kept = np.setdiff1d(before, empty, assume_unique=True)
                hidden = len(before) - len(kept)
                if hidden:
                    notices.append(f"{hidden:,} empty frame{'s' if hidden != 1 else ''} hidden (a detector found "
                                   "nothing in them; --include-empty shows them)")
                pool = kept
        return pool, notices

    def _times_of_day(self, pool: np.ndarray | None, wanted: set[str],
                      all_ids: Callable[[], np.ndarray]) -> tuple[np.ndarray, int]:
        frames = self.store.timed_places(None if pool is None else [int(i) for i in pool])
        keep, known = [], 0
        with self._lock:
            if len(self._memo) > MEMO_LIMIT:
                self._memo.clear()
            for pid, epoch, lat, lon in frames:
                key = (pid, epoch, lat, lon)
                tod = self._memo.get(key, "?")
                if tod == "?":
                    tod = self._memo[key] = time_of_day(lat, lon, epoch)
                known += tod is not None
                if tod in wanted:
                    keep.append(pid)
        candidates = len(all_ids()) if pool is None else len(pool)
        return np.unique(np.asarray(keep, dtype=np.int64)), max(0, candidates - known)


def search_pool(corpus, filters, run):
    """The search's pool (core.search.corpus.Corpus.pool), its camera-trap notices said through `run`."""
    if getattr(corpus, "camtrap", None) is None:
        return corpus.pool(filters)
    notices: list[str] = []
    out = corpus.pool(filters, notices)
    for text in notices:
        run.notice(text)
    return out
