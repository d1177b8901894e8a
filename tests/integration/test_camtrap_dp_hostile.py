"""Bad Camtrap DP packages, one case each, made from the standard's example by one change: a package that cannot
be used is refused with a message saying what is wrong and how to fix it, and nothing is written; a row that
cannot be read is skipped with its table, row, field and value, and the rest is ingested; a medium whose file
cannot be had (missing, outside the package, broken) stays in the catalog without a vector. The network is
off throughout (the example's URLs are not reached)."""
from __future__ import annotations

import csv
import json
import shutil
import socket
import threading
import zipfile
from pathlib import Path

import pytest

from app import build_services
from core.config import load_settings
from core.contracts.errors import InputError
from core.ingest.downloads import DownloadError, DownloadPolicy
from core.ingest.host_gate import HostGate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "fixtures" / "camtrap-dp-example"
FIRST_LOCAL = "20210531082538-RCNX0031.JPG"


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    def lookup(host, *args, **kwargs):
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise socket.gaierror(socket.EAI_NONAME, "offline test")
        return real(host, *args, **kwargs)
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lookup)


def _package(tmp_path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "pkg"))


def _edit_csv(folder: Path, name: str, change) -> None:
    with open(folder / name, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    change(rows)
    with open(folder / name, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)


def _set(name: str, row: int, column: str, value: str):
    """Set one cell (row 2 is the first data row, as the messages count)."""
    def change(folder: Path) -> None:
        def edit(rows):
            rows[row - 1][rows[0].index(column)] = value
        _edit_csv(folder, name, edit)
    return change


def _descriptor(change):
    def apply(folder: Path) -> None:
        d = json.loads((folder / "datapackage.json").read_text())
        change(d)
        (folder / "datapackage.json").write_text(json.dumps(d))
    return apply


def _media_row_of(folder: Path, file_name: str) -> int:
    with open(folder / "media.csv", newline="", encoding="utf-8") as fh:
        return next(n for n, r in enumerate(csv.DictReader(fh), start=2) if r["filePath"].endswith(file_name))


def _services(tmp_path):
    return build_services(load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash",
                                        checkpoint_s=0.0, batch_size=16, max_image_pixels=4_000_000))


REFUSED = [  # (case, change to the package, words the message must hold)
    ("descriptor not JSON", lambda f: (f / "datapackage.json").write_text("{not json"), "not valid JSON"),
    ("descriptor a list", lambda f: (f / "datapackage.json").write_text("[]"), "not a JSON object"),
    ("no profile", _descriptor(lambda d: d.pop("profile")), "not a Camtrap DP 1.0 package"),
    ("an old version", _descriptor(lambda d: d.update(
        profile="https://raw.githubusercontent.com/tdwg/camtrap-dp/0.1.7/camtrap-dp-profile.json")),
     "not a Camtrap DP 1.0"),
    ("no project", _descriptor(lambda d: d.pop("project")), "'project' is a required property"),
    ("a contributor's role", _descriptor(lambda d: d["contributors"][0].update(role="boss")), "contributors/0/role"),
    ("no observations table", _descriptor(lambda d: d.update(
        resources=[r for r in d["resources"] if r["name"] != "observations"])), "observations"),
    ("a schema of another standard", _descriptor(lambda d: d["resources"][1].update(
        schema="https://example.org/media-schema.json")), "resources/1/schema"),
    ("a table file missing", lambda f: (f / "deployments.csv").unlink(), "deployments.csv' is not a file"),
    ("an extra column", lambda f: _edit_csv(f, "deployments.csv", lambda rows: [
        r.append("x") for r in rows]), "extra label"),
    ("a missing column", lambda f: _edit_csv(f, "media.csv", lambda rows: [r.pop(3) for r in rows]), "missing label"),
]


@pytest.mark.parametrize("case,change,words", REFUSED, ids=[c[0] for c in REFUSED])
def test_a_package_that_cannot_be_used_is_refused_with_the_reason_and_nothing_is_written(tmp_path, case, change, words):
    folder = _package(tmp_path)
    change(folder)
    services = _services(tmp_path)
    with pytest.raises(InputError) as err:
        services.ingestor().run(folder)
    assert words in err.value.message and err.value.hint
    assert services.catalog.count() == 0 and services.camtrap.deployments() == []


SKIPPED = [  # (case, change, the skipped row, words of its reason, media and observations left)
    ("a file path that climbs out", _set("media.csv", 2, "filePath", "../../etc/passwd"), "media.csv row 2",
     "filePath '../../etc/passwd'", 422, 548),
    ("a timestamp that is not one", _set("media.csv", 3, "timestamp", "yesterday"), "media.csv row 3",
     "timestamp 'yesterday': is not a datetime of the form %Y-%m-%dT%H:%M:%S%z", 422, 548),
    ("a medium without its id", _set("media.csv", 4, "mediaID", ""), "media.csv row 4", "mediaID", 422, 548),
    ("a medium of an unknown deployment", _set("media.csv", 5, "deploymentID", "nowhere"), "media.csv row 5",
     '"nowhere" not found', 422, 548),
    ("filePublic neither true nor false", _set("media.csv", 6, "filePublic", "maybe"), "media.csv row 6",
     "filePublic 'maybe'", 422, 548),
    ("a box outside the frame", _set("observations.csv", 3, "bboxX", "2.5"), "observations.csv row 3", "bboxX '2.5'",
     423, 548),
    ("an unknown observation type", _set("observations.csv", 4, "observationType", "ghost"),
     "observations.csv row 4", "observationType 'ghost'", 423, 548),
    ("a deployment without latitude", _set("deployments.csv", 2, "latitude", ""), "deployments.csv row 2", "latitude",
     None, None),
    ("a latitude in words", _set("deployments.csv", 2, "latitude", "north-ish"), "deployments.csv row 2",
     "latitude 'north-ish': is not a number", None, None),
]


@pytest.mark.parametrize("case,change,row,words,media,observations", SKIPPED, ids=[c[0] for c in SKIPPED])
def test_a_row_that_cannot_be_read_is_skipped_with_its_reason_and_the_rest_goes_on(tmp_path, case, change, row, words,
                                                                                  media, observations):
    folder = _package(tmp_path)
    change(folder)
    services = _services(tmp_path)
    report = services.ingestor().run(folder)
    reasons = dict(report.skipped)
    assert row in reasons and words in reasons[row], report.skipped
    store = services.camtrap
    if media is None:  # a deployment: its media and their observations go with it, each named
        assert len(store.deployments()) == 3
        assert any(n.startswith("media.csv") and "deployment" in r for n, r in report.skipped)
        assert services.catalog.count() == 423 - sum(1 for n, _ in report.skipped if n.startswith("media.csv"))
        return
    assert services.catalog.count() == media and len(store.observations()) == observations
    assert len(store.deployments()) == 4


def test_observations_of_a_skipped_medium_are_skipped_and_named(tmp_path):
    folder = _package(tmp_path)
    _set("media.csv", 2, "timestamp", "never")(folder)
    with open(folder / "media.csv", newline="") as fh:
        media_id = next(iter(csv.DictReader(fh)))["mediaID"]
    report = _services(tmp_path).ingestor().run(folder)
    named = [r for n, r in report.skipped if n.startswith("observations.csv")]
    assert named and all(media_id in r for r in named)


KEPT = [  # (case, change, the reason kept on the photo)
    ("a file missing from the package", lambda f: (f / "media" / FIRST_LOCAL).unlink(), "not in the package"),
    ("a file that links outside the package", lambda f: _link_out(f / "media" / FIRST_LOCAL), "outside the package"),
    ("a file that is not a picture", lambda f: (f / "media" / FIRST_LOCAL).write_bytes(b"\xff\xd8\xff broken"),
     "could not"),
    ("a video", lambda f: _set("media.csv", _media_row_of(f, FIRST_LOCAL), "fileMediatype", "video/mp4")(f), "video"),
]


@pytest.mark.parametrize("case,change,why", KEPT, ids=[c[0] for c in KEPT])
def test_a_medium_whose_file_cannot_be_had_stays_without_a_vector(tmp_path, case, change, why):
    folder = _package(tmp_path)
    change(folder)
    services = _services(tmp_path)
    report = services.ingestor().run(folder)
    assert report.added == 9 and report.skipped == [] and services.catalog.count() == 423
    photo_id = services.camtrap.photo_ids_for_media([_media_id(folder, FIRST_LOCAL)])
    photo = services.catalog.get_photos(list(photo_id.values()))[0]
    assert photo.sha256.startswith("media:") and why in photo.extra["file_missing"]
    assert services.catalog.unindexed_ids(services.catalog.vector_sets()[0].id) == []
    assert len(services.camtrap.observations()) == 549


def _link_out(f: Path) -> None:
    outside = f.parents[2] / "outside.jpg"
    outside.write_bytes(f.read_bytes())
    f.unlink()
    f.symlink_to(outside)


def _media_id(folder: Path, file_name: str) -> str:
    with open(folder / "media.csv", newline="", encoding="utf-8") as fh:
        return next(r["mediaID"] for r in csv.DictReader(fh) if r["fileName"] == file_name)


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


ZIPS = [  # (case, members or raw bytes, words)
    ("a zip that is not a package", {"photos/a.jpg": b"x", "notes.txt": b"hello"}, "holds no datapackage.json"),
    ("not a zip at all", b"PK\x03\x04 this is not a zip", "not a readable zip file"),
    ("a member that climbs out", {"datapackage.json": b"{}", "../evil.txt": b"x"}, "outside the package folder"),
]


@pytest.mark.parametrize("case,members,words", ZIPS, ids=[c[0] for c in ZIPS])
def test_a_bad_zip_gets_a_clear_message(tmp_path, case, members, words):
    path = tmp_path / "package.zip"
    if isinstance(members, bytes):
        path.write_bytes(members)
    else:
        _zip(path, members)
    services = _services(tmp_path)
    with pytest.raises(InputError) as err:
        services.ingestor().run(path)
    assert words in err.value.message and err.value.hint
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "data" / "evil.txt").exists()


def test_a_zip_with_the_package_in_one_folder_is_read(tmp_path):
    members = {f"export/{f.relative_to(EXAMPLE)}": f.read_bytes() for f in EXAMPLE.rglob("*") if f.is_file()}
    services = _services(tmp_path)
    report = services.ingestor().run(_zip(tmp_path / "agouti-export.zip", members))
    assert report.added == 10 and services.catalog.count() == 423


def test_a_host_that_fails_is_tried_once_even_by_many_threads_at_once():
    calls: list[str] = []
    release = threading.Event()

    def fetch(url, policy):
        calls.append(url)
        release.wait(5)
        if "down.example" in url:
            raise DownloadError(f"{url}: the name down.example could not be resolved", True)
        if "missing" in url:
            raise DownloadError(f"{url} cannot be read: the server answered HTTP 404")
        return b"bytes"

    gate = HostGate(DownloadPolicy(), fetch=fetch)
    errors: list[str] = []

    def get(url):
        try:
            gate.fetch(url)
        except DownloadError as exc:
            errors.append(str(exc))
    threads = [threading.Thread(target=get, args=(f"https://down.example/{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    release.set()
    for t in threads:
        t.join()
    assert calls == ["https://down.example/0"] or len([c for c in calls if "down.example" in c]) == 1
    assert len(errors) == 8 and sum("was not tried" in e for e in errors) == 7
    assert gate.notices() == [("down.example could not be reached (the name down.example could not be resolved); "
                               "7 more of its URLs were not tried in this ingest (run the ingest again when the host "
                               "can be reached)")]
    get("https://up.example/missing")  # an HTTP error is the file's, not the host's
    assert gate.fetch("https://up.example/a") == b"bytes" and "up.example" not in gate.down


def test_a_1_0_1_package_is_read_against_the_shipped_1_0_2_schemas_and_says_so(tmp_path):
    folder = _package(tmp_path)
    text = (folder / "datapackage.json").read_text().replace("/camtrap-dp/1.0.2/", "/camtrap-dp/1.0.1/")
    (folder / "datapackage.json").write_text(text)
    services = _services(tmp_path)
    report = services.ingestor().run(folder)
    assert report.added == 10 and len(services.camtrap.observations()) == 549
    assert any("Camtrap DP 1.0.1" in n and "1.0.2" in n for n in report.notices)


def test_a_resource_of_the_package_s_own_on_the_network_is_neither_checked_nor_fetched(tmp_path):
    folder = _package(tmp_path)
    _descriptor(lambda d: d["resources"].append({"name": "sightings", "path": "https://example.org/sightings.csv",
                                                 "schema": "https://example.org/sightings-schema.json"}))(folder)
    report = _services(tmp_path).ingestor().run(folder)
    assert report.added == 10 and report.skipped == []
