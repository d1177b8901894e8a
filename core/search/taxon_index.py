"""The rows of the filter columns ordered by taxon id, so that the rows of a few taxa are found by binary search
(a genus of 300 photos among a million in microseconds) instead of by testing every row's taxon against them
(several milliseconds at a million rows when the taxa's ids are spread out, as a genus's species are). Kept in
memory (8 bytes a photo), made when a taxon filter first needs it, and extended with the rows a catalog that
grew added (a merge, not a new sort)."""
from __future__ import annotations

import numpy as np


class TaxonIndex:
    def __init__(self, order: np.ndarray, sorted_taxa: np.ndarray):
        self.order, self.sorted_taxa = order, sorted_taxa  # row numbers by (taxon, row); their taxa

    @classmethod
    def build(cls, taxa: np.ndarray) -> "TaxonIndex":
        order = np.argsort(taxa, kind="stable").astype(np.int32 if len(taxa) < 2 ** 31 else np.int64)
        return cls(order, np.asarray(taxa)[order])

    def __len__(self) -> int:
        return len(self.order)

    def extended(self, taxa: np.ndarray) -> "TaxonIndex":
        """This index with the rows len(self) .. len(taxa) of `taxa` (the column grown) merged in."""
        start = len(self)
        tail = np.asarray(taxa[start:])
        if not len(tail):
            return self
        tail_order = np.argsort(tail, kind="stable")
        tail_taxa = tail[tail_order]
        # after the rows of equal taxon already there: the new rows have larger numbers, so the order stays by row
        at = np.searchsorted(self.sorted_taxa, tail_taxa, side="right")
        return TaxonIndex(np.insert(self.order, at, tail_order + start), np.insert(self.sorted_taxa, at, tail_taxa))

    def rows(self, wanted: np.ndarray) -> np.ndarray:
        """The rows whose taxon is in `wanted`, ascending."""
        wanted = np.unique(np.asarray(wanted, np.int64))
        # (0: a photo without a taxon) -- and in the column's own type: searching int64 keys in the int32 column
        # made numpy convert the whole column on every call (a millisecond at a million rows)
        wanted = wanted[(wanted > 0) & (wanted <= np.iinfo(self.sorted_taxa.dtype).max)].astype(self.sorted_taxa.dtype)
        lo = np.searchsorted(self.sorted_taxa, wanted, side="left")
        hi = np.searchsorted(self.sorted_taxa, wanted, side="right")
        counts = hi - lo
        total = int(counts.sum())
        if total == 0:
            return np.zeros(0, np.int64)
        # the positions lo[i] .. hi[i] of every taxon, end to end, without a loop in Python
        keep = counts > 0
        lo, counts = lo[keep], counts[keep]
        starts = np.repeat(lo - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        rows = self.order[np.arange(total) + starts].astype(np.int64)
        if len(lo) > 1:  # each taxon's rows are ascending; together they are sorted (a large set by a bitmap)
            if total * 16 > len(self):
                mask = np.zeros(len(self), bool)
                mask[rows] = True
                rows = np.flatnonzero(mask)
            else:
                rows.sort()
        return rows
