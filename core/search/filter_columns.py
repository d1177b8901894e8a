"""The filter columns: every photo's date, month, taxon, licence and place as memory-mapped arrays beside the
index, from which numpy names a filter's pool in a few milliseconds at a million photos (SQLite took 20-100 ms
to name a pool of 100k+ photos from its indexes; the FAISS search it narrows takes 4-5 ms).

Exactly what the catalog's filter_ids selects: a taxon name is looked up in the catalog (its taxa table is
small) and its taxon ids are then found in the column; a licence likewise; dates compare as yyyymmdd; a box
compares each photo's latitude and longitude as the catalog keeps them (64-bit), edges included.
tests/integration/test_filter_columns.py compares the two on random catalogs.

Never stale: before every filter the catalog's state (largest id, a count of edits and deletions kept by
triggers, its token; one query) is compared with the state the columns were made at. A catalog that grew is
caught up by reading only its new photos (photos are appended with ids above the largest); one that was edited,
lost photos or is another database is read again whole (and files taken over from an earlier process are
counted against the catalog's photos, for a catalog restored from a copy). A small catch-up is done during the
search; a large one (the first use at a million photos: a few seconds) in a thread of its own, and until it is done the
catalog answers the filter (the same photos, slower) -- `ready(wait=True)` waits for it instead. Several
processes (the web app, an ingest, the CLI) share the files: one writes at a time (a lock file), files only
grow within a generation, and a rewrite starts a new generation, so a reader's mapped arrays stay valid."""
from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np

from core.contracts.catalog import Catalog, CatalogState
from core.contracts.records import Filters
from core.search.pool_memo import PoolMemo
from core.search.taxon_index import TaxonIndex

log = logging.getLogger(__name__)

FORMAT = 2  # 1: places as the R*Tree's four 32-bit bounds (before migration 0009)
COLUMNS = {"ids": np.int64, "days": np.int32, "month_bits": np.uint16, "taxa": np.int32, "licences": np.int32,
           "lat": np.float64, "lon": np.float64}
# (38 bytes a photo)
SYNC_ROWS = 50_000  # a catch-up of at most this many photos is done during the search that finds it
CHUNK = 100_000  # photos read from the catalog per query
MAX_NAMES = 256  # taxon and licence names remembered per state of the catalog


def day_number(day: date) -> int:
    """A date as the catalog's filter columns hold it (yyyymmdd)."""
    return day.year * 10_000 + day.month * 100 + day.day


def _member(col: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """col's values that are in `wanted`, as a mask (0 is "none" and never matches). (numpy's table method: a
    lookup over the span of `wanted`, some 1 ms at a million rows, where indexing a table by the column takes
    several)"""
    wanted = np.asarray(wanted, np.int64)
    wanted = wanted[wanted > 0]
    if not len(wanted):
        return np.zeros(len(col), bool)
    return np.isin(col, wanted, kind="table")


@dataclass
class _View:
    """One consistent set of the columns, as mapped at `state`."""

    state: CatalogState
    generation: int
    cols: dict[str, np.ndarray]
    dense: bool = False  # the ids are consecutive: row r holds id ids[0] + r
    base: TaxonIndex | None = None  # the taxon index of an earlier view of this generation (a prefix of these rows)
    _taxon_index: TaxonIndex | None = None
    # names looked up in the catalog at this state: a taxon's or licence's ids, whether a taxon has photos
    # (right for as long as the view: a new taxon's photos, or a photo given another, change the state)
    names: dict = field(default_factory=dict)
    pools: PoolMemo = field(default_factory=PoolMemo)  # the pools of recent filters at this state

    def taxon_index(self) -> TaxonIndex:
        idx = self._taxon_index
        if idx is None:
            taxa = self.cols["taxa"]
            idx = self.base.extended(taxa) if self.base is not None else TaxonIndex.build(taxa)
            self._taxon_index, self.base = idx, None
        return idx

    def follows(self, earlier: "_View | None") -> "_View":
        """This view, taking over the taxon index of an earlier view of the same files (extended when used)."""
        if earlier is not None and earlier.generation == self.generation and \
                len(earlier.cols["ids"]) <= len(self.cols["ids"]):
            self.base = earlier._taxon_index or earlier.base
        return self

    def looked_up(self, key: tuple, find):
        if key not in self.names:
            if len(self.names) >= MAX_NAMES:
                self.names.clear()
            self.names[key] = find()
        return self.names[key]


class FilterColumns:
    def __init__(self, catalog: Catalog, folder: Path, *, enabled: bool = True):
        self.catalog, self.folder = catalog, Path(folder)
        self.enabled = enabled and all(hasattr(catalog, m) for m in ("filter_state", "filter_rows", "taxon_ids",
                                                                      "licence_ids"))
        self.notices: list[str] = []  # what a user should know (a failure: the catalog answers filters)
        self._view: _View | None = None
        self._lock = threading.Lock()
        self._building: threading.Thread | None = None
        self._failed: CatalogState | None = None  # the state a build failed at (not tried again until it changes)

    # ---- answering a filter -----------------------------------------------------------------------
    def pool(self, filters: Filters, remembered: bool = True) -> np.ndarray | None:
        """The ids passing `filters`, ascending, as the catalog's filter_ids gives them; None when the columns
        are not ready (being made, failed, or turned off): the caller asks the catalog. `remembered`: from the
        pools of recent filters at this state of the catalog (read-only); False names it anew (bench/scale.py
        times that)."""
        if not self.enabled:
            return None
        view = self._current(wait=False)
        if view is None:
            return None
        if not remembered:
            return self._select(view, filters)
        return view.pools.get(filters, lambda: self._select(view, filters))

    def taxon_known(self, name: str) -> bool | None:
        """Whether any photo has this taxon name (as the catalog's taxon_known); None when the columns are not
        ready."""
        view = self._current(wait=False) if self.enabled else None
        if view is None:
            return None
        return view.looked_up(("known", name), lambda: bool(len(view.taxon_index().rows(self._taxa(view, name)))))

    def _taxa(self, view: _View, name: str) -> np.ndarray:
        return view.looked_up(("taxon", name), lambda: self.catalog.taxon_ids(name))

    def ready(self, wait: bool = True) -> bool:
        """Whether the columns match the catalog now; with `wait`, makes them so first."""
        return self.enabled and self._current(wait=wait) is not None

    def _select(self, view: _View, f: Filters) -> np.ndarray:
        c = view.cols
        rows = None  # the rows selected so far, ascending (None: every row)
        if f.taxon:  # the few rows of a taxon first, from the taxon index; the other parts are then read there only
            rows = view.taxon_index().rows(self._taxa(view, f.taxon))
        if f.ids is not None:
            wanted = np.unique(np.asarray(f.ids, dtype=np.int64))
            at = np.searchsorted(c["ids"], wanted)
            inside = at < len(c["ids"])
            at, wanted = at[inside], wanted[inside]
            at = at[c["ids"][at] == wanted]  # the rows of the ids the catalog has
            rows = at if rows is None else np.intersect1d(rows, at, assume_unique=True)

        def col(name: str) -> np.ndarray:
            return c[name] if rows is None else c[name][rows]

        parts = []
        if f.date_from:
            parts.append(col("days") >= day_number(f.date_from))
        if f.date_to:
            days = col("days")
            parts.append((days <= day_number(f.date_to)) & (days > 0))
        if f.license:
            parts.append(_member(col("licences"), view.looked_up(("licence", f.license),
                                                                 lambda: self.catalog.licence_ids(f.license))))
        if f.months:  # a photo's month is one bit (bit m for month m; none without a date)
            wanted = sum({1 << int(m) for m in f.months if 1 <= int(m) <= 12})
            parts.append((col("month_bits") & np.uint16(wanted)) != 0)
        if f.bbox:
            parts.append(self._in_box(col, *(float(v) for v in f.bbox)))
        if parts:
            mask = parts[0]
            for part in parts[1:]:
                mask &= part
            rows = np.flatnonzero(mask) if rows is None else rows[mask]
        if rows is None:
            return np.array(c["ids"])
        if view.dense:  # ids without gaps (the usual case): a row's id is the first id plus its row
            return rows.astype(np.int64) + int(c["ids"][0])
        return c["ids"].take(rows)  # (a boolean index of the ids is several times slower)

    @staticmethod
    def _in_box(col, west: float, south: float, east: float, north: float) -> np.ndarray:
        """As the catalog's box query: the place inside the box, edges included (a photo without a place, NaN,
        is in none); a box across 180 degrees is the two boxes either side. `col(name)`: the column of the rows
        looked at."""
        def lon(w: float, e: float) -> np.ndarray:
            return (col("lon") >= w) & (col("lon") <= e)

        inside = (col("lat") >= south) & (col("lat") <= north)
        return inside & (lon(west, east) if west <= east else lon(west, 180.0) | lon(-180.0, east))

    # ---- keeping them up to date --------------------------------------------------------------------
    def _current(self, wait: bool) -> _View | None:
        state = self.catalog.filter_state()
        view = self._view
        if view is not None and view.state == state:
            return view
        building = self._building
        if building is not None:  # the background reading: the catalog answers, or the caller waits for it
            if not wait:
                return None
            building.join()
        with self._lock:
            view = self._view
            if view is not None and view.state == state:
                return view
            if self._building is not None or (self._failed == state and not wait):
                return None
            meta, anew = self._read_meta(), False
            if meta is not None and self._matches(meta, state):
                mapped = self._map(meta)  # made by another process, or by this one before a restart
                # (a catalog restored or recovered without its triggers could match in state and still have
                # lost rows: their count, once per files taken over, tells)
                if mapped is not None and self.catalog.count() == len(mapped.cols["ids"]):
                    self._view = mapped.follows(self._view)
                    return mapped
                log.warning("filter columns in %s do not match the catalog's photos; made again", self.folder)
                anew = True
            appendable = meta is not None and not anew and self._appendable(meta, state)
            behind = state.max_id - (meta["max_id"] if appendable else 0)
            if wait or behind <= SYNC_ROWS:
                return self._make(state, blocking=wait, anew=anew)
            self._building = threading.Thread(target=self._make, args=(state, True, anew), daemon=True,
                                              name="filter-columns")
            log.info("filter columns: reading up to %d photos from the catalog in the background; the catalog "
                     "answers filters until then", behind)
            self._building.start()
            return None

    def _make(self, state: CatalogState, blocking: bool, anew: bool = False) -> _View | None:
        """Bring the files up to `state` (under the lock file) and map them; in the caller's thread or the
        background one."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(self.folder / "columns.lock", "w") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
                except BlockingIOError:  # another process is writing them: the catalog answers this search
                    return None
                view = self._map(self._write(state, anew=anew))
                if view is None:  # the files did not read back as their record says: written anew, once
                    state = self.catalog.filter_state()
                    view = self._map(self._write(state, anew=True))
                if view is None:
                    raise RuntimeError("the filter columns just written do not read back")
            self._view, self._failed = view.follows(self._view), None
            return view
        except Exception as exc:
            log.exception("filter columns could not be made in %s; filters are answered by the catalog", self.folder)
            if self._failed is None:
                self.notices.append(f"filters are answered by the catalog, more slowly: the filter columns could not "
                                    f"be made ({type(exc).__name__}; see the log)")
            self._failed = state
            return None
        finally:
            if threading.current_thread() is self._building:
                self._building = None

    def _write(self, state: CatalogState, anew: bool) -> dict:
        meta = self._read_meta()
        if not anew and meta is not None and self._matches(meta, state) and self._intact(meta):
            return meta  # another process made them meanwhile
        started = time.perf_counter()
        if not anew and meta is not None and self._appendable(meta, state) and self._intact(meta):
            gen, rows, after = meta["generation"], meta["rows"], meta["max_id"]
            for name, dtype in COLUMNS.items():  # what an interrupted append left past the rows is dropped
                os.truncate(self._file(gen, name), rows * np.dtype(dtype).itemsize)
        else:
            gen, rows, after = self._next_generation(meta), 0, 0
            for name in COLUMNS:
                self._file(gen, name).write_bytes(b"")
        before = rows
        files = {name: open(self._file(gen, name), "ab") for name in COLUMNS}
        try:
            for chunk in self.catalog.filter_rows(after, state.max_id, CHUNK):
                days = chunk.days
                bits = np.where(days > 0, np.left_shift(1, days // 100 % 100), 0)
                values = {"ids": chunk.ids, "days": days, "month_bits": bits, "taxa": chunk.taxa,
                          "licences": chunk.licences, "lat": chunk.places[:, 0], "lon": chunk.places[:, 1]}
                for name, dtype in COLUMNS.items():
                    files[name].write(np.ascontiguousarray(values[name], dtype=dtype).tobytes())
                rows += len(chunk.ids)
        finally:
            for fh in files.values():
                fh.close()
        meta = {"format": FORMAT, "generation": gen, "rows": rows, "max_id": state.max_id, "changes": state.changes,
                "token": state.token}
        tmp = self.folder / "columns.json.tmp"
        tmp.write_text(json.dumps(meta))
        os.replace(tmp, self.folder / "columns.json")
        for old in self.folder.glob("g*-*.bin"):  # earlier generations (a reader's maps keep their pages)
            if not old.name.startswith(f"g{gen}-"):
                old.unlink(missing_ok=True)
        log.info("filter columns: %d photos read from the catalog in %.2f s (%s; %d photos in all)", rows - before,
                 time.perf_counter() - started, "caught up" if before else "made anew", rows)
        return meta

    # ---- the files ----------------------------------------------------------------------------------
    def _file(self, gen: int, name: str) -> Path:
        return self.folder / f"g{gen}-{name}.bin"

    def _next_generation(self, meta: dict | None) -> int:
        """One above every generation on disk, files of an older format included (FORMAT 1 had other columns):
        never the files a reader of another process may have mapped, and the older files are removed after."""
        seen = [int(meta["generation"])] if meta is not None else []
        for path in self.folder.glob("g*-*.bin"):
            head = path.name[1:].split("-", 1)[0]
            if head.isdigit():
                seen.append(int(head))
        return max(seen, default=0) + 1

    def _read_meta(self) -> dict | None:
        try:
            meta = json.loads((self.folder / "columns.json").read_text())
        except (OSError, ValueError):
            return None
        return meta if isinstance(meta, dict) and meta.get("format") == FORMAT else None

    @staticmethod
    def _matches(meta: dict, state: CatalogState) -> bool:
        return (meta["max_id"], meta["changes"], meta["token"]) == (state.max_id, state.changes, state.token)

    @staticmethod
    def _appendable(meta: dict, state: CatalogState) -> bool:
        """The catalog only grew since the columns were made: what they hold is still right."""
        return (meta["changes"], meta["token"]) == (state.changes, state.token) and meta["max_id"] <= state.max_id

    def _intact(self, meta: dict) -> bool:
        try:
            return all(self._file(meta["generation"], name).stat().st_size >= meta["rows"] * np.dtype(t).itemsize
                       for name, t in COLUMNS.items())
        except OSError:
            return False

    def _map(self, meta: dict) -> _View | None:
        """The columns of `meta` mapped read-only, or None if the files do not hold them."""
        if not self._intact(meta):
            return None
        rows, cols = meta["rows"], {}
        for name, dtype in COLUMNS.items():
            # (as plain arrays over the map, so that what is taken from them is a plain array too)
            cols[name] = (np.memmap(self._file(meta["generation"], name), dtype=dtype, mode="r", shape=(rows,))
                          .view(np.ndarray) if rows else np.zeros(0, dtype))
        ids = cols["ids"]
        if rows and (int(ids[-1]) != meta["max_id"] or not bool(np.all(ids[1:] > ids[:-1]))):
            log.warning("filter columns in %s do not match their record; made again", self.folder)
            return None
        state = CatalogState(max_id=meta["max_id"], changes=meta["changes"], token=meta["token"])
        # (strictly ascending ids spanning exactly as many values as there are rows have no gap)
        dense = bool(rows) and int(ids[-1]) - int(ids[0]) + 1 == rows
        return _View(state=state, generation=meta["generation"], cols=cols, dense=dense)
