"""A hub dataset's card and its files: the licence of the card's YAML header named as people write it, the
banner line built on it (or on the photos' own licence values, saying where they came from), and which files
of a repository are a split's photos and which its precomputed vectors."""
from __future__ import annotations

import pytest

from core.config import Settings
from core.ingest import dataset_card, hub_dataset
from core.ingest.companion_vectors import is_vector_file
from core.search.banner import hub_line


@pytest.mark.parametrize("lid,name", [("cc-by-nc-4.0", "CC BY-NC 4.0"), ("cc-by-4.0", "CC BY 4.0"),
                                      ("cc-by-nc-sa-4.0", "CC BY-NC-SA 4.0"), ("cc-by-nd-4.0", "CC BY-ND 4.0"),
                                      ("cc0-1.0", "CC0 1.0"), ("apache-2.0", "Apache 2.0"), ("MIT", "MIT"),
                                      ("some-own-licence", "some-own-licence")])
def test_licence_ids_are_named_as_people_write_them(lid, name):
    assert dataset_card.licence_name(lid) == name


@pytest.mark.parametrize("card,expected", [
    ("---\nlicense: cc-by-nc-4.0\ntask_categories:\n- image-classification\n---\n# INQUIRE\n", "CC BY-NC 4.0"),
    ("---\r\nlicense:\r\n- cc-by-4.0\r\n- mit\r\n---\r\ntext", "CC BY 4.0, MIT"),
    ("---\nlicense: other\nlicense_name: inaturalist-terms\n---\n", "inaturalist-terms"),
    ("---\nlicense: other\n---\n", "other"),
    ("---\npretty_name: INQUIRE\n---\nlicense: cc-by-4.0 in the text does not count\n", ""),
    ("# no header\nlicense: cc-by-4.0\n", ""),
    ("---\nlicense: [unclosed\n---\n", ""),  # a header that is not YAML: no licence, logged
])
def test_the_cards_yaml_header_names_the_licence(tmp_path, card, expected):
    (tmp_path / "README.md").write_bytes(card.encode())
    assert dataset_card.licence(tmp_path) == expected


def test_no_card_no_licence(tmp_path):
    assert dataset_card.licence(tmp_path) == ""
    assert hub_dataset.card_licence(Settings(data_dir=str(tmp_path)), "hf://datasets/a/b:validation") == ""


def test_the_banner_names_the_cards_licence_else_the_photos_saying_where_from():
    s = Settings(models="hub-cpu")
    line = hub_line("INQUIRE-Rerank (validation split)", 4000, ["cc-by-nc", "cc-by"], s, "CC BY-NC 4.0")
    assert line == ("4000 photos from INQUIRE-Rerank (validation split), under CC BY-NC 4.0 (the dataset card's "
                    "licence; each photo shows its own licence and rights holder); searched with bioclip, checked "
                    "by SmolVLM-256M-Instruct.")
    line = hub_line("INQUIRE-Rerank (validation split)", 4000, ["cc-by-nc", "cc-by"], s)
    assert "licences cc-by-nc, cc-by (from the photos' licence column, as the dataset card names none" in line
    assert "licence" not in hub_line("X", 3, [], s)
    assert hub_line("INQUIRE-Rerank (validation split)", 0, [], s).startswith(
        "INQUIRE-Rerank (validation split), being prepared; searched with bioclip")


def test_vector_files_are_not_a_splits_photos():
    paths = ["data/validation-00000-of-00001.parquet", "vectors/validation.parquet", "embeddings/test-bioclip.parquet",
             "data/test-00000-of-00001.parquet", "validation.parquet", "README.md"]
    assert [p for p in paths if is_vector_file(p)] == ["vectors/validation.parquet", "embeddings/test-bioclip.parquet"]
    assert hub_dataset.split_files(paths, "validation") == ["data/validation-00000-of-00001.parquet",
                                                            "validation.parquet"]
    assert hub_dataset.split_files(paths, "validation", vectors=True) == ["vectors/validation.parquet"]
    assert hub_dataset.split_files(paths, "test", vectors=True) == ["embeddings/test-bioclip.parquet"]
    assert hub_dataset._splits(paths) == ["test", "validation"]
