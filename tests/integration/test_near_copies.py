"""Near-copies fold (issue 35, item 4), on real camera-trap and wildlife JPEGs (tests/fixtures) and copies made
of them here: a re-encode, greyscale and CMYK copies, rotations by 90/180/270, a resize and crops of one frame
are each recognised (table-driven), unrelated photos are not; an ingest hashes the photos and reports how many
near-copies it found; a search with an example photo shows at most one of its near-copies in the top 10, which
says "+N near-copies"; frames of one camera-trap deployment never fold; the setting near_copies turns it off;
a catalog made before the hashes gets them at its next ingest."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageOps

import app
from core.config import Settings
from core.ingest.near_hashing import hash_missing
from core.search.presets import request_for
from core.vectors import near_copies
from ui import present

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PHOTOS = sorted((FIXTURES / "megadetector").glob("*/*.jpg"))
BURST = sorted((FIXTURES / "camtrap-dp-example" / "media").glob("*.JPG"))[:4]  # one camera, one burst


def _jpeg(image: Image.Image, quality: int = 85, mode: str = "RGB") -> Image.Image:
    out = io.BytesIO()
    image.convert(mode).save(out, "JPEG", quality=quality)
    return Image.open(io.BytesIO(out.getvalue()))


def _box(image: Image.Image, left: float, top: float, right: float, bottom: float) -> Image.Image:
    w, h = image.size
    return image.crop((round(left * w), round(top * h), round(right * w), round(bottom * h)))


VARIANTS = {
    "re-encoded": lambda im: _jpeg(im, 40),
    "greyscale": lambda im: ImageOps.grayscale(im),
    "cmyk": lambda im: _jpeg(im, 90, "CMYK"),
    "rotated 90": lambda im: im.rotate(90, expand=True),
    "rotated 180": lambda im: im.rotate(180, expand=True),
    "rotated 270": lambda im: im.rotate(270, expand=True),
    "half size": lambda im: im.resize((im.width // 2, im.height // 2)),
    "centre crop 80%": lambda im: _box(im, 0.1, 0.1, 0.9, 0.9),
    "corner crop 65%": lambda im: _box(im, 0.0, 0.0, 0.65, 0.65),
    "left 60% strip": lambda im: _box(im, 0.0, 0.0, 0.6, 1.0),
}


@pytest.fixture(scope="module")
def originals():
    return {p.name: Image.open(p).convert("RGB") for p in PHOTOS}


@pytest.mark.parametrize("kind", list(VARIANTS))
@pytest.mark.parametrize("name", [p.name for p in PHOTOS])
def test_each_kind_of_copy_is_a_near_copy(originals, name, kind):
    image = originals[name]
    a = near_copies.unpack(near_copies.hash_image(image))
    b = near_copies.unpack(near_copies.hash_image(VARIANTS[kind](image)))
    assert near_copies.near(a, b) and near_copies.near(b, a)


def test_the_hash_is_imagehashs_phash(originals):
    import imagehash

    pictures = list(originals.values())[:3]
    got = near_copies.phashes(pictures)
    for picture, row in zip(pictures, got):
        bits = np.asarray(imagehash.phash(picture, hash_size=near_copies.BITS).hash).ravel()
        assert np.array_equal(np.unpackbits(row.astype(">u8").view(np.uint8)).astype(bool), bits)


def test_a_blank_frame_is_not_hashed_so_blank_frames_of_any_colour_never_fold():
    assert near_copies.hash_image(Image.new("RGB", (64, 48), (200, 30, 30))) == b""
    assert near_copies.hash_image(Image.new("RGB", (64, 48), (10, 10, 10))) == b""
    assert near_copies.unpack(b"") is None


def test_unrelated_photos_and_loose_crops_are_not(originals):
    hashed = {n: near_copies.unpack(near_copies.hash_image(im)) for n, im in originals.items()}
    for a in hashed:
        for b in hashed:
            if a != b:
                assert not near_copies.near(hashed[a], hashed[b]), (a, b)
    assert near_copies.near(hashed["nacti.jpg"], hashed["nacti.jpg"])  # a photo is a copy of itself
    # a crop that cuts the picture a few per cent off every window is not recognised (the documented limit)
    loose = originals["nacti.jpg"].crop((30, 20, 450, 330))
    assert not near_copies.near(hashed["nacti.jpg"], near_copies.unpack(near_copies.hash_image(loose)), cosine=0.9)


def _collection(root: Path, originals) -> tuple[Path, dict[str, str]]:
    """The photos, the copies of one of them (nacti.jpg) beside them, and a camera's burst in its own folder
    (a deployment). Returns the folder and copy file -> kind."""
    root.mkdir()
    for p in PHOTOS:
        shutil.copy(p, root / p.name)
    made = {}
    for i, (kind, make) in enumerate(VARIANTS.items()):
        name = f"copy{i:02d}.jpg"
        make(originals["nacti.jpg"]).convert("RGB").save(root / name, quality=92)
        made[name] = kind
    site = root / "siteA"
    site.mkdir()
    for p in BURST:
        Image.open(p).convert("RGB").resize((1024, 720)).save(site / p.name, quality=90)
    return root, made


def _services(tmp_path, **settings):
    return app.build_services(Settings(data_dir=str(tmp_path / "data"), **settings))


def _by_example(services, image: Image.Image, k: int = 10):
    return services.engine.search(request_for("Fast", "", k=k, examples=[image]))


def test_an_ingest_counts_them_and_a_search_shows_one_of_each_group(tmp_path, originals):
    folder, made = _collection(tmp_path / "photos", originals)
    services = _services(tmp_path)
    report = services.ingestor().run(folder)
    assert report.added == len(PHOTOS) + len(VARIANTS) + len(BURST)
    assert report.hashed == report.added
    assert report.near_copies == len(VARIANTS) + 1  # the copies and their original; never the burst
    assert any("near-copies" in n for n in report.notices)
    result = _by_example(services, originals["nacti.jpg"])
    names = {h.photo_id: Path(h.photo.path).name for h in result.hits}
    group = {"nacti.jpg", *made}
    shown = [h for h in result.hits if names[h.photo_id] in group]
    assert len(shown) == 1, [names[h.photo_id] for h in result.hits]
    folded = shown[0].near_copies
    assert folded and len(folded) >= 2 and shown[0].to_json()["near_copies"] == folded
    caption = present.gallery_items([shown[0].to_json()], result.stages, ["x.jpg"])[0][1]
    assert f"+{len(folded)} near-copies" in caption
    # a burst of one camera: its frames are alike, but never folded
    burst = _by_example(services, Image.open(folder / "siteA" / BURST[0].name).convert("RGB"))
    frames = [h for h in burst.hits if "/siteA/" in h.photo.path]
    assert len(frames) == len(BURST) and not any(h.near_copies for h in frames)


def test_the_setting_turns_it_off(tmp_path, originals):
    folder, made = _collection(tmp_path / "photos", originals)
    services = _services(tmp_path, near_copies=False)
    report = services.ingestor().run(folder)
    assert report.hashed == 0 and not services.catalog.near_hashes(list(range(1, 40)))
    hits = _by_example(services, originals["nacti.jpg"]).hits
    assert sum(Path(h.photo.path).name in {"nacti.jpg", *made} for h in hits) > 1
    assert not any(h.near_copies for h in hits)


def test_a_catalog_without_hashes_gets_them_at_its_next_ingest(tmp_path, originals):
    folder, made = _collection(tmp_path / "photos", originals)
    _services(tmp_path, near_copies=False).ingestor().run(folder)  # as a catalog made before migration 0012
    services = _services(tmp_path)
    assert len(services.catalog.unhashed_ids()) == services.catalog.count()
    extra = tmp_path / "more"
    extra.mkdir()
    originals["pheasant_web.jpg"].rotate(180).save(extra / "upside-down.jpg")
    report = services.ingestor().run(extra)
    assert report.added == 1 and report.hashed == services.catalog.count()
    assert services.catalog.unhashed_ids() == []
    assert report.near_copies == len(VARIANTS) + 1 + 2  # nacti's group, and the pheasant with its rotated copy


def test_an_ingest_hashes_at_most_so_many_the_newest_first(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    for p in PHOTOS:
        shutil.copy(p, folder / p.name)
    services = _services(tmp_path, near_copies=False)
    services.ingestor().run(folder)
    waiting = services.catalog.unhashed_ids()
    hashed, found, left = hash_missing(services.catalog, services.settings, most=4)
    assert (hashed, found, left) == (4, 0, len(PHOTOS) - 4)
    assert services.catalog.unhashed_ids() == waiting[:-4]  # the oldest wait for the next ingest
