"""Values of a source that cannot be read, as a table (no database): each is left empty, kept in extra and
reported with its row, column, value and fix; dates with trailing text are refused, a time of day is not.
And the ingest's bookkeeping with a fake catalog: photos already indexed are handed on for a metadata update
only when the source says something about them (a CSV, not a folder), and the report says what changed."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import pytest

from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.ingest.decode import ReadItem
from core.ingest.ingestor import Ingestor
from core.ingest.sources import MAX_VALUE_NOTICES, SourceItem, parse_date, scan
from core.ingest.state import Deduper, IngestReport

DATES = [  # (text, date or None when refused)
    ("2024-05-31", date(2024, 5, 31)),
    ("2024-05-31T10:22:01", date(2024, 5, 31)),
    ("2024-05-31 10:22:01 UTC", date(2024, 5, 31)),
    ("2024-05-31 10:22 +02:00", date(2024, 5, 31)),
    ("2024-05-31T10:22:01.123Z", date(2024, 5, 31)),
    ("2024-02-30", None),
    ("2023-02-29", None),
    ("2024-13-01", None),
    ("2024-05-31 or so", None),
    ("2024-05-31abc", None),
    ("31/05/2024", None),
    ("2024-5-31", None),
]


@pytest.mark.parametrize("text, want", DATES, ids=[d[0] for d in DATES])
def test_dates_are_whole_days_or_refused(text, want):
    if want is None:
        with pytest.raises(InputError):
            parse_date(text)
    else:
        assert parse_date(text) == want


BAD = [  # (column, value, words in the notice, extra key)
    ("observed_on", "2024-02-30", "is not a day of the calendar", "observed_on_unparsed"),
    ("observed_on", "2024-05-01 approx", "is not a date (YYYY-MM-DD)", "observed_on_unparsed"),
    ("latitude", "abc", "is not a number", "latitude_invalid"),
    ("longitude", "12,5", "is not a number", "longitude_invalid"),
    ("latitude", "91", "is outside -90 to 90", "latitude_invalid"),
    ("longitude", "-180.5", "is outside -180 to 180", "longitude_invalid"),
]


def _csv(tmp_path, rows: list[dict]) -> str:
    import csv

    path = tmp_path / "obs.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return str(path)


@pytest.mark.parametrize("column, value, words, key", BAD, ids=[f"{b[0]}={b[1]}" for b in BAD])
def test_an_unreadable_value_is_named_with_its_row_column_and_fix(tmp_path, column, value, words, key):
    row = {"path": "a.png", "taxon_name": "Ardea alba", "observed_on": "2024-05-01", "latitude": "45.1",
           "longitude": "-73.5"}
    path = _csv(tmp_path, [row, {**row, "path": "b.png", column: value}])
    found = scan(path, tmp_path / "media")
    [note] = found.notices
    assert note.startswith(f"{path}:3: {column} {value!r} {words}; it was left empty (how to fix: ")
    bad = found.items[1].photo
    assert getattr(bad, column) is None and bad.extra[key] == value
    assert bad.scientific_name == "Ardea alba"  # the rest of the row is kept
    assert found.items[0].photo.extra == {}


def test_missing_values_are_not_errors_and_many_bad_ones_are_counted(tmp_path):
    rows = [{"path": f"{i}.png", "observed_on": "", "latitude": "NaN", "longitude": ""} for i in range(3)]
    assert scan(_csv(tmp_path, rows), tmp_path / "media").notices == []
    rows = [{"path": f"{i}.png", "observed_on": "someday", "latitude": "", "longitude": ""} for i in range(30)]
    notes = scan(_csv(tmp_path, rows), tmp_path / "media").notices
    assert len(notes) == MAX_VALUE_NOTICES + 1 and notes[-1].startswith("... and 10 more values")


@dataclass
class FakeCatalog:
    hashes: dict[str, int] = field(default_factory=dict)
    changes: dict[int, list[str]] = field(default_factory=dict)
    updates: list = field(default_factory=list)

    def ids_for_hashes(self, hashes):
        return {h: self.hashes[h] for h in hashes if h in self.hashes}

    def update_metadata(self, updates, source=""):
        self.updates.append((list(updates), source))
        return {i: self.changes[i] for i, _ in updates if i in self.changes}


def _read(name: str, digest: str, species: str = "") -> ReadItem:
    photo = Photo(path=name, scientific_name=species)
    return ReadItem(SourceItem(name, lambda: b"x", photo), data=b"x", digest=digest, nbytes=1)


@pytest.mark.parametrize("carries", [True, False])
def test_known_photos_are_handed_on_only_from_a_source_with_metadata(carries):
    cat, report = FakeCatalog(hashes={"h1": 7}), IngestReport("s")
    dedupe = Deduper(cat, report, carries_metadata=carries)
    fresh = dedupe.new_items([_read("a", "h1", "Ardea alba"), _read("b", "h2")])
    assert [r.item.name for r in fresh] == ["b"] and report.already == 1
    assert [(i, p.scientific_name) for i, p in dedupe.known] == ([(7, "Ardea alba")] if carries else [])


def test_the_report_names_the_photos_and_fields_updated():
    cat = FakeCatalog(changes={7: ["scientific_name", "observed_on"], 8: ["scientific_name"]})
    ingestor = Ingestor(cat, None, None, None)
    report = IngestReport("obs.csv", kind="inat-csv")
    ingestor._update_metadata([(7, Photo(path="a")), (8, Photo(path="b")), (9, Photo(path="c"))], report)
    assert (report.updated, report.updated_fields) == (2, {"scientific_name": 2, "observed_on": 1})
    assert report.notices == ["2 photos already indexed: their metadata was updated from the CSV (species 2, "
                              "date 1); they were not embedded again"]
    assert report.to_json()["updated"] == 2 and cat.updates[0][1] == "obs.csv"
    quiet = IngestReport("obs.csv", kind="inat-csv")
    Ingestor(FakeCatalog(), None, None, None)._update_metadata([(7, Photo(path="a"))], quiet)
    assert quiet.updated == 0 and quiet.notices == ["1 photo already indexed: the CSV says nothing new about "
                                                    "them (metadata unchanged)"]
