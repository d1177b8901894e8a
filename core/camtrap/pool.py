"""The camera-trap side of a search's pool: CamtrapFilters -> the photo ids they allow, intersected with the
pool of the other filters (core.search.corpus). The store answers deployment, detection category, species
and classified-by (one query); the time of day is worked out here from the sun (core.camtrap.daylight) for
the frames whose place and trusted time the store knows; empty frames (a detector looked and found nothing at
or above detection_threshold) are hidden unless include_empty is set. Each narrowing that leaves photos out
for a reason the user may not expect says so in a notice."""
from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from core.camtrap.daylight import TIMES_OF_DAY, times_of_day
from core.contracts.camtrap import CATEGORIES, CLASSIFIED, CamtrapFilters
from core.contracts.errors import InputError, NotFoundError

log = logging.getLogger(__name__)


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
    if len(filters.deployments) > 10_000 or any(len(d) > 200 for d in filters.deployments) \
            or len(filters.species) > 200:
        raise InputError("The camera-trap filter is too long",
                         "name at most 10,000 deployments of up to 200 characters")


class CamtrapPool:
    """The empty frames and every timed frame's time of day are worked out once per store version (the store's
    `version()`: any write, detection or ingest changes it) and kept between searches."""

    def __init__(self, store, threshold: float):
        self.store, self.threshold = store, threshold
        self._kept: dict[str, tuple] = {}  # what -> (store version, value)

    def _cached(self, what: str, make: Callable):
        version = self.store.version() if callable(getattr(self.store, "version", None)) else None
        kept = self._kept.get(what)
        if version is not None and kept is not None and kept[0] == version:
            return kept[1]
        value = make()
        if version is not None:
            self._kept[what] = (version, value)
        return value

    def narrow(self, pool: np.ndarray | None, filters: CamtrapFilters | None, all_ids: Callable[[], np.ndarray],
               hidden: list[np.ndarray] | None = None) -> tuple[np.ndarray | None, list[str]]:
        """The pool after the camera-trap filters (None: every indexed photo), and the notices to show. Empty
        frames the search's filters let in are hidden with a notice (they were its candidates); when no filter
        narrowed the pool and `hidden` is given, the empty frames go into it instead of a notice, for the caller
        to say only as many as would have been among the results shown (`hidden_among`)."""
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
            pool = allowed if pool is None else _within(_sorted(np.asarray(pool, dtype=np.int64)), allowed)
        if filters.times_of_day:
            pool, left_out = self._times_of_day(pool, set(filters.times_of_day), all_ids)
            if left_out:
                notices.append(f"{left_out} photo{'s' if left_out != 1 else ''} without a known place or a trusted "
                               "capture time left out by the time-of-day filter (a deployments CSV with latitude "
                               "and longitude gives a card's frames their place: `python app.py ingest FOLDER "
                               "--deployments FILE.csv`)")
        if not filters.include_empty:
            empty = self._cached(f"empty@{self.threshold}", lambda: self.store.empty_ids(self.threshold))
            if len(empty):
                unfiltered = pool is None
                before = _sorted(np.asarray(all_ids() if pool is None else pool, dtype=np.int64))
                found = _found(before, empty)
                kept, left_out = before[~found], before[found]
                if len(left_out) and unfiltered and hidden is not None:
                    hidden.append(left_out)  # said later, if they would have been among the results shown
                elif len(left_out):
                    notices.append(empty_notice(len(left_out)))
                pool = kept
        return pool, notices

    def _times_of_day(self, pool: np.ndarray | None, wanted: set[str],
                      all_ids: Callable[[], np.ndarray]) -> tuple[np.ndarray, int]:
        timed, by_word = self._cached("times of day", self._every_time_of_day)
        candidates = _sorted(np.asarray(all_ids() if pool is None else pool, dtype=np.int64))
        keep = np.sort(np.concatenate([by_word[w] for w in sorted(wanted)]))  # disjoint: one word a frame
        return _within(keep, candidates), max(0, len(candidates) - len(_within(timed, candidates)))

    def _every_time_of_day(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The sorted ids of every frame whose place and trusted time are known, and those of each time of day
        (the sun worked out once per place and day: core.camtrap.daylight.times_of_day)."""
        places: dict[tuple[float, float], list[tuple[int, float]]] = {}
        for pid, epoch, lat, lon in self.store.timed_places(None):
            places.setdefault((lat, lon), []).append((pid, epoch))
        words: dict[str, list[int]] = {w: [] for w in TIMES_OF_DAY}
        for (lat, lon), frames in places.items():
            for (pid, _), word in zip(frames, times_of_day(lat, lon, [e for _, e in frames])):
                if word is not None:
                    words[word].append(pid)
        by_word = {w: np.sort(np.asarray(v, dtype=np.int64)) for w, v in words.items()}
        return np.sort(np.concatenate(list(by_word.values()))), by_word

def _sorted(ids: np.ndarray) -> np.ndarray:
    return ids if len(ids) < 2 or bool(np.all(ids[1:] >= ids[:-1])) else np.sort(ids)


def _found(ids: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Which of `ids` are in sorted `candidates` (a binary search each: no hashing, no new sort)."""
    if not len(ids) or not len(candidates):
        return np.zeros(len(ids), dtype=bool)
    at = np.minimum(np.searchsorted(candidates, ids), len(candidates) - 1)
    return candidates[at] == ids


def _within(ids: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    return ids[_found(ids, candidates)]


def empty_notice(hidden: int) -> str:
    return (f"{hidden:,} empty frame{'s' if hidden != 1 else ''} hidden (a detector found nothing in "
            f"{'them' if hidden != 1 else 'it'}; --include-empty shows them)")


def hidden_among(corpus, vector: np.ndarray | None, shown: list[int], hidden: np.ndarray, k: int) -> int:
    """How many of the `hidden` empty frames would have been among the `shown` results of a search for `vector`
    (the query's words, as the first stage embeds them) asking for `k`: all of them when fewer than k were
    shown (there was room) or there is no vector to compare with (a search by example photos alone: said in
    full rather than guessed); else those at least as close to the vector as the least close photo shown
    (each scored as the search scores it: the frame, or its best animal crop)."""
    hidden = _sorted(np.asarray(hidden, dtype=np.int64))
    if not len(hidden):
        return 0
    if len(shown) < k or vector is None:
        return len(hidden)
    scored = corpus.rank_vector(vector, len(shown), np.sort(np.asarray(shown, dtype=np.int64)))
    if not scored:
        return len(hidden)
    floor = min(s for _, s in scored)
    return sum(1 for _, s in corpus.rank_vector(vector, k, hidden) if s >= floor)


def search_pool(corpus, filters, run, hidden: list[np.ndarray] | None = None):
    """The search's pool (core.search.corpus.Corpus.pool), its camera-trap notices said through `run`; empty
    frames hidden from an unfiltered search go into `hidden` (CamtrapPool.narrow)."""
    if getattr(corpus, "camtrap", None) is None:
        return corpus.pool(filters)
    notices: list[str] = []
    out = corpus.pool(filters, notices, hidden)
    for text in notices:
        run.notice(text)
    return out
