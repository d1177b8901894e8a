"""People on camera-trap frames (core.camtrap.people): the person's box is blurred beyond recognition and the rest
of the frame is untouched; 'hide' withholds the frame, 'show' and frames without a person (or with a person
below the threshold) pass unchanged."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from core.camtrap.people import blur_people, for_public
from core.contracts.camtrap import Detection


def _frame() -> Image.Image:
    rng = np.random.default_rng(5)
    return Image.fromarray(rng.integers(0, 256, size=(120, 200, 3), dtype=np.uint8), "RGB")


PERSON = Detection(0.25, 0.25, 0.25, 0.5, "person", 0.9, "MDV5a")


def test_the_person_is_blurred_and_nothing_else_changes():
    frame = _frame()
    out = np.asarray(for_public(frame, [PERSON, Detection(0.8, 0.8, 0.1, 0.1, "animal", 0.9, "MDV5a")], "blur", 0.2))
    before = np.asarray(frame)
    # inside the box the detail (neighbouring pixel differences) is gone ...
    inside = (slice(35, 85), slice(55, 95))
    detail = lambda a: np.abs(np.diff(a[inside].astype(int), axis=1)).mean()  # noqa: E731
    assert detail(out) < detail(before) / 5
    # ... and outside the box with its margin every pixel is as it was (the animal is not blurred)
    assert np.array_equal(out[:, 120:], before[:, 120:]) and np.array_equal(out[100:], before[100:])
    assert frame.tobytes() == Image.fromarray(before).tobytes()  # the original is not changed


@pytest.mark.parametrize("mode, dets, same", [
    ("show", [PERSON], True),
    ("blur", [], True),
    ("blur", [Detection(0.25, 0.25, 0.25, 0.5, "person", 0.1, "MDV5a")], True),  # below the threshold
    ("blur", [Detection(0.25, 0.25, 0.25, 0.5, "vehicle", 0.9, "MDV5a")], True),
    ("blur", [PERSON], False),
])
def test_only_frames_with_a_person_at_or_above_the_threshold_change(mode, dets, same):
    frame = _frame()
    out = for_public(frame, dets, mode, 0.2)
    assert (out is frame) is same


def test_hide_withholds_the_frame_and_an_unknown_mode_is_refused():
    assert for_public(_frame(), [PERSON], "hide", 0.2) is None
    assert for_public(_frame(), [], "hide", 0.2) is not None
    with pytest.raises(ValueError):
        for_public(_frame(), [PERSON], "pixelate", 0.2)


def test_a_box_at_the_edge_of_the_frame_is_blurred_within_the_frame():
    frame = _frame()
    out = blur_people(frame, [Detection(0.9, 0.9, 0.2, 0.2, "person", 0.9, "m")])
    assert out.size == frame.size
    assert not np.array_equal(np.asarray(out)[110:, 185:], np.asarray(frame)[110:, 185:])
