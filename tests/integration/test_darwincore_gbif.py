"""A Darwin Core Archive that GBIF would publish (issue 35, item 6), read back by a kept reader
(python-dwca-reader) and held to GBIF's rules: occurrenceID unique, basisOfRecord from its vocabulary,
eventDate ISO 8601, coordinates in range with a geodeticDatum, each licence one of the three GBIF takes (a
warning per record that is not), the Dublin Core terms under their own namespace, and an EML with title,
creator, contact, pubDate and a machine-readable licence. Two cameras' IMG_0001.JPG stay two names, values
are left as the source wrote them, countryCode and individualCount come from where they are recorded."""
from __future__ import annotations

from datetime import date, datetime

import pytest
from dwca.read import DwCAReader

from core import darwincore
from core.config import Settings
from core.contracts.camtrap import Capture, Deployment, Observation
from core.contracts.records import Photo
from core.dwc.eml import GBIF_LICENCES, dataset_licence, gbif_licence
from core.exporting import ExportSources, dwc_options
from storage.camtrap_store import SqlCamtrapStore
from storage.catalog import SqlCatalog
from storage.db import open_engine

DWC = "http://rs.tdwg.org/dwc/terms/"
DC = "http://purl.org/dc/terms/"
BASIS_VOCABULARY = {"PreservedSpecimen", "FossilSpecimen", "LivingSpecimen", "MaterialSample", "Event",
                    "HumanObservation", "MachineObservation", "Taxon", "Occurrence", "MaterialCitation"}
FORMULA = '=HYPERLINK("https://example.org","x")'


@pytest.fixture()
def archive(tmp_path):
    engine = open_engine(tmp_path / "ecolens.sqlite")
    catalog, store = SqlCatalog(engine), SqlCamtrapStore(engine)
    cards = tmp_path / "elsewhere" / "cards"  # not under the collection: named relative to their shared folder
    photos = [
        Photo(path=str(cards / "camA" / "IMG_0001.JPG"), sha256="1" * 64, scientific_name="Vulpes vulpes",
              kingdom="Animalia", observed_on=date(2024, 3, 1), latitude=50.5, longitude=4.25,
              license="CC BY 4.0", rights_holder="Trap team", extra={"countryCode": "be"}),
        Photo(path=str(cards / "camB" / "IMG_0001.JPG"), sha256="2" * 64, scientific_name="Meles meles",
              kingdom="Animalia", observed_on=date(2024, 3, 2), latitude=-33.9, longitude=151.2,
              license="cc0", rights_holder="Trap team", extra={"individualCount": "2"}),
        Photo(path="https://static.inaturalist.org/photos/9/large.jpg", sha256="3" * 64,
              scientific_name="Ardea cinerea", observed_on=date(2023, 7, 9), latitude=40.4, longitude=-3.7,
              license="CC-BY-NC", rights_holder=FORMULA,
              extra={"url": "https://www.inaturalist.org/observations/9", "country_code": "Spain",
                     "updated_at": "2024-05-02 10:11:12 UTC"}),
        Photo(path=str(tmp_path / "collection" / "heron.jpg"), sha256="4" * 64, scientific_name="Ardea alba",
              license="all rights reserved", rights_holder="Bo"),
        Photo(path=str(tmp_path / "collection" / "egret.jpg"), sha256="5" * 64, scientific_name="Egretta",
              license="https://example.org/my-licence", rights_holder="Cy"),
    ]
    ids = catalog.add_photos(photos)
    store.upsert_deployments([Deployment(key="camA")])
    store.set_captures([Capture(photo_id=ids[0], deployment_key="camA", captured_at="2024-03-01T22:10:00")])
    store.add_observations([
        Observation(level="media", type="animal", photo_id=ids[0], deployment_key="camA",
                    scientific_name="Vulpes vulpes", count=3),
        Observation(level="media", type="animal", photo_id=ids[0], deployment_key="camA",
                    scientific_name="Lepus europaeus", count=1)])  # another species on the frame: not the fox's
    settings = Settings(data_dir=str(tmp_path / "data"), corpus=str(tmp_path / "collection"),
                        dwc_contact="Ada King Lovelace", dwc_contact_email="ada@example.org")
    sources = ExportSources(settings, None, catalog.get_photos, store)
    notices: list[str] = []
    kept = catalog.get_photos(ids)
    n = darwincore.write_archive(tmp_path / "a.zip", [darwincore.Occurrence(p, "marked") for p in kept],
                                 [tmp_path / "collection", settings.path()], **dwc_options(sources, ids),
                                 notices=notices, published=date(2026, 11, 28))
    assert n == len(photos)
    with DwCAReader(str(tmp_path / "a.zip")) as dwca:
        rows = [r.data for r in dwca]
        media = [r.extensions[0].data for r in dwca]
        eml = dwca.metadata
    return rows, media, eml, notices


def _by(rows, name):
    return next(r for r in rows if r[DWC + "scientificName"] == name)


def test_every_record_holds_to_gbifs_rules(archive):
    rows, _, _, _ = archive
    ids = [r[DWC + "occurrenceID"] for r in rows]
    assert len(set(ids)) == len(ids) and all(ids)
    for r in rows:
        assert r[DWC + "basisOfRecord"] in BASIS_VOCABULARY
        if r[DWC + "eventDate"]:
            datetime.fromisoformat(r[DWC + "eventDate"])  # ISO 8601
        if r[DWC + "decimalLatitude"]:
            assert -90 <= float(r[DWC + "decimalLatitude"]) <= 90
            assert -180 <= float(r[DWC + "decimalLongitude"]) <= 180
            assert r[DWC + "geodeticDatum"] == "EPSG:4326"
        for term in ("license", "rightsHolder", "references", "modified"):
            assert DC + term in r and DWC + term not in r
    assert _by(rows, "Vulpes vulpes")[DWC + "basisOfRecord"] == "MachineObservation"  # a camera-trap frame
    assert _by(rows, "Ardea cinerea")[DWC + "basisOfRecord"] == "HumanObservation"


def test_each_licence_gbif_cannot_take_is_a_warning_and_the_rest_are_the_three(archive):
    rows, _, _, notices = archive
    taken = {r[DWC + "scientificName"] for r in rows if r[DC + "license"] in GBIF_LICENCES}
    assert taken == {"Vulpes vulpes", "Meles meles", "Ardea cinerea"}
    warned = [n for n in notices if "is not one GBIF publishes" in n]
    assert len(warned) == 2
    assert any("'all rights reserved'" in n for n in warned)
    assert any("'https://example.org/my-licence'" in n for n in warned)
    assert not any("contact" in n for n in notices)  # the settings name one


def test_values_stay_as_written_and_photos_keep_their_folders(archive):
    rows, media, _, _ = archive
    heron = _by(rows, "Ardea cinerea")
    assert heron[DC + "rightsHolder"] == FORMULA  # no spreadsheet guard inside the archive
    assert heron[DC + "references"] == "https://www.inaturalist.org/observations/9"
    assert heron[DC + "modified"] == "2024-05-02T10:11:12Z"
    names = {r[DWC + "scientificName"]: r[DWC + "associatedMedia"] for r in rows}
    assert names["Vulpes vulpes"] == "camA/IMG_0001.JPG" and names["Meles meles"] == "camB/IMG_0001.JPG"
    assert names["Ardea alba"] == "heron.jpg"  # under the collection: relative to it
    assert len(set(names.values())) == len(names)
    assert {m[DC + "identifier"] for m in media} == set(names.values())


def test_country_and_count_where_the_source_records_them(archive):
    rows, _, _, _ = archive
    assert _by(rows, "Vulpes vulpes")[DWC + "countryCode"] == "BE"
    assert _by(rows, "Ardea cinerea")[DWC + "countryCode"] == ""  # a country's name is not a code
    assert _by(rows, "Vulpes vulpes")[DWC + "individualCount"] == "3"  # the fox observation, not the hare
    assert _by(rows, "Meles meles")[DWC + "individualCount"] == "2"  # the source's column
    assert _by(rows, "Ardea alba")[DWC + "individualCount"] == ""


def test_the_eml_has_what_gbifs_profile_wants(archive):
    _, _, eml, _ = archive
    dataset = eml.find("dataset")
    assert dataset.findtext("title").strip()
    assert dataset.find("creator/individualName/surName").text == "Lovelace"
    contact = dataset.find("contact")
    assert contact.findtext("individualName/givenName") == "Ada King"
    assert contact.findtext("electronicMailAddress") == "ada@example.org"
    assert dataset.findtext("pubDate") == "2026-11-28"
    link = dataset.find("intellectualRights/para/ulink")
    # the most restrictive licence of the records GBIF takes: CC BY-NC 4.0 (the heron)
    assert link.get("url") == "https://creativecommons.org/licenses/by-nc/4.0/"
    assert "CC-BY-NC" in link.findtext("citetitle")


@pytest.mark.parametrize("written, url", [
    ("CC0", "https://creativecommons.org/publicdomain/zero/1.0/"),
    ("CC_BY_4_0", "https://creativecommons.org/licenses/by/4.0/"),
    ("CC-BY-NC", "https://creativecommons.org/licenses/by-nc/4.0/"),  # iNaturalist's, version assumed
    ("cc-by 2.0", ""), ("cc-by-sa", ""), ("CC BY-NC-ND 4.0", ""), ("PDM", ""), ("all rights reserved", ""),
    ("", ""),
])
def test_which_licences_gbif_takes(written, url):
    assert gbif_licence(written) == url


@pytest.mark.parametrize("records, dataset", [
    (["https://creativecommons.org/publicdomain/zero/1.0/"], "https://creativecommons.org/publicdomain/zero/1.0/"),
    (["https://creativecommons.org/publicdomain/zero/1.0/", "https://creativecommons.org/licenses/by/4.0/"],
     "https://creativecommons.org/licenses/by/4.0/"),
    ([""], "https://creativecommons.org/licenses/by-nc/4.0/"),
])
def test_the_dataset_takes_the_most_restrictive_licence(records, dataset):
    assert dataset_licence(records) == dataset


def test_no_contact_is_said(tmp_path):
    notices: list[str] = []
    darwincore.write_archive(tmp_path / "a.zip", [darwincore.Occurrence(Photo(path="x.jpg", sha256="9" * 64,
                                                                              license="CC0"))], notices=notices)
    assert notices == ["the archive names no contact person: set dwc_contact and dwc_contact_email before "
                       "publishing"]
    with DwCAReader(str(tmp_path / "a.zip")) as dwca:
        assert dwca.metadata.find("dataset/contact/organizationName").text == "EcoLens export"
