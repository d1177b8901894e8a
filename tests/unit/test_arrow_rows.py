"""The column-by-column reading of a precomputed parquet's rows (core.ingest.arrow_rows) gives the records, notes
and extras that reading each row on its own with core.ingest.sources' rules gives, on values that are
unreadable, repeated, empty, of other types and in extra columns; an unreadable value repeated on many rows is
noted on each of them (the per-value memory keeps only readable values)."""
from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pyarrow as pa

from core.contracts.records import Photo
from core.ingest.arrow_rows import ArrowRows
from core.ingest.sources import CSV_COLUMNS, ValueNotes, _coordinate, _date_value

PATH = Path("/data/vectors.parquet")


def _one_by_one(row: dict, ref_col: str, vec_col: str, notes: ValueNotes) -> tuple[str, Photo]:
    """A row read on its own (a dict of its cells), field by field with the sources' checks: the reference."""
    ref = str(row.get(ref_col) or "").strip()
    values = {ours: row.get(next((h for h in names if h in row), ""), "") for ours, names in CSV_COLUMNS.items()
              if ours != "path"}
    used = {h for names in CSV_COLUMNS.values() for h in names} | {vec_col, ref_col, "model_id", "model"}
    extra = {k: v for k, v in row.items() if k not in used and isinstance(v, (str, int, float, bool))}
    where = f"{PATH.name}:{ref or 'row'}"
    header = {ours: next((h for h in names if h in row), ours) for ours, names in CSV_COLUMNS.items()}
    observed = _date_value(values.get("observed_on"), where, header["observed_on"], extra, notes)
    remote = ref.startswith(("http://", "https://"))
    text = {f: str(values.get(f) or "") for f in ("scientific_name", "common_name", "kingdom", "phylum", "class_name",
                                                   "order", "family", "genus", "license", "rights_holder", "caption")}
    photo = Photo(path=ref if remote or not ref else str((PATH.parent / ref).resolve()), source="precomputed",
                  observed_on=observed,
                  latitude=_coordinate(values.get("latitude"), "latitude", header["latitude"], 90, where, extra, notes),
                  longitude=_coordinate(values.get("longitude"), "longitude", header["longitude"], 180, where, extra,
                                        notes), extra=extra, **text)
    return ref or f"{PATH}:row", photo


def _same(a: Photo, b: Photo) -> bool:
    def norm(p: Photo) -> dict:
        d = p.to_json() if hasattr(p, "to_json") else vars(p)
        return {k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}
    return norm(a) == norm(b)


def _table(n: int = 60) -> pa.Table:
    dates = ["2024-05-31", "2024-02-30", "soon", None, "", "2023-01-01T10:00:00Z", "2019-12-12 approx", "nan"]
    lats = [45.5, float("nan"), 91.0, None, -89.9, 0.0, -90.0]
    lons = [-73.6, 181.0, None, float("nan"), 179.9, -180.0, 12.0, -180.5]
    names = ["Accipiter nisus", "Accipiter  nisus ", "Ace\u0301r rubrum", "", None]
    return pa.table({
        "url": [["https://example.org/p/%d.jpg" % i, "", "  photos/%d.jpg " % i, None][i % 4] for i in range(n)],
        "taxon_name": [names[i % len(names)] for i in range(n)], "genus": [["Acer", None, ""][i % 3] for i in range(n)],
        "observed_on": [dates[i % len(dates)] for i in range(n)], "lat": [lats[i % len(lats)] for i in range(n)],
        "lng": [lons[i % len(lons)] for i in range(n)],
        "licence": [[" CC BY 4.0 ", None, "cc0"][i % 3] for i in range(n)],
        "user_login": [None if i % 5 == 0 else f"user {i % 3}" for i in range(n)],
        "observation_id": list(range(n)), "quality": [["research", None][i % 2] for i in range(n)],
        "tags": [[1, 2]] * n, "flag": [bool(i % 2) for i in range(n)], "model_id": ["m"] * n,
        "emb": pa.FixedSizeListArray.from_arrays(pa.array([0.5] * (n * 4), pa.float32()), 4)})


def _check(table: pa.Table, ref_col: str = "url") -> None:
    reader = ArrowRows(PATH, table.schema.names, ref_col, "emb")
    fast_notes, slow_notes = ValueNotes(), ValueNotes()
    names, photos = [], []
    for batch in table.to_batches(max_chunksize=17):  # several batches: what is remembered carries over
        got = reader.photos(batch.select(reader.columns()), fast_notes)
        names += got[0]
        photos += got[1]
    want = [_one_by_one(row, ref_col, "emb", slow_notes) for row in table.drop_columns(["emb"]).to_pylist()]
    assert names == [w[0] for w in want]
    for got_photo, (_, want_photo) in zip(photos, want):
        assert _same(got_photo, want_photo), (got_photo, want_photo)
    assert len(photos) == len(want)
    assert (fast_notes.count, fast_notes.all()) == (slow_notes.count, slow_notes.all())


def test_rows_read_by_column_are_the_rows_read_one_by_one():
    _check(_table())


def test_an_unreadable_date_is_noted_on_every_row_that_has_it():
    table = pa.table({"path": [f"https://x.org/{i}.jpg" for i in range(40)], "observed_on": ["someday"] * 40,
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array([1.0] * 80, pa.float32()), 2)})
    reader, notes = ArrowRows(PATH, table.schema.names, "path", "emb"), ValueNotes()
    _, photos = reader.photos(table.to_batches()[0], notes)
    assert notes.count == 40 and all(p.extra == {"observed_on_unparsed": "someday"} for p in photos)
    _check(table, "path")


def test_typed_columns_dates_and_whole_number_coordinates():
    n = 12
    table = pa.table({"image_path": [f"https://x.org/{i}.jpg" for i in range(n)],
                      "date": pa.array([date(2020, 1, 1 + i % 3) if i % 4 else None for i in range(n)], pa.date32()),
                      "latitude": pa.array([[10, 95, -90, None][i % 4] for i in range(n)], pa.int64()),
                      "longitude": pa.array([["12.5", "east", "", "-200"][i % 4] for i in range(n)]),
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array([1.0] * (2 * n), pa.float32()), 2)})
    _check(table, "image_path")
