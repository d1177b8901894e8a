"""What the page hands out of a camera-trap frame with a person on it (ui.photos.PhotoFiles, setting hide_people):
blurred by default, withheld with 'hide' (a placeholder and a notice), as it is with 'show' or when the app
asks every viewer for a password (all of them are logged in); frames without a person are untouched."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from core.contracts.camtrap import Detection
from core.contracts.records import Photo
from ui.photos import PhotoFiles

PERSON = Detection(0.25, 0.25, 0.5, 0.5, "person", 0.9, "MDV5a", photo_id=1)


class _Store:
    def __init__(self, detections):
        self.found = detections

    def detections(self, ids):
        return {i: self.found[i] for i in ids if i in self.found}


def _files(tmp_path, mode: str, password: str = "") -> PhotoFiles:
    rng = np.random.default_rng(3)
    tmp_path.mkdir(parents=True, exist_ok=True)
    photos = {}
    for i in (1, 2):
        path = tmp_path / f"frame{i}.png"
        Image.fromarray(rng.integers(0, 256, size=(80, 120, 3), dtype=np.uint8), "RGB").save(path)
        photos[i] = Photo(path=str(path), id=i, sha256=f"{i:064x}", width=120, height=80)
    corpus = SimpleNamespace(photos=lambda ids: [photos[i] for i in ids if i in photos],
                             camtrap=_Store({1: [PERSON], 2: [Detection(0.1, 0.1, 0.2, 0.2, "animal", 0.9, "m")]}))
    settings = SimpleNamespace(hide_people=mode, password=password, users_file="", detection_threshold=0.2,
                               max_image_pixels=10**8, path=lambda *p: tmp_path.joinpath("data", *p))
    return PhotoFiles(SimpleNamespace(corpus=corpus, settings=settings))


def _pixels(path: str) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def _detail(a: np.ndarray) -> float:
    return float(np.abs(np.diff(a[25:55, 35:85], axis=1)).mean())  # inside the person's box


@pytest.mark.parametrize("mode, password, blurred", [("blur", "", True), ("show", "", False),
                                                     ("blur", "s3cret", False)])
def test_the_person_is_blurred_for_viewers_who_are_not_logged_in(tmp_path, mode, password, blurred):
    shown = _files(tmp_path / "a", "show")
    files = _files(tmp_path / "b", mode, password)
    (path, other), notices = files.files([1, 2], "view")
    (bare, other_bare), _ = shown.files([1, 2], "view")
    assert notices == []
    assert (_detail(_pixels(path)) < _detail(_pixels(bare)) / 3) is blurred
    assert np.array_equal(_pixels(other), _pixels(other_bare))  # no person: as it is


def test_hide_withholds_the_frame_and_says_so(tmp_path):
    files = _files(tmp_path, "hide")
    (path, other), notices = files.files([1, 2], "thumb")
    assert path == str(files.served.placeholder("thumb")) and other != path
    assert notices == ["photo 1 is withheld: a person was detected on it (log in to see it)"]
