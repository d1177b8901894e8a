"""The one resolution of a backend name: a table maps names (or 'prefix:' entries) to "module:factory"
targets, imported only when chosen. The registry's tables (core/backends/registry.py) and the photo readers'
(core/backends/readers.py) resolve through it."""
from __future__ import annotations

import importlib
from typing import Callable

from core.contracts.errors import ConfigError


def resolve(table: dict[str, str], setting: str, value: str) -> tuple[Callable, str]:
    """Find the factory for `value` (an exact name or a 'prefix:' match) and the rest of the spec."""
    target, spec = (None if value.endswith(":") else table.get(value)), value
    if target is None:
        for key, tgt in table.items():
            if key.endswith(":") and value.startswith(key) and len(value) > len(key):
                target, spec = tgt, value[len(key):]
                break
    if target is None:
        valid = ", ".join(k + ("..." if k.endswith(":") else "") for k in table)
        raise ConfigError(f"Unknown {setting} backend {value!r}", f"set {setting} to one of: {valid}")
    module_name, _, attr = target.partition(":")
    obj = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj, spec
