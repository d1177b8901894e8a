"""Loading the settings: defaults < a TOML file < ECOLENS_* environment variables < explicit overrides. Unknown
keys fail at start and list the valid ones; the file and the environment are each checked on their own, so a bad
line counts even where it is overridden."""
from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Mapping

from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, TomlConfigSettingsSource

from core.config.fields import ENV_PREFIX, INSTALL_TIME, SETUP_PREFIX
from core.config.settings import _LOADING, Settings, _checked_build, _unknown
from core.contracts.errors import ConfigError


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
