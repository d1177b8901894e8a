"""The one settings object: a pydantic-settings model whose fields (core.contracts.settings_fields) declare
type, default, allowed range or choices and help text. Values come from defaults < a TOML file < ECOLENS_*
environment variables < explicit overrides (load_settings). Unknown keys fail at start and list the valid ones;
values are checked strictly (a whole number for an integer, no NaN or infinity, inside the declared range) and
every refusal is a ConfigError with a fix line.

`Settings(...)` alone never reads the file or the environment: it is the defaults plus the values given, checked
the same way. Settings objects are frozen and hashable (the backend registry keys on them); `replace(...)` makes a
checked copy with some values changed.

Settings claim only their own names: ECOLENS_SETUP_* variables and the install-time names in INSTALL_TIME
(read by scripts/setup.sh, run.sh and the Dockerfile, not by the app) are ignored here."""
from __future__ import annotations

import os
import tomllib
import typing
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_settings import (BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict,
                               TomlConfigSettingsSource)

from core.contracts import profiles
from core.contracts.errors import ConfigError
from core.contracts.settings_fields import SettingFields
from core.redact import mask_url

ENV_PREFIX = "ECOLENS_"
SETUP_PREFIX = ENV_PREFIX + "SETUP_"  # install-time variables (scripts/setup.sh): never settings
# Older install-time names, still read by scripts/setup.sh; declared here so that they are ignored, not errors.
INSTALL_TIME = frozenset({ENV_PREFIX + "CONFIG", ENV_PREFIX + "VENV", ENV_PREFIX + "CACHE"})

# The file and environment sources of the load_settings call in progress (empty: Settings(...) alone).
_LOADING: ContextVar[tuple[PydanticBaseSettingsSource, ...]] = ContextVar("ecolens_settings_sources", default=())


class Settings(SettingFields):
    """Every setting (its fields: core.contracts.settings_fields), checked strictly, with the model profile's
    values filled in where not given."""

    model_config = SettingsConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, env_prefix=ENV_PREFIX,
                                      validate_default=True)

    _explicit: frozenset = PrivateAttr(default=frozenset())  # the names given, not filled by the profile

    @model_validator(mode="wrap")
    @classmethod
    def _apply_profile(cls, data: Any, handler):
        """Fill what the model profile names and was not given (explicit > profile > default)."""
        if not isinstance(data, dict):
            return handler(data)
        given = frozenset(data)
        profile = data.get("models", profiles.STANDIN)
        filled = {**profiles.values(profile if isinstance(profile, str) else ""), **data}
        built = handler(filled)
        built._explicit = given
        return built

    def __eq__(self, other: object) -> bool:
        """Equal values are equal settings, however they were given (the registry keys on settings)."""
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:  # defining __eq__ drops the frozen model's own hash
        return hash((type(self), tuple(self.__dict__.values())))

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings):
        """Values given to the constructor, then (inside load_settings only) the environment, then the file."""
        return (init_settings, *_LOADING.get())

    @field_validator("*", mode="before")
    @classmethod
    def _no_type_confusion(cls, value: Any, info) -> Any:
        """What pydantic's lax mode would convert but a setting refuses: true/false for a number, a fraction
        type or text for a whole number (k = 3.0 in TOML, ECOLENS_K=3.0) and a number for true/false."""
        kind = cls.model_fields[info.field_name].annotation
        if kind in (int, float) and isinstance(value, bool):
            raise ValueError("not a number")
        if kind is int and (isinstance(value, float) or (
                isinstance(value, str) and not value.strip().replace("_", "").lstrip("+-").isdigit())):
            raise ValueError("not a whole number")  # also '3.0' and '1e3' from the environment
        if kind is bool and not isinstance(value, (bool, str)):
            raise ValueError("not true or false")
        return value

    @field_validator("named_places")
    @classmethod
    def _places_readable(cls, value: str) -> str:
        parse_places(value)  # a ValueError names the entry that is wrong
        return value

    def place_boxes(self) -> dict[str, tuple[float, float, float, float]]:
        """named_places as name -> (west, south, east, north)."""
        return parse_places(self.named_places)

    def path(self, *parts: str) -> Path:
        """A path inside the data directory."""
        return Path(self.data_dir).expanduser().joinpath(*parts)

    def replace(self, **changes: Any) -> "Settings":
        """A copy with `changes` applied, checked like any other settings (ConfigError when a value is bad).
        What the model profile filled follows the copy's profile (replace(models='standin') drops it)."""
        _unknown(changes, "in the changes")
        given = {name: value for name, value in self.model_dump().items() if name in self._explicit}
        return _checked_build(lambda: type(self)(**{**given, **changes}))

    def explicit(self) -> frozenset:
        """The settings given explicitly (not filled by the model profile nor left at their defaults)."""
        return self._explicit

    def from_profile(self) -> dict[str, Any]:
        """The settings whose value came from the model profile, with that value."""
        return {k: v for k, v in profiles.values(self.models).items() if k not in self._explicit}


# --- what the model declares ---------------------------------------------------------------------------------


def parse_places(text: str) -> dict[str, tuple[float, float, float, float]]:
    """'NAME=W,S,E,N; NAME=...' as name -> box; ValueError naming the entry that cannot be read."""
    out: dict[str, tuple[float, float, float, float]] = {}
    for entry in (text or "").split(";"):
        if not entry.strip():
            continue
        name, sep, box = entry.partition("=")
        try:
            parts = tuple(float(x) for x in box.split(","))
        except ValueError:
            parts = ()
        if not sep or not name.strip() or len(parts) != 4:
            raise ValueError(f"{entry.strip()!r} is not NAME=WEST,SOUTH,EAST,NORTH")
        w, s, e, n = parts
        if not (-180 <= w <= 180 and -180 <= e <= 180 and -90 <= s <= n <= 90):
            raise ValueError(f"{entry.strip()!r}: longitudes lie in -180..180, latitudes in -90..90, south <= north")
        out[" ".join(name.split())] = (w, s, e, n)
    return out


def field_help() -> dict[str, str]:
    """Every setting's help text, by name."""
    return {name: f.description or "" for name, f in Settings.model_fields.items()}


def field_range(name: str) -> tuple[float | None, float | None]:
    """The allowed [lo, hi] of a numeric setting (None: unbounded on that side)."""
    lo = hi = None
    for rule in Settings.model_fields[name].metadata:  # Field(ge=..., le=...) keeps them as Ge / Le rules
        lo = getattr(rule, "ge", lo)
        hi = getattr(rule, "le", hi)
    return lo, hi


def field_choices(name: str) -> tuple[str, ...]:
    """The values a setting with a fixed set of choices accepts (empty: any value of its type)."""
    kind = Settings.model_fields[name].annotation
    return tuple(typing.get_args(kind)) if typing.get_origin(kind) is Literal else ()


def field_type(name: str) -> type:
    """int, float, bool or str (a setting with choices is text)."""
    kind = Settings.model_fields[name].annotation
    return str if field_choices(name) else kind


def is_secret(name: str) -> bool:
    extra = Settings.model_fields[name].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("secret"))


_WHAT = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}


def _num(value: float) -> str:
    """A bound as people write it: 1000000000 rather than 1e+09, 0.1 rather than 0.10000."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _span(name: str) -> str:
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
    for name, f in Settings.model_fields.items():
        kind = "choice" if field_choices(name) else {int: "integer", float: "number", bool: "boolean",
                                                        str: "text"}[field_type(name)]
        default = str(f.default).lower() if isinstance(f.default, bool) else repr(f.default)  # as TOML writes it
        rows.append(f"| `{name}` / `{ENV_PREFIX}{name.upper()}` | {kind} | `{default}` | {allowed(name)} "
                    f"| {f.description} |")
    return "\n".join(rows)


# --- loading -------------------------------------------------------------------------------------------------


def _unknown(keys, where: str) -> None:
    unknown = sorted(set(keys) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(f"Unknown setting(s) {', '.join(unknown)} {where}",
                          "valid settings: " + ", ".join(sorted(Settings.model_fields))
                          + "; install-time variables use the ECOLENS_SETUP_ prefix")


class _TomlFile(TomlConfigSettingsSource):
    """The TOML file: keys at the top level or under [ecolens]; unreadable files and unknown keys are
    ConfigErrors."""

    def _read_file(self, file_path) -> dict[str, Any]:
        p = Path(file_path)
        try:
            data = tomllib.loads(p.read_bytes().decode("utf-8-sig"))  # a byte-order mark (Notepad's) is read
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"Config file {p} is not valid TOML: {exc}", "fix the file's syntax") from None
        except UnicodeDecodeError:
            utf16 = p.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
            raise ConfigError(f"Config file {p} is not UTF-8 text"
                              + (" (it starts with a UTF-16 byte-order mark)" if utf16 else ""),
                              "save it as UTF-8 TOML") from None
        data = data.get("ecolens", data)
        if not isinstance(data, dict):
            raise ConfigError(f"Config file {p}: [ecolens] must be a table of settings",
                              "write the settings as key = value lines under [ecolens] or at the top level")
        _unknown(data, f"in {p}")
        _checked_build(lambda: Settings(**data))  # the file on its own: a bad line counts even where overridden
        return data


class _Environment(EnvSettingsSource):
    """ECOLENS_* variables of `environ` that are meant as settings (install-time ones are not); an unknown
    one is a ConfigError."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]):
        self._ours = {k: v for k, v in environ.items()
                      if k.startswith(ENV_PREFIX) and not k.startswith(SETUP_PREFIX) and k not in INSTALL_TIME}
        values = {k[len(ENV_PREFIX):].lower(): v for k, v in self._ours.items()}
        _unknown(values, "in the environment (ECOLENS_*)")
        _checked_build(lambda: Settings(**values))  # the environment on its own, as the file
        super().__init__(settings_cls, case_sensitive=False, env_prefix=ENV_PREFIX, env_ignore_empty=False)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._ours.items()}  # names are matched case-insensitively


def load_settings(config_file: str | os.PathLike | None = None,
                  environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Build settings from defaults < TOML file < ECOLENS_* environment < explicit overrides.

    The TOML file is `config_file`, else $ECOLENS_CONFIG, else ./ecolens.toml if it exists. Raises
    ConfigError for unknown keys (listing the valid ones), bad types, values out of range and bad choices."""
    environ = os.environ if environ is None else environ
    sources: list[PydanticBaseSettingsSource] = []
    path = (config_file or environ.get(ENV_PREFIX + "CONFIG")
            or ("ecolens.toml" if Path("ecolens.toml").exists() else None))
    if path:
        p = Path(path)
        if p.is_dir():
            raise ConfigError(f"Config file {p} is a folder, not a file",
                              f"name the TOML file itself (e.g. {p / 'ecolens.toml'}) with --config or ECOLENS_CONFIG")
        if not p.is_file():
            raise ConfigError(f"Config file {p} does not exist", "fix ECOLENS_CONFIG or create the file")
        sources.append(_TomlFile(Settings, toml_file=p))
    sources.insert(0, _Environment(Settings, environ))  # earlier sources win: the environment over the file
    _unknown(overrides, "in the overrides")
    token = _LOADING.set(tuple(sources))
    try:
        return _checked_build(lambda: Settings(**overrides))
    finally:
        _LOADING.reset(token)


def _checked_build(build) -> Settings:
    """build(), with a ValidationError turned into the ConfigError a user reads (the first problem)."""
    try:
        return build()
    except ValidationError as exc:
        raise _config_error(exc.errors()[0]) from None


def _shown(name: str, raw: Any) -> Any:
    """A value as the message shows it: text that parses as the setting's number is shown as that number."""
    kind = field_type(name)
    if isinstance(raw, str) and kind in (int, float):
        try:
            return kind(raw.strip().replace("_", ""))
        except ValueError:
            return raw
    return raw


def _config_error(error: Mapping[str, Any]) -> ConfigError:
    name, raw, problem = str(error["loc"][0]) if error["loc"] else "", error.get("input"), error["type"]
    if name not in Settings.model_fields:  # an unknown key reached the model (a caller built it directly)
        _unknown([name or "?"], "in the given values")
    kind = field_type(name)
    choices = field_choices(name)
    if problem == "literal_error":
        return ConfigError(f"Setting {name}={raw!r} is not one of {', '.join(choices)}",
                           f"set {name} to one of: {', '.join(choices)}")
    if problem in ("greater_than_equal", "less_than_equal"):
        value = _shown(name, raw)
        return ConfigError(f"Setting {name}={value!r} is out of range", f"give {name} a value {_span(name)}")
    if problem == "value_error" and name == "named_places":  # its own check says which entry is wrong
        said = str((error.get("ctx") or {}).get("error") or error.get("msg") or "")
        return ConfigError(f"Setting {name}={raw!r}: {said}", f"fix {name}: {field_help()[name]}")
    if problem == "finite_number":
        return ConfigError(f"Setting {name}={raw!r} is not a finite number",
                           f"give {name} a number such as {Settings.model_fields[name].default!r}")
    what = _WHAT[kind]
    span = f" {_span(name)}" if kind in (int, float) and all(v is not None for v in field_range(name)) else ""
    return ConfigError(f"Setting {name}={raw!r} is not {what}", f"give {name} {what}{span}")


def masked(settings: Settings) -> dict[str, Any]:
    """The effective settings as a dict for showing or logging: secrets replaced by '***' when set, and
    credentials inside URLs masked (core.redact.mask_url)."""
    out = settings.model_dump()
    for name, value in out.items():
        if is_secret(name) and value:
            out[name] = "***"
        elif isinstance(value, str):
            out[name] = mask_url(value)
    return out
