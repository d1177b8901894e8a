"""The served folder: copies of catalog photos at two sizes (no EXIF), generated pictures only from their own
folders, placeholders with a reason for files that are gone or broken; large JPEGs decoded reduced."""
from __future__ import annotations

import io

from PIL import Image

from core.contracts.records import Photo
from core.imageio import decode_image
from core.served import SIZES, ServedFiles
from tests.photos import colour_image


def _photo(tmp_path, name="a.jpg", size=(2000, 1500), pid=1) -> Photo:
    path = tmp_path / "elsewhere" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    exif = Image.Exif()
    exif[0x010F] = "CameraMaker"  # a tag that must not travel with the copy
    colour_image(pid, 64).resize(size).save(path, quality=90, exif=exif)
    return Photo(path=str(path), id=pid, sha256=f"{pid:064x}")


def test_a_catalog_photo_becomes_a_small_copy_without_exif(tmp_path):
    served = ServedFiles(tmp_path / "served")
    photo = _photo(tmp_path)
    thumb, view = served.photo(photo, "thumb"), served.photo(photo, "view")
    assert not thumb.missing and thumb.path.parent == (tmp_path / "served").resolve()
    with Image.open(thumb.path) as im:
        assert max(im.size) == SIZES["thumb"] and not im.getexif()
    with Image.open(view.path) as im:
        assert max(im.size) == SIZES["view"]
    assert served.photo(photo, "thumb").path == thumb.path  # made once, then reused


def test_missing_or_broken_files_and_unknown_photos_give_a_placeholder_with_a_reason(tmp_path):
    served = ServedFiles(tmp_path / "served")
    photo = _photo(tmp_path)
    (tmp_path / "elsewhere" / "a.jpg").unlink()
    gone = served.photo(photo)
    assert "missing" in gone.missing and "a.jpg" in gone.missing and gone.path.name.startswith("placeholder")
    broken = tmp_path / "elsewhere" / "b.jpg"
    broken.write_bytes(b"\xff\xd8 not really a jpeg")
    assert "cannot be shown" in served.photo(Photo(path=str(broken), id=2, sha256="ab" * 32)).missing
    assert "no longer in the catalog" in served.photo(None).missing


def test_only_generated_pictures_under_their_own_folders_are_copied(tmp_path):
    generated = tmp_path / "data" / "generated"
    generated.mkdir(parents=True)
    picture = generated / "x.png"
    colour_image(5).save(picture)
    secret = tmp_path / "data" / "ecolens.sqlite"
    secret.write_bytes(b"SQLite format 3\x00")
    served = ServedFiles(tmp_path / "data" / "served", [generated])
    ok = served.picture(picture)
    assert not ok.missing and ok.path.read_bytes() == picture.read_bytes()
    for bad in (secret, generated / ".." / "ecolens.sqlite", tmp_path / "data" / "other.png"):
        refused = served.picture(bad)
        assert refused.missing and refused.path.name.startswith("placeholder")
    assert not any(b"SQLite" in f.read_bytes() for f in (tmp_path / "data" / "served").iterdir())


def test_a_large_jpeg_is_decoded_reduced_to_the_side_asked_for(tmp_path):
    buf = io.BytesIO()
    Image.new("RGB", (4000, 3000), (10, 200, 30)).save(buf, "JPEG")
    image = decode_image(buf.getvalue(), max_side=500)
    assert max(image.size) == 500 and image.getpixel((10, 10))[1] > 150


def test_a_photo_smaller_than_both_sizes_has_one_copy(tmp_path):
    served = ServedFiles(tmp_path / "served")
    photo = _photo(tmp_path, size=(224, 200))
    photo.width, photo.height = 224, 200
    thumb, view = served.photo(photo, "thumb"), served.photo(photo, "view")
    assert thumb.path == view.path and thumb.path.name.endswith("-224.jpg")
    with Image.open(view.path) as im:
        assert im.size == (224, 200)


def test_a_photo_kept_without_its_file_says_where_it_lies_not_that_it_was_deleted(tmp_path):
    """A Camtrap DP medium whose URL's host the ingest could not reach is in the catalog by its URL: its
    placeholder says the file was never fetched from that host, not "moved or deleted after ingest"."""
    served = ServedFiles(tmp_path / "served")
    kept = Photo(path="https://multimedia.agouti.eu/assets/a33837bf/file", id=81, sha256="media:pkg:a33837bf")
    said = served.photo(kept).missing
    assert said.startswith("photo 81 has no file on this machine") and "multimedia.agouti.eu" in said, said
    assert "deleted" not in said and "run the ingest again" in said
    assert served.photo(kept).path.name.startswith("placeholder")


def test_a_checker_reading_a_photo_kept_by_its_url_is_told_it_was_never_fetched(tmp_path):
    """Verify, Cover and the answer read photos through Corpus.load_image: a Camtrap DP medium kept by its URL
    was reported to the page as 'missing; it was moved or deleted after ingest', which is not what happened."""
    from types import SimpleNamespace

    import pytest

    from core.contracts.errors import InputError
    from core.search.corpus import Corpus

    me = SimpleNamespace(settings=SimpleNamespace(max_image_pixels=80_000_000))
    kept = Photo(path="https://multimedia.agouti.eu/assets/a33837bf/file", id=81, sha256="media:pkg:a33837bf")
    with pytest.raises(InputError) as err:
        Corpus.load_image(me, kept)
    assert err.value.message.startswith("photo 81 has no file on this machine") and "agouti.eu" in err.value.message
    assert "deleted" not in err.value.message and "run the ingest again" in err.value.hint
    gone = Photo(path=str(tmp_path / "folder" / "x.jpg"), id=82)
    with pytest.raises(InputError, match="moved or deleted after ingest") as err:
        Corpus.load_image(me, gone)
    assert str(tmp_path) not in err.value.message  # named by id and file name, never the server's folder
