"""Reads what a GGUF model file says about itself, from its header only: its metadata (general.name,
general.size_label, ...) and its parameter count (the sum over its tensors of the product of their shapes).

A file may be named anything ('model.gguf'), so the size of a model is read here rather than guessed from its
name. Only the header is read (a few MB for a vocabulary of 50k tokens); the tensor data is never touched.
Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (version 2 and 3, little-endian)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"
MAX_HEADER_BYTES = 256 * 1024 * 1024  # a header larger than this is not one we read
MAX_COUNT = 10_000_000  # more keys, tensors or array items than this: a damaged file
MAX_STRING = 16 * 1024 * 1024

# value type -> struct format of a scalar (8 = string and 9 = array are read on their own)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_KEEP_ARRAYS = 16  # arrays longer than this (token lists) are skipped, their length kept


class GGUFError(ValueError):
    """The file is not a GGUF file this reader understands."""


@dataclass
class GGUFHeader:
    version: int
    metadata: dict[str, Any] = field(default_factory=dict)
    n_params: int = 0  # sum of the tensors' element counts
    n_tensors: int = 0

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name") or self.metadata.get("general.basename") or "")

    @property
    def size_label(self) -> str:
        return str(self.metadata.get("general.size_label") or "")


class _Reader:
    def __init__(self, f: BinaryIO):
        self.f, self.read_bytes = f, 0

    def take(self, n: int) -> bytes:
        self.read_bytes += n
        if self.read_bytes > MAX_HEADER_BYTES:
            raise GGUFError("header larger than the reader allows")
        data = self.f.read(n)
        if len(data) != n:
            raise GGUFError("file ends inside its header")
        return data

    def scalar(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def count(self) -> int:
        n = self.scalar("<Q")
        if n > MAX_COUNT:
            raise GGUFError(f"implausible count {n}")
        return n

    def string(self) -> str:
        n = self.scalar("<Q")
        if n > MAX_STRING:
            raise GGUFError(f"implausible string length {n}")
        return self.take(n).decode("utf-8", errors="replace")

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item_kind, n = self.scalar("<I"), self.count()
            if item_kind in _SCALARS and n > _KEEP_ARRAYS:  # skip a long array of numbers in one read
                self.take(n * struct.calcsize(_SCALARS[item_kind]))
                return f"<array of {n}>"
            items = [self.value(item_kind) for _ in range(n)]
            return items if n <= _KEEP_ARRAYS else f"<array of {n}>"
        raise GGUFError(f"unknown value type {kind}")


def read_header(path: str | Path) -> GGUFHeader:
    """The header of the GGUF file at `path` (GGUFError when it is not one, OSError when it cannot be read)."""
    with open(path, "rb") as f:
        r = _Reader(f)
        if r.take(4) != MAGIC:
            raise GGUFError(f"{Path(path).name} is not a GGUF file")
        version = r.scalar("<I")
        if version not in (2, 3):
            raise GGUFError(f"GGUF version {version} is not supported")
        n_tensors, n_keys = r.count(), r.count()
        head = GGUFHeader(version=version, n_tensors=n_tensors)
        for _ in range(n_keys):
            key = r.string()
            head.metadata[key] = r.value(r.scalar("<I"))
        for _ in range(n_tensors):
            r.string()  # tensor name
            n_dims = r.scalar("<I")
            if n_dims > 8:
                raise GGUFError(f"tensor with {n_dims} dimensions")
            elements = 1
            for _ in range(n_dims):
                elements *= r.scalar("<Q")
            r.scalar("<I")  # element type
            r.scalar("<Q")  # data offset
            head.n_params += elements
    return head
