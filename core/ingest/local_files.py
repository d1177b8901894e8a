"""Reading one photo named by a path (a folder's file, a CSV `path` column, a parquet image path), bounded:
only a regular file is opened (never a device such as /dev/zero, a FIFO, a socket or a file of /proc or
/sys, whose reads never end or hang), checked with os.stat before it is opened, opened non-blocking (a FIFO
put in its place between the check and the open cannot hang the ingest) and read up to a size bound plus one
byte, so memory stays bounded whatever the file claims to be."""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

from core.contracts import limits

PSEUDO_ROOTS = ("/proc", "/sys", "/dev")  # file systems whose "files" are the kernel's, not photos


class FileRefused(OSError):
    """A path that is not a photo file EcoLens may read; str() is the whole reason and its fix."""


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _check(st: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused(f"is {_kind(st.st_mode)}, not a photo file; name a regular image file instead")
    if st.st_size > max_bytes:
        raise FileRefused(f"is {st.st_size / 1e6:.1f} MB, more than the {max_bytes // 1_000_000} MB a photo may be; "
                          "resize or re-export it")


def read_bounded(path: str | Path, max_bytes: int = limits.MAX_PHOTO_BYTES) -> bytes:
    """The bytes of the regular file `path`, at most `max_bytes`; FileRefused saying why otherwise."""
    p = Path(path)
    real = os.path.realpath(p)
    under = next((root for root in PSEUDO_ROOTS if real == root or real.startswith(root + "/")), None)
    if under:
        where = f"links to {real}, under {under}" if real != os.path.abspath(p) else f"is under {under}"
        raise FileRefused(f"{where}, the system's own files, not a photo file; name a regular image file instead")
    _check(os.stat(p), max_bytes)  # before the open: a FIFO's open would wait for a writer
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        _check(os.fstat(fd), max_bytes)  # the file opened is the one checked (it may have been replaced)
        os.set_blocking(fd, True)
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:  # grew while being read
        raise FileRefused(f"is more than the {max_bytes // 1_000_000} MB a photo may be; resize or re-export it")
    return data


def reader(path: str | Path, max_bytes: int = limits.MAX_PHOTO_BYTES) -> Callable[[], bytes]:
    return lambda: read_bounded(path, max_bytes)
