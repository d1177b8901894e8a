"""Local model work in worker processes at a lower OS priority (see pool.py)."""
