"""Relevance feedback (Rocchio): marked photos move the query vector in embedding space."""
from __future__ import annotations

import numpy as np

from core.backends.base import l2_normalise


def rocchio(query: np.ndarray, relevant: np.ndarray | None = None, nonrelevant: np.ndarray | None = None,
            alpha: float = 1.0, beta: float = 0.75, gamma: float = 0.15) -> np.ndarray:
    """q' = alpha*q + beta*mean(relevant) - gamma*mean(nonrelevant), L2-normalised. Empty sets add nothing."""
    q = alpha * np.asarray(query, dtype=np.float32)
    if relevant is not None and len(relevant):
        q = q + beta * np.asarray(relevant, dtype=np.float32).mean(axis=0)
    if nonrelevant is not None and len(nonrelevant):
        q = q - gamma * np.asarray(nonrelevant, dtype=np.float32).mean(axis=0)
    return l2_normalise(q[None, :])[0]
