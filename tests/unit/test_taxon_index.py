"""The taxon index (core.search.taxon_index) finds the rows of a set of taxa as a scan of the column does, made
at once or extended row block by row block."""
from __future__ import annotations

import numpy as np

from core.search.taxon_index import TaxonIndex


def _scan(taxa: np.ndarray, wanted) -> np.ndarray:
    wanted = [w for w in wanted if w > 0]
    return np.flatnonzero(np.isin(taxa, wanted))


def test_rows_of_taxa_equal_a_scan_whether_made_at_once_or_extended():
    rng = np.random.default_rng(3)
    taxa = rng.integers(0, 300, 20_000).astype(np.int32)  # 0: photos without a taxon
    whole = TaxonIndex.build(taxa)
    grown = TaxonIndex.build(taxa[:5_000])
    for end in (5_000, 5_001, 12_000, 20_000):  # catch-ups of one row, of many, and of none
        grown = grown.extended(taxa[:end])
    assert len(grown) == len(whole) == len(taxa)
    for wanted in ([7], [0], [0, 7], [299, 3, 3, 150], list(range(0, 300, 2)), list(range(300)), [1000], []):
        want = _scan(taxa, wanted)
        assert np.array_equal(whole.rows(np.array(wanted)), want), wanted
        assert np.array_equal(grown.rows(np.array(wanted)), want), wanted
    assert np.array_equal(grown.order, whole.order)  # the same order: by taxon, then by row
