"""The rows of a parquet of precomputed vectors as Photo records, read column by column from Arrow batches.

Why not one dict per row: at millions of rows, turning each row into a dict and looking every one of its
columns up again by its accepted header names cost more than SQLite's insert of it (bench/scale.py). Here the
columns are chosen once per file, each column of a batch becomes one Python list, and a value that recurs (a
date, a well-formed coordinate) is read once per distinct value; what is unreadable goes through exactly the
per-value checks of core.ingest.sources (left empty, kept in extra, noted), so the records are the same as a
row-by-row reading would give."""
from __future__ import annotations

from datetime import date
from pathlib import Path

from core.contracts.records import Photo
from core.ingest.sources import CSV_COLUMNS, ValueNotes, _coordinate, _date_value

NAME_FIELDS = ("scientific_name", "common_name", "kingdom", "phylum", "class_name", "order", "family", "genus",
               "license", "rights_holder", "caption")  # Photo's text fields, read as str(value or "")
_SCALARS = (str, int, float, bool)


class ArrowRows:
    """Which column of the file gives which field (the first accepted header present, as for a CSV), and the
    records of each batch."""

    def __init__(self, path: Path, names: list[str], ref_col: str, vec_col: str):
        self.path, self.ref_col = Path(path), ref_col
        present = [n for n in names if n != vec_col]
        self.column = {ours: next((h for h in accepted if h in present), None) for ours, accepted in CSV_COLUMNS.items()
                       if ours != "path"}
        self.header = {ours: self.column.get(ours) or ours for ours in CSV_COLUMNS}
        used = {h for accepted in CSV_COLUMNS.values() for h in accepted} | {vec_col, ref_col, "model_id", "model"}
        self.extra_cols = [n for n in present if n not in used]
        self._dates: dict[tuple[type, object], date | None] = {}  # a readable date value -> its date

    def columns(self) -> list[str]:
        """The columns a batch must hold for `photos` (the vector column is read apart)."""
        wanted = [self.ref_col, *(c for c in self.column.values() if c), *self.extra_cols]
        return list(dict.fromkeys(wanted))

    def photos(self, batch, notes: ValueNotes) -> tuple[list[str], list[Photo]]:
        """(each row's reference as the report names it, each row's record) for an Arrow record batch."""
        n = batch.num_rows
        cols = {name: batch.column(name).to_pylist() for name in self.columns()}
        blank = [""] * n

        def col(ours: str) -> list:
            return cols[self.column[ours]] if self.column.get(ours) else blank

        refs = [str(v or "").strip() for v in cols[self.ref_col]]
        texts = {f: [str(v or "") for v in col(f)] for f in NAME_FIELDS}
        extras = [[(k, v) for k, v in zip(self.extra_cols, vals) if isinstance(v, _SCALARS)]
                  for vals in zip(*(cols[c] for c in self.extra_cols))] if self.extra_cols else None
        observed, lat, lon = col("observed_on"), col("latitude"), col("longitude")
        names, photos = [], []
        base = self.path.parent
        for i in range(n):
            ref = refs[i]
            extra = dict(extras[i]) if extras is not None else {}
            remote = ref.startswith(("http://", "https://"))
            where = None
            day = self._date(observed[i], extra, notes, lambda ref=ref: f"{self.path.name}:{ref or 'row'}")
            la, lo = lat[i], lon[i]
            if la is None or la == "":
                la = None
            elif not (type(la) is float and -90.0 <= la <= 90.0):
                where = where or f"{self.path.name}:{ref or 'row'}"
                la = _coordinate(la, "latitude", self.header["latitude"], 90, where, extra, notes)
            if lo is None or lo == "":
                lo = None
            elif not (type(lo) is float and -180.0 <= lo <= 180.0):
                where = where or f"{self.path.name}:{ref or 'row'}"
                lo = _coordinate(lo, "longitude", self.header["longitude"], 180, where, extra, notes)
            photos.append(Photo(path=ref if remote or not ref else str((base / ref).resolve()), source="precomputed",
                                scientific_name=texts["scientific_name"][i], common_name=texts["common_name"][i],
                                kingdom=texts["kingdom"][i], phylum=texts["phylum"][i],
                                class_name=texts["class_name"][i], order=texts["order"][i],
                                family=texts["family"][i], genus=texts["genus"][i], observed_on=day, latitude=la,
                                longitude=lo, license=texts["license"][i], rights_holder=texts["rights_holder"][i],
                                caption=texts["caption"][i], extra=extra))
            names.append(ref or f"{self.path}:row")
        return names, photos

    def _date(self, value, extra: dict, notes: ValueNotes, where) -> date | None:
        """core.ingest.sources._date_value, read once per distinct readable value (an unreadable one is noted
        on every row that has it)."""
        key = (type(value), value)
        try:
            return self._dates[key]
        except KeyError:
            pass
        except TypeError:  # (not hashable: read on its own)
            return _date_value(value, where(), self.header["observed_on"], extra, notes)
        before = notes.count
        day = _date_value(value, where(), self.header["observed_on"], extra, notes)
        if notes.count == before and len(self._dates) < 100_000:  # readable (or empty): the same for every row
            self._dates[key] = day
        return day
