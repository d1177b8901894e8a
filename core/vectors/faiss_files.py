"""Writing a FAISS index to its file: atomically (a temporary file in the same folder, renamed over the old
one), and with FAISS's own printf()s to stdout kept out of ours."""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import faiss


@contextlib.contextmanager
def c_stdout_muted(active: bool):
    """FAISS's on-disk lists printf() a line on every file resize; keep it out of our stdout (JSON output)."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def atomic_write_index(index: faiss.Index, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        faiss.write_index(index, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
