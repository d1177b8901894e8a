import pytest

from core.errors import ConfigError
from core.settings import Settings, field_help, load_settings, masked


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
    with pytest.raises(ConfigError, match="not a valid int"):
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
