"""Model profiles as data: every value a profile sets is a valid setting; a setting given explicitly beats the
profile, which beats the default; the hub models a profile names and the files fetched for each library; the
hub corpus name; what the Space starts on."""
from __future__ import annotations

import pytest

from core.backends import model_fetch
from core.contracts import profiles
from core.contracts.errors import ConfigError, InputError
from core.config import Settings, load_settings
from core.ingest import hub_dataset
from core.search import space
from core.search.banner import hub_line


@pytest.mark.parametrize("name", profiles.names())
def test_every_profile_value_is_a_valid_setting(name):
    values = profiles.values(name)
    assert set(values) <= set(Settings.model_fields), "a profile names a setting that does not exist"
    s = Settings(models=name)
    for key, value in values.items():
        assert getattr(s, key) == value
    assert name in profiles.PURPOSE


def test_no_profile_changes_nothing():
    assert Settings() == Settings(models="standin")
    assert Settings().model_dump() == {**Settings(models="standin").model_dump()}
    assert not profiles.is_real("standin") and profiles.is_real("hub-cpu")


def test_explicit_beats_profile_beats_default():
    s = Settings(models="hub-cpu", judge="clip", rerank_k=30)
    assert s.judge == "clip" and s.rerank_k == 30  # explicit
    assert s.embedder == profiles.PROFILES["hub-cpu"]["embedder"]  # profile
    assert s.k == Settings.model_fields["k"].default  # default (the profile says nothing about k)
    assert set(s.from_profile()) == set(profiles.values("hub-cpu")) - {"judge", "rerank_k"}


def test_file_and_environment_are_explicit_too(tmp_path):
    toml = tmp_path / "ecolens.toml"
    toml.write_text('models = "hub-gpu"\njudge = "clip"\nrerank_k = 40\n')
    s = load_settings(toml, environ={"ECOLENS_RERANK_K": "7"})
    assert s.models == "hub-gpu" and s.judge == "clip" and s.rerank_k == 7  # env > file > profile
    assert s.llm == profiles.PROFILES["hub-gpu"]["llm"]
    s = load_settings(environ={"ECOLENS_MODELS": "hub-cpu"})
    assert s.embedder == "open_clip:hf-hub:imageomics/bioclip"


def test_replace_moves_the_profile_values_with_the_profile():
    s = Settings(models="hub-cpu", judge="clip", port=9000)
    back = s.replace(models="standin")
    assert back.judge == "clip" and back.port == 9000  # explicit values stay
    assert back.embedder == Settings().embedder and back.rerank_k == Settings().rerank_k  # profile values go
    assert s.replace(models="hub-gpu").embedder == profiles.PROFILES["hub-gpu"]["embedder"]
    assert s.replace() == s and hash(s.replace()) == hash(s)


def test_unknown_profile_is_refused_with_the_choices():
    with pytest.raises(ConfigError, match="standin, hub-cpu, hub-gpu"):
        load_settings(environ={"ECOLENS_MODELS": "hub-tpu"})


def test_hub_models_of_a_profile():
    found = model_fetch.hub_models(Settings(models="hub-cpu"))
    assert [(m.setting, m.repo_id, m.library) for m in found] == [
        ("embedder", "imageomics/bioclip", "open_clip"),
        ("judge", "HuggingFaceTB/SmolVLM-256M-Instruct", "transformers"),  # the captioner shares it
        ("llm", "HuggingFaceTB/SmolLM2-360M-Instruct", "transformers"),
        ("generator", "stabilityai/sd-turbo", "diffusers")]
    assert model_fetch.hub_models(Settings()) == []  # the stand-ins download nothing
    assert model_fetch.hub_models(Settings(judge="transformers:/models/local", embedder="open_clip:ViT-B-32")) == []


def test_files_each_library_reads():
    tf = ["config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json", "onnx/model.onnx",
          "chat_template.jinja", "README.md", ".gitattributes", "vocab.txt"]
    assert model_fetch.wanted("transformers", tf) == ["config.json", "model.safetensors", "tokenizer.json",
                                                     "chat_template.jinja", "vocab.txt"]
    oc = ["open_clip_config.json", "open_clip_model.safetensors", "open_clip_pytorch_model.bin", "README.md"]
    assert model_fetch.wanted("open_clip", oc) == ["open_clip_config.json", "open_clip_model.safetensors"]
    df = ["model_index.json", "unet/config.json", "unet/diffusion_pytorch_model.safetensors",
          "unet/diffusion_pytorch_model.fp16.safetensors", "unet/diffusion_pytorch_model.bin",
          "sd_turbo.safetensors", "tokenizer/vocab.json", "scheduler/scheduler_config.json"]
    cpu = model_fetch.wanted("diffusers", df, half=False)
    gpu = model_fetch.wanted("diffusers", df, half=True)
    assert "unet/diffusion_pytorch_model.safetensors" in cpu and not any(".fp16." in p for p in cpu)
    assert "unet/diffusion_pytorch_model.fp16.safetensors" in gpu
    assert "unet/diffusion_pytorch_model.safetensors" not in gpu
    assert "sd_turbo.safetensors" not in cpu + gpu and "unet/diffusion_pytorch_model.bin" not in cpu + gpu


def test_hub_corpus_names():
    ds = hub_dataset.parse("hf://datasets/evendrow/INQUIRE-Rerank@v1.0:validation")
    assert (ds.repo_id, ds.revision, ds.split) == ("evendrow/INQUIRE-Rerank", "v1.0", "validation")
    assert hub_dataset.parse("hf://datasets/o/n").split is None
    for bad in ("hf://models/o/n", "hf://datasets/o", "hf://datasets/o/n:val:x", "datasets/o/n"):
        with pytest.raises(InputError, match="hf://datasets/OWNER/NAME"):
            hub_dataset.parse(bad)
    paths = ["data/validation-00000-of-00001.parquet", "data/test-00000-of-00004.parquet",
             "data/test-00001-of-00004.parquet", "README.md", "validation.json"]
    assert hub_dataset.split_files(paths, "validation") == ["data/validation-00000-of-00001.parquet"]
    assert len(hub_dataset.split_files(paths, "test")) == 2 and hub_dataset.split_files(paths, "train") == []
    assert len(hub_dataset.split_files(paths, None)) == 3


def test_space_start_only_on_a_space_and_only_when_nothing_was_chosen(monkeypatch, tmp_path):
    from core.backends import hf_hub

    s = Settings(data_dir=str(tmp_path))  # set: the Space's persistent storage is not looked for
    assert space.space_start(s, {}) == (s, "")  # not a Space: nothing changes
    monkeypatch.setattr(hf_hub, "hub_reachable", lambda *a, **k: False)
    kept, why = space.space_start(s, {"SPACE_ID": "me/ecolens"})
    assert kept == s and "cannot reach the Hugging Face hub" in why
    monkeypatch.setattr(hf_hub, "hub_reachable", lambda *a, **k: True)
    monkeypatch.setattr(space, "_has_gpu", lambda: False)
    chosen, why = space.space_start(s, {"SPACE_ID": "me/ecolens"})
    assert (chosen.models, chosen.corpus, why) == ("hub-cpu", space.SPACE_CORPUS, "")
    mine = Settings(models="standin", data_dir=str(tmp_path))
    assert space.space_start(mine, {"SPACE_ID": "me/ecolens"}) == (mine, "")  # the user's choice stands


def test_a_space_keeps_its_data_on_its_persistent_storage(monkeypatch, tmp_path):
    from core.backends import hf_hub

    monkeypatch.setattr(hf_hub, "hub_reachable", lambda *a, **k: False)
    on_space = {"SPACE_ID": "me/ecolens"}
    storage = tmp_path / "persistent"
    storage.mkdir()
    s = Settings(space_storage=str(storage), models="standin")
    moved, why = space.space_start(s, on_space)
    assert moved.data_dir == str(storage) and why == ""
    assert moved.models == "standin"  # the user's other choices stand
    assert space.space_start(s, {}) == (s, "")  # not a Space: the data directory stays
    mine = Settings(space_storage=str(storage), data_dir=str(tmp_path / "mine"), models="standin")
    assert space.space_start(mine, on_space) == (mine, "")  # data_dir set explicitly wins
    gone = Settings(space_storage=str(tmp_path / "absent"), models="standin")
    kept, why = space.space_start(gone, on_space)
    assert kept.data_dir == "./data"
    assert why == f"this Space has no persistent storage ({tmp_path / 'absent'}); a restart starts over"
    both, why = space.space_start(Settings(space_storage=str(tmp_path / "absent")), on_space)
    assert "cannot reach the Hugging Face hub" in why and "no persistent storage" in why


def test_the_data_directory_from_the_environment_beats_the_space_storage(monkeypatch, tmp_path):

    storage = tmp_path / "persistent"
    storage.mkdir()
    monkeypatch.setenv("ECOLENS_SPACE_STORAGE", str(storage))
    monkeypatch.setenv("ECOLENS_MODELS", "standin")
    monkeypatch.setenv("ECOLENS_DATA_DIR", str(tmp_path / "chosen"))
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    loaded = load_settings(str(tmp_path / "empty.toml"))
    assert space.space_storage(loaded, {"SPACE_ID": "me/ecolens"}) == (loaded, "")
    monkeypatch.delenv("ECOLENS_DATA_DIR")
    loaded = load_settings(str(tmp_path / "empty.toml"))
    assert space.space_storage(loaded, {"SPACE_ID": "me/ecolens"})[0].data_dir == str(storage)


def test_a_vectors_repo_that_is_no_repository_is_refused_at_load():
    assert load_settings(environ={"ECOLENS_VECTORS_REPO": "hf://datasets/me/vec@v1"}).vectors_repo == \
        "hf://datasets/me/vec@v1"
    for bad in ("me/vec", "hf://datasets/me/vec:validation", "hf://models/me/vec"):
        with pytest.raises(ConfigError, match="vectors_repo=.* does not have the form it needs") as err:
            load_settings(environ={"ECOLENS_VECTORS_REPO": bad})
        assert "hf://datasets/OWNER/NAME[@REVISION]" in err.value.hint


def test_hub_banner_line():
    line = hub_line("INQUIRE-Rerank (validation split)", 4000, ["cc-by-nc", "cc-by"], Settings(models="hub-cpu"))
    assert line.startswith("4000 photos from INQUIRE-Rerank (validation split), licences cc-by-nc, cc-by")
    assert "searched with bioclip, checked by SmolVLM-256M-Instruct" in line


def test_download_amounts_read_as_sizes():
    from core.search.preparation import amount

    assert amount("downloading bioclip-2", 1_200_000_000, 1_700_000_000) == "1.2 of 1.7 GB"
    assert amount("downloading INQUIRE-Rerank", 120_000_000, 360_000_000) == "120.0 of 360.0 MB"
    assert amount("adding your photos", 120, 480) == "120 of 480"


def test_photos_added_so_far_are_searchable_while_the_rest_are_embedded():
    import threading

    from core.search.preparation import ADDING, Preparation

    step_done, release = threading.Event(), threading.Event()

    def work(progress):
        progress("downloading INQUIRE-Rerank", 10, 100)
        assert release.wait(10)
        progress(ADDING, 5, 12)
        step_done.set()
        assert release.wait(10)
        return ["built"]

    prep = Preparation(work).start()
    assert not prep.searchable and not prep.ready  # still downloading: nothing to search
    release.set()
    assert step_done.wait(10)
    prep.wait(10)
    assert prep.ready and not prep.searchable and prep.notices == ["built"]


def test_searchable_only_in_the_adding_phase():
    from core.search.preparation import ADDING, Preparation

    prep = Preparation(lambda progress: [])
    prep._step("downloading x", 5, 10)
    assert not prep.searchable
    prep._step(ADDING, 0, 10)
    assert not prep.searchable
    prep._step(ADDING, 3, 10)
    assert prep.searchable and "adding your photos: 3 of 10" in prep.status()


def test_example_queries_and_licences_of_a_hub_corpus(tmp_path):
    from tests.hub_repos import QUERIES, inquire_parquet

    f = tmp_path / "validation.parquet"
    f.write_bytes(inquire_parquet(rows_per_query=3, row_group_size=2))
    assert hub_dataset.example_queries([f]) == list(QUERIES)
    assert hub_dataset.example_queries([f], limit=2) == list(QUERIES[:2])
    assert sorted(hub_dataset.licences([f])) == ["cc-by", "cc-by-nc"]
    assert hub_dataset.example_queries([tmp_path / "missing.parquet"]) == []
