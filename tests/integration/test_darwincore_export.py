"""Exports an analyst can use, on real SQLite: label exports hold one row per query, photo and annotator (the
key-press log is its own export), and photos judged relevant or marked go out as a Darwin Core Archive that
an independent reader (python-dwca-reader) opens, with ISO 8601 dates, decimal degrees, licence URLs and the
right basisOfRecord; synthetic demo photos say so."""
from __future__ import annotations

import csv
import re
import zipfile
from datetime import date
from xml.etree import ElementTree as ET

import pytest
from dwca.read import DwCAReader

from core import darwincore
from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.contracts.sessionlog import Label
from core.labels import export_labels
from storage.catalog import SqlCatalog
from storage.db import open_engine
from storage.sessionlog import SqlSessionLog

DWC = "http://rs.tdwg.org/dwc/terms/"
DC = "http://purl.org/dc/terms/"


@pytest.fixture()
def stores(tmp_path):
    engine = open_engine(tmp_path / "ecolens.sqlite")
    catalog, log = SqlCatalog(engine), SqlSessionLog(engine, tmp_path / "artefacts")
    demo = tmp_path / "demo"
    demo.mkdir()
    photos = [
        Photo(path="https://static.inaturalist.org/photos/1/large.jpg", sha256="a" * 64,
              scientific_name="Rana temporaria", common_name="Common Frog", kingdom="Animalia", phylum="Chordata",
              class_name="Amphibia", order="Anura", family="Ranidae", genus="Rana", observed_on=date(2024, 5, 1),
              latitude=52.5, longitude=-3.25, license="CC-BY-NC", rights_holder="=ada",
              source="inat-csv", extra={"id": "101", "url": "https://www.inaturalist.org/observations/101",
                                        "positional_accuracy": "12"}),
        Photo(path=str(tmp_path / "trap" / "IMG_0001.JPG"), sha256="b" * 64, scientific_name="Vulpes vulpes",
              kingdom="Animalia", genus="Vulpes", observed_on=date(2023, 12, 31), license="cc0",
              rights_holder="Trap team", source="inat-csv", extra={"camera_trap": "true"}),
        Photo(path=str(demo / "p3.png"), sha256="c" * 64, scientific_name="Ranunculus",
              genus="Ranunculus", kingdom="Plantae", license="https://creativecommons.org/licenses/by/2.0/",
              source="inat-csv", extra={"inat24_image_id": "777"}),
    ]
    ids = catalog.add_photos(photos)
    return catalog, log, ids, tmp_path


def _label(log, sid, query, pid, value, who):
    return log.add_label(Label(session_id=sid, query=query, photo_id=pid, label=value, annotator=who))


def test_label_exports_hold_one_row_per_query_photo_and_annotator(stores):
    catalog, log, (p1, p2, p3), tmp = stores
    sid = log.start_session("label", "frogs")
    for pid, value, who in [(p1, -1, "ada"), (p1, 1, "ada"), (p2, 0, "ada"), (p2, 1, "ada"), (p1, 1, "bob"),
                            (p2, 0, "bob"), (p1, 0, "ada"), (p1, 1, "ada")]:
        _label(log, sid, "frogs", pid, value, who)
    _label(log, sid, "foxes", p2, 1, "ada")
    labels = log.labels(query="frogs")
    assert export_labels(labels, "csv", tmp / "l.csv") == 4
    rows = list(csv.DictReader((tmp / "l.csv").open()))
    assert sorted((r["photo_id"], r["annotator"], r["judgement"]) for r in rows) == sorted([
        (str(p1), "ada", "relevant"), (str(p2), "ada", "relevant"), (str(p1), "bob", "relevant"),
        (str(p2), "bob", "not relevant")])
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT.*", r["created_at"]) for r in rows)
    assert export_labels(labels, "keypresses", tmp / "k.csv") == 8


def test_relevant_photos_go_out_as_a_darwin_core_archive(stores):
    catalog, log, (p1, p2, p3), tmp = stores
    sid = log.start_session("label", "frogs")
    _label(log, sid, "frogs", p1, 1, "ada")
    _label(log, sid, "frogs", p1, 0, "bob")
    _label(log, sid, "frogs", p2, 1, "ada")
    _label(log, sid, "frogs", p3, 0, "ada")  # not relevant: not exported
    photos = {p.id: p for p in catalog.get_photos([p1, p2, p3])}
    n = export_labels(log.labels(query="frogs"), "dwc", tmp / "a.zip", photos=photos, roots=[tmp],
                      dwc={"default_basis": "HumanObservation"})
    assert n == 2
    with DwCAReader(str(tmp / "a.zip")) as dwca:
        assert dwca.descriptor.core.type == DWC + "Occurrence"
        rows = {r.id: r for r in dwca}
        assert set(rows) == {"https://www.inaturalist.org/observations/101", "urn:sha256:" + "b" * 64}
        frog = rows["https://www.inaturalist.org/observations/101"].data
        assert frog[DWC + "eventDate"] == "2024-05-01" and frog[DWC + "basisOfRecord"] == "HumanObservation"
        assert float(frog[DWC + "decimalLatitude"]) == 52.5 and float(frog[DWC + "decimalLongitude"]) == -3.25
        assert frog[DC + "license"] == "https://creativecommons.org/licenses/by-nc/4.0/"
        assert frog[DWC + "taxonRank"] == "species" and frog[DWC + "class"] == "Amphibia"
        assert frog[DWC + "coordinateUncertaintyInMeters"] == "12"
        assert frog[DC + "rightsHolder"] == "=ada"  # as the source wrote it: the archive is data, not a spreadsheet
        assert DWC + "license" not in frog and DWC + "rightsHolder" not in frog  # Dublin Core terms, not DwC
        assert frog[DC + "references"] == "https://www.inaturalist.org/observations/101"
        assert "by ada" in frog[DWC + "occurrenceRemarks"] and "not relevant for bob" in frog[DWC + "occurrenceRemarks"]
        assert "without a version" in frog[DWC + "occurrenceRemarks"]  # the licence URL's 4.0 is assumed, said
        fox = rows["urn:sha256:" + "b" * 64]
        assert fox.data[DWC + "basisOfRecord"] == "MachineObservation"  # camera_trap = true
        assert fox.data[DC + "license"] == "https://creativecommons.org/publicdomain/zero/1.0/"
        assert fox.data[DWC + "associatedMedia"] == "trap/IMG_0001.JPG"  # relative, never the server's path
        media = fox.extensions[0].data
        assert fox.extensions[0].rowtype == "http://rs.gbif.org/terms/1.0/Multimedia"
        assert media[DC + "type"] == "StillImage" and media[DC + "format"] == "image/jpeg"
        assert media[DC + "license"] == fox.data[DC + "license"]
    with zipfile.ZipFile(tmp / "a.zip") as zf:
        assert sorted(zf.namelist()) == ["eml.xml", "meta.xml", "multimedia.txt", "occurrence.txt"]
        header = zf.read("occurrence.txt").decode().splitlines()[0].split("\t")
        fields = ET.fromstring(zf.read("meta.xml")).find("{http://rs.tdwg.org/dwc/text/}core")
        named = {int(f.get("index")): f.get("term").rsplit("/", 1)[1]
                 for f in fields.findall("{http://rs.tdwg.org/dwc/text/}field")}
        assert [named[i] for i in range(len(header))] == header  # meta.xml says what each column is
        iris = {f.get("term").rsplit("/", 1)[1]: f.get("term") for f in fields.findall(
            "{http://rs.tdwg.org/dwc/text/}field")}
        assert {t for t, iri in iris.items() if iri.startswith(DC)} == {"license", "rightsHolder", "references",
                                                                         "modified"}
        assert all(iri == DWC + t for t, iri in iris.items() if t not in ("license", "rightsHolder", "references",
                                                                          "modified"))
        ET.fromstring(zf.read("eml.xml"))


def test_marked_synthetic_photos_say_so_and_bad_requests_are_messages(stores, monkeypatch):
    catalog, log, (p1, p2, p3), tmp = stores
    photos = {p.id: p for p in catalog.get_photos([p1, p2, p3])}
    synthetic = lambda p: "synthetic picture" if "/demo/" in p.path else ""  # noqa: E731
    marks = [{"id": p3, "query": "more like photo 9 (Buttercup)", "preset": "Fast"}, {"id": p1, "query": "frog"}]
    n = darwincore.write_archive(tmp / "m.zip", darwincore.marked_occurrences(marks, photos), [tmp],
                                 synthetic=synthetic, default_basis="MachineObservation")
    assert n == 2
    with DwCAReader(str(tmp / "m.zip")) as dwca:
        rows = {r.id: r.data for r in dwca}
        demo = rows["urn:inat24:image:777"]
        assert "synthetic picture" in demo[DWC + "occurrenceRemarks"]
        assert "more like photo 9 (Buttercup)" in demo[DWC + "occurrenceRemarks"]
        assert demo[DWC + "taxonRank"] == "genus" and demo[DWC + "eventDate"] == ""
        assert demo[DC + "license"] == "https://creativecommons.org/licenses/by/2.0/"
        assert demo[DWC + "basisOfRecord"] == "MachineObservation"  # the setting, where the source says nothing
        assert "not real observations" in dwca.open_included_file("eml.xml").read()
    with pytest.raises(InputError, match="No photo"):
        darwincore.write_archive(tmp / "e.zip", [], [tmp])
    with pytest.raises(InputError, match="basisOfRecord"):
        darwincore.write_archive(tmp / "e.zip", darwincore.marked_occurrences(marks, photos), default_basis="Fossil")
    with pytest.raises(InputError, match="judged relevant"):
        sid = log.start_session("label", "x")
        _label(log, sid, "x", p1, 0, "ada")
        export_labels(log.labels(query="x"), "dwc", tmp / "x.zip", photos=photos)
