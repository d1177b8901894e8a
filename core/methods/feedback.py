"""Relevance feedback (Rocchio): marked photos move the query vector in embedding space; user-supplied photo
ids are checked against the index first."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.backends.base import l2_normalise
from core.contracts.errors import InputError


def rocchio(query: np.ndarray, relevant: np.ndarray | None = None, nonrelevant: np.ndarray | None = None,
            alpha: float = 1.0, beta: float = 0.75, gamma: float = 0.15) -> np.ndarray:
    """q' = alpha*q + beta*mean(relevant) - gamma*mean(nonrelevant), L2-normalised. Empty sets add nothing."""
    q = alpha * np.asarray(query, dtype=np.float32)
    if relevant is not None and len(relevant):
        q = q + beta * np.asarray(relevant, dtype=np.float32).mean(axis=0)
    if nonrelevant is not None and len(nonrelevant):
        q = q - gamma * np.asarray(nonrelevant, dtype=np.float32).mean(axis=0)
    return l2_normalise(q[None, :])[0]


def check_photo_ids(search, ids: Sequence[int]) -> list[int]:
    """`ids` as ints; InputError for the first one the search's index does not hold (user-supplied ids:
    relevance marks, example photos, photos marked in a dialogue)."""
    out = [int(i) for i in ids]
    index = getattr(search, "index", None)
    for n in out:
        if index is None or not index.contains(n):
            raise InputError(f"photo id {n} is not in the index", "use ids shown in the results")
    return out


def photo_vectors(search, ids: Sequence[int]) -> np.ndarray:
    """The stored vectors of user-supplied photo ids, checked first (InputError, never a bare KeyError)."""
    return search.vectors(check_photo_ids(search, ids))
