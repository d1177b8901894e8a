"""What the engine needs from the photo catalog. storage/ implements it with SQLite; tests use fakes."""
from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Iterator, Protocol, Sequence

import numpy as np

from core.contracts.records import Filters, Photo

# what a source may say about a photo, and an ingest of the source again updates (Catalog.update_metadata)
METADATA_FIELDS = ("scientific_name", "common_name", "kingdom", "phylum", "class_name", "order", "family", "genus",
                   "observed_on", "latitude", "longitude", "license", "rights_holder", "caption")


@dataclass
class VectorSet:
    """A set of embeddings made by one model: vectors of different models are never mixed."""

    id: int
    model_id: str
    dim: int
    count: int = 0


@dataclass(frozen=True)
class CatalogState:
    """Whether the columns a filter reads changed: the largest photo id (photos are only appended, with ids
    above it), a count of edits and deletions of filtered columns (kept by the catalog whatever writes them),
    and a token of the catalog itself (its schema version and an identity drawn when it was made)."""

    max_id: int
    changes: int
    token: str


@dataclass
class FilterRows:
    """The filtered columns of consecutive photos, in id order (Catalog.filter_rows). A missing value is 0
    (date, taxon, licence) or NaN (place)."""

    ids: np.ndarray  # int64, ascending
    days: np.ndarray  # int32, the date as yyyymmdd
    taxa: np.ndarray  # int32, the taxon id (Catalog.taxon_ids names them)
    licences: np.ndarray  # int32, the licence id (Catalog.licence_ids)
    places: np.ndarray  # float64 (n, 2): latitude, longitude as the catalog keeps them (NaN: no place)


class Catalog(Protocol):
    def add_photos(self, photos: Sequence[Photo], run_id: int | None = None) -> list[int]:
        """Insert photos (sha256 must be new); returns their ids in order."""

    def update_metadata(self, updates: Sequence[tuple[int, Photo]], source: str = "") -> dict[int, list[str]]:
        """Write a source's metadata (METADATA_FIELDS, extra) onto photos already in the catalog by id; returns
        id -> the fields changed. Empty values never erase; replaced values go to extra["history"]."""

    def ids_for_hashes(self, hashes: Sequence[str]) -> dict[str, int]:
        """Known content hashes -> photo id."""

    def get_photos(self, ids: Sequence[int]) -> list[Photo]:
        """Photos in the order of `ids`; unknown ids are left out."""

    def untaxed(self, ids: Sequence[int]) -> set[int]:
        """Those of `ids` whose photo has no taxon name at any rank (a user's own photos, not identified)."""

    def text_matches(self, words: Sequence[Sequence[str]], limit: int
                     ) -> list[tuple[list[int], list[tuple[int, float, bool]]]]:
        """For each word (a sequence of its forms): the ids of the taxa whose names (scientific and common, of
        every rank) hold one of its forms, and up to `limit` photos whose own text (synonyms, observations'
        names, captions, places, tags, notes) holds one, best first: (id, score, whether among its names)."""

    def taxon_photos(self, taxon_ids: Sequence[int]) -> np.ndarray:
        """The ids of the photos of these taxa, ascending."""

    def count(self) -> int: ...

    def sources(self) -> set[str]: ...

    def count_outside(self, folder: str) -> int:
        """Photos whose file does not lie under `folder` (a path ending in '/')."""

    def count_fileless(self) -> int:
        """Photos kept without their file (a Camtrap DP medium whose file could not be had): no picture to
        search, found by their words only."""

    def filter_ids(self, filters: Filters) -> Sequence[int]:
        """Ids of the photos that pass every part of `filters`, ascending (SqlCatalog: an int64 numpy array,
        since a filter at a million photos selects 100k+ ids)."""

    def filter_state(self) -> CatalogState:
        """The state of the filtered columns now (one cheap query)."""

    def filter_rows(self, after_id: int, upto_id: int, chunk: int = 100_000) -> Iterator[FilterRows]:
        """The filtered columns of the photos with after_id < id <= upto_id, in chunks of at most `chunk`
        photos, in id order. A place is given as the bounds the box filter compares, so that a filter over
        these columns selects exactly what filter_ids selects."""

    def taxon_ids(self, name: str) -> np.ndarray:
        """Ids of the taxa having this name at any rank or as their common name, as filter_ids matches it."""

    def licence_ids(self, text: str) -> np.ndarray:
        """Ids of the licences the licence filter `text` matches, as filter_ids matches it."""

    def taxon_known(self, name: str) -> bool:
        """True if any photo has this name at any rank (case-insensitive)."""

    def places(self, limit: int = 2000) -> list[tuple[float, float]]:
        """(latitude, longitude) of at most `limit` photos that have a place, spread over the whole catalog
        (the page's map of where the photos are)."""

    def taxon_names(self, limit: int = 5000) -> list[tuple[str, str, int]]:
        """(name, rank, photos) for the catalog's taxon names at every rank and its common names, the `limit`
        most photographed; one entry per name whatever its case. rank: species, common name, genus, family,
        order, class, phylum or kingdom (the lowest rank the name is used at)."""

    def vector_set(self, model_id: str, dim: int) -> VectorSet:
        """The vector set of this model, created if new."""

    def indexed_ids(self, vector_set_id: int) -> set[int]: ...

    def indexed_id_array(self, vector_set_id: int) -> np.ndarray:
        """The same ids as indexed_ids, ascending, as an int64 array (8 bytes a photo, where a set of Python
        ints takes about 70: the start-up check compares millions of them)."""

    def mark_indexed(self, vector_set_id: int, ids: Sequence[int]) -> None: ...

    def bulk_writes(self, cache_mb: int) -> AbstractContextManager[None]:
        """Within the block, this catalog's writes (add_photos, mark_indexed) share one connection with a page
        cache of `cache_mb` (an ingest); each write is still its own transaction."""

    def unmark_indexed(self, vector_set_id: int, ids: Sequence[int]) -> None: ...

    def unindexed_ids(self, vector_set_id: int) -> list[int]:
        """Photos of the catalog that have no vector in this set yet."""

    def near_hashes(self, ids: Sequence[int]) -> dict[int, bytes]:
        """photo id -> its perceptual hashes (core.vectors.near_copies), for the photos of `ids` hashed so far
        (b'': could not be hashed)."""

    def unhashed_ids(self, limit: int | None = None) -> list[int]:
        """Photos not hashed yet, in id order."""

    def all_near_hashes(self) -> dict[int, bytes]:
        """Every photo's hashes (those that could not be hashed left out)."""

    def set_near_hashes(self, hashes: dict[int, bytes]) -> None: ...

    def start_ingest(self, source: str) -> int: ...

    def finish_ingest(self, run_id: int, summary: dict[str, Any]) -> None: ...
