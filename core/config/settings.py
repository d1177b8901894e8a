"""The one settings object: a pydantic-settings model whose fields (core.contracts.settings_fields: the shape, as
data) declare type, default, allowed range or choices and help text. Values come from defaults < a TOML file <
ECOLENS_* environment variables < explicit overrides (core.config.loading.load_settings). Unknown keys fail at
start and list the valid ones; values are checked strictly (a whole number for an integer, no NaN or infinity,
inside the declared range) and every refusal is a ConfigError with a fix line.

`Settings(...)` alone never reads the file or the environment: it is the defaults plus the values given, checked
the same way. Settings objects are frozen and hashable (the backend registry keys on them); `replace(...)` makes a
checked copy with some values changed.

Settings claim only their own names: ECOLENS_SETUP_* variables and the install-time names in INSTALL_TIME
(read by scripts/setup.sh, run.sh and the Dockerfile, not by the app) are ignored here."""
from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Any, Mapping

from pydantic import PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_settings import PydanticBaseSettingsSource, SettingsConfigDict

from core.config.fields import ENV_PREFIX, WHAT, field_choices, field_help, field_range, field_type, span
from core.contracts import profiles
from core.contracts.errors import ConfigError
from core.contracts.settings_fields import SettingFields

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


# --- checking: a refused value as the ConfigError a user reads ---------------------------------------------


def _unknown(keys, where: str) -> None:
    unknown = sorted(set(keys) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(f"Unknown setting(s) {', '.join(unknown)} {where}",
                          "valid settings: " + ", ".join(sorted(Settings.model_fields))
                          + "; install-time variables use the ECOLENS_SETUP_ prefix")


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
        return ConfigError(f"Setting {name}={value!r} is out of range", f"give {name} a value {span(name)}")
    if problem == "value_error" and name == "named_places":  # its own check says which entry is wrong
        said = str((error.get("ctx") or {}).get("error") or error.get("msg") or "")
        return ConfigError(f"Setting {name}={raw!r}: {said}", f"fix {name}: {field_help()[name]}")
    if problem == "string_pattern_mismatch":  # text of a fixed form (a UTC offset, a repository name)
        return ConfigError(f"Setting {name}={raw!r} does not have the form it needs",
                           f"fix {name}: {field_help()[name]}")
    if problem == "finite_number":
        return ConfigError(f"Setting {name}={raw!r} is not a finite number",
                           f"give {name} a number such as {Settings.model_fields[name].default!r}")
    what = WHAT[kind]
    bound = f" {span(name)}" if kind in (int, float) and all(v is not None for v in field_range(name)) else ""
    return ConfigError(f"Setting {name}={raw!r} is not {what}", f"give {name} {what}{bound}")
