"""What people read about the settings: each setting's help, range, choices and type in words, the reference
table (docs/reference/settings.md) and the effective settings with secrets masked. All of it is read from the
fields' declarations (core.contracts.settings_fields)."""
from __future__ import annotations

import typing
from typing import Any, Literal

from core.contracts.settings_fields import SettingFields
from core.redact import mask_url

ENV_PREFIX = "ECOLENS_"
SETUP_PREFIX = ENV_PREFIX + "SETUP_"  # install-time variables (scripts/setup.sh): never settings
# Older install-time names, still read by scripts/setup.sh; declared here so that they are ignored, not errors.
INSTALL_TIME = frozenset({ENV_PREFIX + "CONFIG", ENV_PREFIX + "VENV", ENV_PREFIX + "CACHE"})
FIELDS = SettingFields.model_fields


def field_help() -> dict[str, str]:
    """Every setting's help text, by name."""
    return {name: f.description or "" for name, f in FIELDS.items()}


def field_range(name: str) -> tuple[float | None, float | None]:
    """The allowed [lo, hi] of a numeric setting (None: unbounded on that side)."""
    lo = hi = None
    for rule in FIELDS[name].metadata:  # Field(ge=..., le=...) keeps them as Ge / Le rules
        lo = getattr(rule, "ge", lo)
        hi = getattr(rule, "le", hi)
    return lo, hi


def field_choices(name: str) -> tuple[str, ...]:
    """The values a setting with a fixed set of choices accepts (empty: any value of its type)."""
    kind = FIELDS[name].annotation
    return tuple(typing.get_args(kind)) if typing.get_origin(kind) is Literal else ()


def field_type(name: str) -> type:
    """int, float, bool or str (a setting with choices is text)."""
    kind = FIELDS[name].annotation
    return str if field_choices(name) else kind


def is_secret(name: str) -> bool:
    extra = FIELDS[name].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("secret"))


WHAT = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}


def _num(value: float) -> str:
    """A bound as people write it: 1000000000 rather than 1e+09, 0.1 rather than 0.10000."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def span(name: str) -> str:
    lo, hi = field_range(name)
    if lo is not None and hi is not None:
        return f"between {_num(lo)} and {_num(hi)}"
    return f"at least {_num(lo)}" if lo is not None else (f"at most {_num(hi)}" if hi is not None else "")


def allowed(name: str) -> str:
    """The values a setting accepts, in words (for the reference table)."""
    if field_choices(name):
        return ", ".join(field_choices(name))
    kind = field_type(name)
    if kind is bool:
        return "true or false"
    if kind is str:
        return "text"
    lo, hi = field_range(name)
    word = "whole number" if kind is int else "number"
    if lo is not None and hi is not None:
        return f"{word} {_num(lo)}-{_num(hi)}"
    return f"{word} >= {_num(lo)}" if lo is not None else word


def markdown_table() -> str:
    """The settings reference as a Markdown table, generated from the model (docs/reference/settings.md)."""
    rows = ["| setting (TOML key / ECOLENS_ variable) | type | default | allowed | what it does |",
            "| --- | --- | --- | --- | --- |"]
    for name, f in FIELDS.items():
        kind = "choice" if field_choices(name) else {int: "integer", float: "number", bool: "boolean",
                                                        str: "text"}[field_type(name)]
        default = str(f.default).lower() if isinstance(f.default, bool) else repr(f.default)  # as TOML writes it
        rows.append(f"| `{name}` / `{ENV_PREFIX}{name.upper()}` | {kind} | `{default}` | {allowed(name)} "
                    f"| {f.description} |")
    return "\n".join(rows)


def masked(settings: Any) -> dict[str, Any]:
    """The effective settings as a dict for showing or logging: secrets replaced by '***' when set, and
    credentials inside URLs masked (core.redact.mask_url)."""
    out = settings.model_dump()
    for name, value in out.items():
        if is_secret(name) and value:
            out[name] = "***"
        elif isinstance(value, str):
            out[name] = mask_url(value)
    return out
