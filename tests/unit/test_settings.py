import pytest
from pydantic import ValidationError

from core.config import Settings, field_help, load_settings, masked
from core.contracts.errors import ConfigError


def test_defaults_then_toml_then_environment(tmp_path):
    cfg = tmp_path / "eco.toml"
    cfg.write_text("[ecolens]\nk = 7\nbatch_size = 8\n")
    s = load_settings(cfg, environ={"ECOLENS_K": "11"})
    assert s.batch_size == 8  # from the file
    assert s.k == 11  # the environment wins over the file
    assert s.visret_m == Settings().visret_m  # default untouched


def test_unknown_key_lists_valid_ones(tmp_path):
    cfg = tmp_path / "eco.toml"
    cfg.write_text("colour = 'blue'\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, environ={})
    assert "colour" in err.value.message and "data_dir" in err.value.hint


def test_unknown_environment_variable_fails():
    with pytest.raises(ConfigError, match="embeder"):
        load_settings(environ={"ECOLENS_EMBEDER": "hash"})


def test_bad_type_and_choice_are_explained():
    with pytest.raises(ConfigError, match="not a whole number"):
        load_settings(environ={"ECOLENS_K": "many"})
    with pytest.raises(ConfigError, match="index_type"):
        load_settings(environ={"ECOLENS_INDEX_TYPE": "annoy"})
    with pytest.raises(ConfigError, match="port"):
        load_settings(environ={"ECOLENS_PORT": "70000"})


def test_broken_toml_is_a_config_error(tmp_path):
    cfg = tmp_path / "eco.toml"
    cfg.write_text("k = = 3")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(cfg, environ={})


def test_every_field_documented_and_secrets_masked():
    assert all(len(h) > 10 for h in field_help().values())
    shown = masked(load_settings(environ={"ECOLENS_OPENAI_API_KEY": "sk-secret", "ECOLENS_PASSWORD": ""}))
    assert shown["openai_api_key"] == "***"
    assert shown["password"] == ""  # unset secrets stay visibly empty


# --- install-time variables, strict values, masked URLs ------------------------------------------------------


def _dockerfile_environment() -> dict[str, str]:
    """Every ENV KEY=VALUE of the Dockerfile's final stage (with $VAR references left as written)."""
    import re
    import shlex
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "Dockerfile").read_text(encoding="utf-8")
    final = text[text.rindex("\nFROM "):]
    env: dict[str, str] = {}
    for line in re.sub(r"\\\n", " ", final).splitlines():
        if line.startswith("ENV "):
            for pair in shlex.split(line[4:]):
                key, _, value = pair.partition("=")
                env[key] = value
    return env


def test_settings_load_with_exactly_the_dockerfile_environment():
    env = _dockerfile_environment()
    assert any(k.startswith("ECOLENS_") for k in env)  # the test reads something real
    s = load_settings(environ=env)
    assert s.data_dir == env["ECOLENS_DATA_DIR"] and s.host == "0.0.0.0"


def test_install_time_variables_are_not_settings():
    s = load_settings(environ={"ECOLENS_VENV": "/x", "ECOLENS_CACHE": "/y", "ECOLENS_SETUP_LLAMA": "1",
                               "ECOLENS_SETUP_VENV": "/v"})
    assert s == Settings()
    with pytest.raises(ConfigError) as err:
        load_settings(environ={"ECOLENS_VNEV": "/x"})  # a typo is still caught
    assert "ECOLENS_SETUP_" in err.value.hint


@pytest.mark.parametrize("env, words", [
    ({"ECOLENS_K": "2.9"}, "whole number"),
    ({"ECOLENS_THREADS": "true"}, "whole number"),
    ({"ECOLENS_THREADS": "100000"}, "between 0 and 1024"),
    ({"ECOLENS_BACKEND_TIMEOUT_S": "nan"}, "number"),
    ({"ECOLENS_BACKEND_TIMEOUT_S": "0"}, "between 0.1 and 3600"),
    ({"ECOLENS_BACKEND_TIMEOUT_S": "inf"}, "number"),
    ({"ECOLENS_MAX_UPLOAD_MB": "nan"}, "number"),
    ({"ECOLENS_RERANK_VOTES": "-5"}, "between 1 and 9"),
    ({"ECOLENS_K": ""}, "whole number"),
])
def test_bad_values_from_the_environment_are_refused_with_a_fix(env, words):
    with pytest.raises(ConfigError) as err:
        load_settings(environ=env)
    name = next(iter(env))[len("ECOLENS_"):].lower()
    assert name in err.value.message and words in err.value.hint


def test_bad_values_from_toml_are_refused(tmp_path):
    cfg = tmp_path / "eco.toml"
    for line, name in (("k = 2.9", "k"), ("threads = true", "threads"), ("max_upload_mb = nan", "max_upload_mb"),
                       ("llm = 3", "llm"), ("rerank_votes = -5", "rerank_votes"), ("batch_size = [1]", "batch_size")):
        cfg.write_text(line + "\n")
        with pytest.raises(ConfigError) as err:
            load_settings(cfg, environ={})
        assert name in err.value.message and err.value.hint
    cfg.write_text("k = 7\nmax_upload_mb = 3\nbackend_timeout_s = 2.5\n")  # an integer is fine for a float
    s = load_settings(cfg, environ={})
    assert (s.k, s.max_upload_mb, s.backend_timeout_s) == (7, 3.0, 2.5) and isinstance(s.max_upload_mb, float)


def test_credentials_in_urls_are_masked_when_settings_are_shown():
    from core.redact import mask_url, mask_urls_in

    shown = masked(load_settings(environ={"ECOLENS_OPENAI_BASE_URL": "https://user:s3cret@llm.example.org:8443/v1?key=abc123&api-version=2024"}))
    assert shown["openai_base_url"] == "https://***@llm.example.org:8443/v1?key=***&api-version=2024"
    assert mask_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"  # nothing to hide
    assert mask_url("") == "" and mask_url("./data") == "./data"
    assert "s3cret" not in mask_url("https://user:s3cret@host:notaport/v1")
    text = "could not reach https://a:b@h/v1 (see https://docs.example/x?token=zz)"
    assert mask_urls_in(text) == "could not reach https://***@h/v1 (see https://docs.example/x?token=***)"


# --- the pydantic-settings model ----------------------------------------------------------------------------------


def test_settings_alone_are_the_defaults_and_are_frozen_and_hashable(monkeypatch):
    monkeypatch.setenv("ECOLENS_K", "77")
    assert Settings().k == 20 and load_settings(environ=None).k == 77  # only load_settings reads the environment
    a, b = Settings(k=5), Settings(k=5)
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1  # the backend registry keys on settings
    with pytest.raises(ValidationError, match="frozen"):
        a.k = 6
    assert "sk-secret" not in repr(Settings(openai_api_key="sk-secret"))


def test_replace_is_checked_and_keeps_the_rest():
    s = Settings(k=5, data_dir="/d")
    t = s.replace(ingest_workers=3)
    assert (t.k, t.data_dir, t.ingest_workers, s.ingest_workers) == (5, "/d", 3, 0)
    with pytest.raises(ConfigError, match="out of range"):
        s.replace(k=0)
    with pytest.raises(ConfigError, match="Unknown setting"):
        s.replace(colour="blue")


def test_a_bad_file_value_counts_even_where_the_environment_overrides_it(tmp_path):
    cfg = tmp_path / "eco.toml"
    cfg.write_text("k = 2.9\n")
    with pytest.raises(ConfigError, match="whole number"):
        load_settings(cfg, environ={"ECOLENS_K": "9"})
    with pytest.raises(ConfigError, match="whole number"):
        load_settings(environ={"ECOLENS_K": "3.0"})  # text for a whole number is a whole number, not '3.0'


def test_the_model_declares_type_range_choices_and_help():
    from core.config import allowed, field_choices, field_range

    assert field_range("port") == (1, 65535) and field_choices("index_type") == ("flat", "ivfpq", "hnsw")
    assert allowed("k") == "whole number 1-1000" and allowed("index_on_disk") == "true or false"
    assert all(Settings.model_fields[name].description for name in Settings.model_fields)
