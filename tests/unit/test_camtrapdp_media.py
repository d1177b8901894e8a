"""Media files of a Camtrap DP package being written (core.camtrap.camtrapdp_media): URLs stay URLs, files are
copied to a filePath the media schema's pattern accepts (the source's own when it is safe), two frames with one
name get two files, and a file that is gone is counted, not fatal."""
from __future__ import annotations

import re

from core.camtrap.camtrapdp_media import MediaFiles, media_id
from core.camtrap.camtrapdp_validate import shipped
from core.contracts.camtrap import Capture
from core.contracts.records import Photo

PATTERN = re.compile(next(f for f in shipped("media-table-schema")["fields"]
                          if f["name"] == "filePath")["constraints"]["pattern"])


def _photo(tmp_path, folder: str, name: str, data: bytes) -> Photo:
    path = tmp_path / "cards" / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return Photo(path=str(path), sha256="ab" * 32)


def test_file_paths_are_safe_unique_and_lead_to_the_file(tmp_path):
    files = MediaFiles(tmp_path / "pkg")
    one, two = _photo(tmp_path, "siteA", "IMG_0001.JPG", b"one"), _photo(tmp_path, "siteB", "IMG_0001.JPG", b"two")
    hostile = _photo(tmp_path, "siteC", "x.jpg", b"three")
    placed = [files.place(one, Capture(photo_id=1), "m1"), files.place(two, Capture(photo_id=2), "m2"),
              files.place(hostile, Capture(photo_id=3, extra={"filePath": "../../etc/x.jpg"}), "m3"),
              files.place(one, Capture(photo_id=4, extra={"filePath": "media/deep/a.jpg"}), "m4")]
    assert [p for p, _ in placed] == ["media/IMG_0001.JPG", "media/m2-IMG_0001.JPG", "media/x.jpg", "media/deep/a.jpg"]
    assert all(PATTERN.match(p) for p, _ in placed)
    assert [(tmp_path / "pkg" / p).read_bytes() for p, _ in placed] == [b"one", b"two", b"three", b"one"]
    assert files.copied == 4 and files.missing == []


def test_urls_stay_urls_and_a_missing_file_is_counted(tmp_path):
    files = MediaFiles(tmp_path / "pkg")
    url = Photo(path="https://example.org/a/file", sha256="media:p:m1")
    assert files.place(url, Capture(photo_id=1, file_name="a.jpg"), "m1") == ("https://example.org/a/file", "a.jpg")
    kept = Photo(path=str(tmp_path / "local-copy.jpg"))  # downloaded: the source's URL is what goes out
    assert files.place(kept, Capture(photo_id=2, extra={"filePath": "https://x.org/f"}), "m2")[0] == "https://x.org/f"
    gone = Photo(path=str(tmp_path / "gone.jpg"))
    assert files.place(gone, Capture(photo_id=3), "m3") == ("media/gone.jpg", "gone.jpg")
    assert files.missing == ["m3"] and files.copied == 0


def test_a_medium_without_a_source_id_is_named_by_its_content():
    taken: set[str] = set()
    a = media_id(Capture(photo_id=1), Photo(path="a", sha256="0123456789abcdef" + "0" * 48), 1, taken)
    taken.add(a)
    b = media_id(Capture(photo_id=2), Photo(path="b", sha256="0123456789abcdef" + "1" * 48), 2, taken)
    assert (a, len(b)) == ("0123456789abcdef", 64)  # the same start: the whole hash
    assert media_id(Capture(photo_id=3, media_key="k"), Photo(path="c"), 3, taken) == "k"
    assert media_id(Capture(photo_id=4), Photo(path="d", sha256="media:pkg:x"), 4, taken) == "p4"
