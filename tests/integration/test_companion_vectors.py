"""Precomputed vectors beside a hub dataset's parquet (core/ingest/companion_vectors.py), on a dataset folder laid
out as core.ingest.hub_dataset downloads it (complete.json listing the split's files and its vector files): the
ingest takes the vectors made by the embedder's model instead of embedding the photos (a counting fake embedder
says whether the image encoder ran), embeds the photos the file has no vector for, and says why a file made by
another model (or of another dimension, or naming no model) is not used."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from core.config import Settings
from core.ingest.ingestor import Ingestor
from core.vectors.index_store import IndexStore
from storage.catalog import SqlCatalog
from storage.db import open_engine
from tests.fakes import FakeEmbedder
from tests.hub_repos import image_ids, inquire_parquet, vector_parquet

SPLIT = "data/validation-00000-of-00001.parquet"
VECTORS = "vectors/validation.parquet"


def _dataset(root: Path, vectors: bytes | None) -> Path:
    folder = root / "hub" / "datasets" / "evendrow" / "INQUIRE-Rerank" / "main"
    (folder / "data").mkdir(parents=True)
    (folder / SPLIT).write_bytes(inquire_parquet())
    record = {"split": "validation", "files": [{"path": SPLIT, "size": (folder / SPLIT).stat().st_size}],
              "vectors": []}
    if vectors is not None:
        (folder / "vectors").mkdir()
        (folder / VECTORS).write_bytes(vectors)
        record["vectors"].append({"path": VECTORS, "size": len(vectors)})
    (folder / "complete.json").write_text(json.dumps(record))
    return folder / SPLIT


def _ingest(tmp_path: Path, vectors: bytes | None):
    settings = Settings(data_dir=str(tmp_path / "data"), batch_size=5)
    embedder = FakeEmbedder(dim=16)
    catalog = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    store = IndexStore(tmp_path / "data")
    report = Ingestor(catalog, store, embedder, settings).run(_dataset(tmp_path, vectors))
    return report, embedder, catalog, store


def _images_embedded(embedder: FakeEmbedder) -> int:
    return sum(n for kind, n in embedder.calls if kind == "images")


def _stored(catalog, store, embedder) -> dict[int, np.ndarray]:
    """inat24_image_id -> the vector the index holds for that photo."""
    vs = catalog.vector_set(embedder.model_id, embedder.dim)
    index, _ = store.open(vs, catalog)
    ids = [int(i) for i in index.ids()]
    vectors = index.vectors(ids)
    return {int(p.extra["inat24_image_id"]): v for p, v in zip(catalog.get_photos(ids), vectors)}


def _file_vectors(data: bytes) -> dict[int, np.ndarray]:
    import io

    table = pq.read_table(io.BytesIO(data))
    out = {}
    for key, vec in zip(table.column("inat24_image_id").to_pylist(), table.column("embedding").to_pylist()):
        v = np.asarray(vec, np.float32)
        out[key] = v / np.linalg.norm(v)
    return out


@pytest.mark.parametrize("model_in", ["metadata", "column"])
def test_vectors_of_the_embedders_model_are_used_and_nothing_is_embedded(tmp_path, model_in):
    data = vector_parquet("fake-embedder/16", 16, image_ids(), model_in=model_in)
    report, embedder, catalog, store = _ingest(tmp_path, data)
    assert _images_embedded(embedder) == 0, embedder.calls
    assert report.added == 12 and not report.skipped
    assert report.vector_notes == ["12 photos took their vectors from the precomputed file validation.parquet "
                                   "beside the dataset (made by fake-embedder/16): they were not embedded here"]
    stored, expected = _stored(catalog, store, embedder), _file_vectors(data)
    assert set(stored) == set(expected)
    for key, vec in expected.items():
        assert np.allclose(stored[key], vec, atol=1e-5)
    photo = catalog.get_photos([1])[0]  # the photo's bytes are kept and its size read from the header
    assert Path(photo.path).is_file() and (photo.width, photo.height) == (48, 48) and photo.sha256


def test_photos_without_a_vector_in_the_file_are_embedded(tmp_path):
    data = vector_parquet("fake-embedder/16", 16, image_ids()[:9])
    report, embedder, catalog, store = _ingest(tmp_path, data)
    assert _images_embedded(embedder) == 3
    assert report.added == 12
    assert report.vector_notes[-1].endswith("; 3 photos it has no vector for were embedded")
    stored, expected = _stored(catalog, store, embedder), _file_vectors(data)
    assert all(np.allclose(stored[k], v, atol=1e-5) for k, v in expected.items())
    assert len(stored) == 12


@pytest.mark.parametrize("data,why", [
    (vector_parquet("open_clip:ViT-B-32/openai", 16, image_ids()),
     "they were made by open_clip:ViT-B-32/openai, the embedder is fake-embedder/16"),
    (vector_parquet("fake-embedder/16", 8, image_ids()), "have dimension 8, the vector set has 16"),
    (vector_parquet("", 16, image_ids(), model_in="nowhere"), "does not say which model made its vectors"),
])
def test_vectors_that_cannot_be_used_are_named_and_the_photos_embedded(tmp_path, data, why, caplog):
    report, embedder, catalog, store = _ingest(tmp_path, data)
    assert _images_embedded(embedder) == 12 and report.added == 12
    assert len(report.vector_notes) == 1
    note = report.vector_notes[0]
    assert note.startswith("the precomputed vectors validation.parquet beside the dataset were not used: ")
    assert why in note and note.endswith("the photos are embedded here instead (slower)")
    assert note in report.notices and any(why in r.getMessage() for r in caplog.records)


def test_a_parquet_outside_a_hub_dataset_has_no_companion(tmp_path):
    path = _dataset(tmp_path, vector_parquet("fake-embedder/16", 16, image_ids()))
    (path.parents[1] / "complete.json").unlink()
    settings = Settings(data_dir=str(tmp_path / "data"))
    embedder = FakeEmbedder(dim=16)
    report = Ingestor(SqlCatalog(open_engine(tmp_path / "c.sqlite")), IndexStore(tmp_path / "data"), embedder,
                      settings).run(path)
    assert _images_embedded(embedder) == 12 and report.vector_notes == []


class _Breaks(FakeEmbedder):
    """Embeds one batch, then fails: an ingest stopped half-way."""

    def embed_images(self, images):
        if self.calls:
            raise RuntimeError("stopped half-way")
        return super().embed_images(images)


def test_an_ingest_stopped_half_way_takes_the_rest_from_the_vectors(tmp_path):
    settings = Settings(data_dir=str(tmp_path / "data"), batch_size=5)  # no checkpoint before the stop
    catalog = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    store = IndexStore(tmp_path / "data")
    path = _dataset(tmp_path, None)
    with pytest.raises(RuntimeError):
        Ingestor(catalog, store, _Breaks(dim=16), settings).run(path)
    data = vector_parquet("fake-embedder/16", 16, image_ids())
    (path.parents[1] / "vectors").mkdir()
    (path.parents[1] / VECTORS).write_bytes(data)
    record = json.loads((path.parents[1] / "complete.json").read_text())
    record["vectors"] = [{"path": VECTORS, "size": len(data)}]
    (path.parents[1] / "complete.json").write_text(json.dumps(record))
    embedder = FakeEmbedder(dim=16)
    vs = catalog.vector_set(embedder.model_id, embedder.dim)
    unindexed = len(catalog.unindexed_ids(vs.id))
    assert unindexed == 5  # the first batch is in the catalog; its vectors never reached the index file
    report = Ingestor(catalog, store, embedder, settings).run(path)
    assert _images_embedded(embedder) == 0
    assert (report.reembedded, report.added) == (5, 7)  # the stopped batch's vectors, then the rest
    assert report.vector_notes[-1].startswith("12 photos took their vectors from the precomputed file")
    stored, expected = _stored(catalog, store, embedder), _file_vectors(data)
    assert len(stored) == 12 and catalog.count() == 12
    assert all(np.allclose(stored[k], v, atol=1e-5) for k, v in expected.items())  # all twelve from the file


def test_exported_vectors_are_read_back_as_companion_vectors(tmp_path):
    """`export vectors` (core.exporting -> core.ingest.companion_writer) writes what the reader takes: a second
    data directory ingests the same dataset with the written file beside it and embeds nothing, each photo
    getting the vector the first catalog holds for it."""
    from core import exporting

    first, embedder, catalog, store = _ingest(tmp_path / "first", None)
    assert first.added == 12 and _images_embedded(embedder) == 12
    vs = catalog.vector_set(embedder.model_id, embedder.dim)
    index, _ = store.open(vs, catalog)
    sources = exporting.ExportSources(Settings(data_dir=str(tmp_path / "first" / "data")), None, catalog.get_photos,
                                      vectors=lambda: (embedder.model_id, index.ids(), index.matrix()))
    out = tmp_path / "validation.parquet"
    done = exporting.export(sources, "vectors", out)
    assert done.rows == 12 and done.path == out and not done.notices
    table = pq.read_table(out)
    assert table.schema.metadata[b"model_id"].decode() == embedder.model_id
    assert sorted(table.column("inat24_image_id").to_pylist()) == sorted(image_ids())
    second, again, catalog2, store2 = _ingest(tmp_path / "second", out.read_bytes())
    assert second.added == 12 and _images_embedded(again) == 0, again.calls
    before, after = _stored(catalog, store, embedder), _stored(catalog2, store2, again)
    assert set(before) == set(after) == set(image_ids())
    for key in before:
        np.testing.assert_allclose(after[key], before[key], atol=1e-6)


def test_vectors_export_refuses_a_query_and_a_collection_without_keys(tmp_path):
    from core import exporting
    from core.contracts.errors import InputError
    from core.contracts.records import Photo

    sources = exporting.ExportSources(Settings(data_dir=str(tmp_path)), None,
                                      lambda ids: [Photo(path=f"/p/{i}.jpg", id=i) for i in ids],
                                      vectors=lambda: ("m", np.array([1, 2]), np.ones((2, 4), np.float32)))
    with pytest.raises(InputError, match="whole collection"):
        exporting.export(sources, "vectors", tmp_path / "v.parquet", query="a heron")
    with pytest.raises(InputError, match="inat24_image_id") as err:
        exporting.export(sources, "vectors", tmp_path / "v.parquet")
    assert "hf://datasets" in err.value.hint
    assert not (tmp_path / "v.parquet").exists()
