"""The INQUIRE parquet source reads one row group at a time: metadata at the scan, each photo's bytes when
the ingest reads it (the right bytes for every row, across row groups, in any order)."""
from __future__ import annotations

import io

import pyarrow.parquet as pq

from core.ingest.sources import scan
from tests.hub_repos import inquire_parquet


def test_rows_of_every_row_group_with_their_own_bytes(tmp_path):
    f = tmp_path / "validation.parquet"
    f.write_bytes(inquire_parquet(rows_per_query=3, row_group_size=2))
    assert pq.ParquetFile(f).num_row_groups == 5
    source = scan(f, tmp_path / "media")
    assert source.kind == "inquire-parquet" and len(source.items) == 9
    expected = [r["image"]["bytes"] for r in pq.read_table(f).to_pylist()]
    for i in (8, 0, 3, 4, 1):  # out of order: row groups are read again as needed
        assert source.items[i].read() == expected[i]
    photo = source.items[5].photo
    assert photo.license == "cc-by-nc" and photo.rights_holder == "observer 5"
    assert photo.path.endswith("00005.jpg") and photo.extra["inat24_image_id"] == 1005
    assert io.BytesIO(source.items[5].read()).read(8) == b"\x89PNG\r\n\x1a\n"
