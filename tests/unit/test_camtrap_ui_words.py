"""The page's camera-trap words and form (ui.camtrap_present, ui.camtrap_form.parse_camtrap): captions of frames
and event cards, the photo view's lines in plain words (escaped), the empty-frames notice, and the filter
fields read into CamtrapFilters (defaults: no camera-trap filter at all, so a plain search is unchanged)."""
from __future__ import annotations

import pytest

from core.contracts.camtrap import CamtrapFilters
from core.contracts.errors import InputError
from ui import camtrap_present as P
from ui import present
from ui.camtrap_form import parse_camtrap

FRAME = {"id": 7, "rank": 1, "score": 0.3, "similarity": 0.31, "path": "/cards/siteA/IMG_0007.JPG",
         "deployment_id": "siteA", "event_id": "siteA#4", "timestamp": "2024-06-01T03:12:45+02:00",
         "detections": [{"bbox": [0.1, 0.2, 0.3, 0.4], "category": "animal", "conf": 0.93, "model": "MDV5a"}]}


def test_a_plain_photos_caption_is_as_before():
    plain = {"id": 3, "rank": 2, "score": 0.5, "similarity": 0.5, "common_name": "Red fox"}
    assert present.gallery_items([plain], {}, ["t.jpg"]) == [("t.jpg", "Red fox · #2 · 0.50")]


def test_a_frames_caption_names_its_deployment_and_time_and_an_event_card_its_frames():
    assert P.caption_tail(FRAME) == " · siteA · 2024-06-01 03:12"
    card = {**FRAME, "event_frames": 5, "event_frame_ids": [7, 8, 9, 10, 11]}
    (_, caption), = present.gallery_items([card], {}, ["t.jpg"])
    assert caption == "IMG_0007.JPG · #1 · 0.31 · siteA · 2024-06-01 03:12 · 5 frames"
    one = {**FRAME, "event_frames": 1, "event_frame_ids": [7]}
    assert P.caption_tail(one).endswith("· 1 frame")
    boxed = {**FRAME, "matched_detection": FRAME["detections"][0]}
    (_, caption), = present.gallery_items([boxed], {}, ["t.jpg"])
    assert caption.endswith("· siteA · 2024-06-01 03:12 · matched in the animal's box")
    assert P.caption_tail({**FRAME, "timestamp": None}) == " · siteA · time unknown"


def test_the_search_json_carries_the_camera_trap_fields_only_for_frames():
    state = {"hits": [FRAME, {"id": 3, "rank": 2, "score": 0.1}], "stages": {}, "query": "fox"}
    rows = present.results_json(state, [], "")["results"]
    assert rows[0]["deployment_id"] == "siteA" and rows[0]["timestamp"] == "2024-06-01T03:12:45+02:00"
    assert rows[0]["detections"] == FRAME["detections"]
    assert "deployment_id" not in rows[1]


@pytest.mark.parametrize("hidden, text", [(0, ""), (1, "1 empty frame hidden"), (4210, "4,210 empty frames hidden")])
def test_the_empty_frames_notice_counts_them(hidden, text):
    said = P.empty_notice(hidden)
    assert said.startswith(text) and (said == "" or "Show empty frames" in said)


def test_the_capture_time_says_whether_its_offset_is_known():
    assert P.taken_text("2024-06-01T03:12:45+02:00") == "2024-06-01 03:12:45 (UTC+02:00)"
    assert P.taken_text("2024-06-01T03:12:45") == \
        "2024-06-01 03:12:45 (the camera's clock, offset from UTC not known)"
    assert P.taken_text(None) == "time unknown"


def test_the_photo_views_lines_are_plain_words_and_escaped():
    facts = {**FRAME, "place": "Oak <ridge>", "event_frames": 3, "max_n": 2, "detector_looked": True,
             "observations": [{"level": "event", "type": "animal", "scientific_name": "Vulpes vulpes", "count": 2,
                               "method": "human", "classified_by": "Renée",
                               "classified_at": "2026-11-28T05:30:00+00:00"},
                              {"level": "media", "type": "animal", "scientific_name": "Canis lupus",
                               "method": "machine", "classified_by": "SpeciesNet 4", "probability": 0.61}]}
    html = P.facts_html(facts)
    assert "Oak &lt;ridge&gt;" in html and "<ridge>" not in html
    assert "siteA#4: 3 frames, most animals in one frame: 2" in html
    assert "an animal (93% sure), by MDV5a" in html
    assert "Vulpes vulpes, 2 seen · the whole event, by Renée (a person), 2026-11-28 05:30" in html
    assert "Canis lupus · this frame, by SpeciesNet 4 (a machine, 61% sure)" in html
    assert P.facts_html(None) == ""
    nothing = P.facts_html({"deployment_id": "siteB", "detections": [], "detector_looked": False})
    assert "no detector has looked at this frame" in nothing


def test_the_species_to_confirm_is_a_persons_newest_then_the_classifiers():
    obs = [{"scientific_name": "Canis lupus", "method": "machine", "classified_at": "2026-01-02"},
           {"scientific_name": "Vulpes vulpes", "method": "human", "classified_at": "2026-01-01"}]
    assert P.species_shown({"observations": obs}) == "Vulpes vulpes"
    assert P.species_shown({"observations": [], "detections": [{"label": "Meles meles"}]}) == "Meles meles"
    assert P.species_shown({}) == ""


def test_the_strip_captions_each_frame_with_its_place_in_the_event():
    items = P.strip_items([4, 5], ["a.jpg", "b.jpg"], {4: "2024-06-01T03:12:00+02:00", 5: None})
    assert items == [("a.jpg", "frame 1 of 2 · 03:12:00"), ("b.jpg", "frame 2 of 2 · time unknown")]


def test_form_fields_at_their_defaults_are_no_camera_trap_filter():
    assert parse_camtrap([], [], False, False, [], "", "") is None
    assert parse_camtrap(None, None, None, None, None, None, None) is None


def test_form_fields_become_camtrap_filters():
    got = parse_camtrap(["siteA", "siteB"], ["night", "Dawn"], True, True, ["animal"], " Vulpes  vulpes ", "human")
    assert got == CamtrapFilters(deployments=("siteA", "siteB"), times_of_day=("night", "dawn"), include_empty=True,
                                 by_event=True, categories=("animal",), species="Vulpes vulpes", classified="human")
    assert parse_camtrap("siteA, siteB", "night,dawn").times_of_day == ("night", "dawn")  # a script's comma lists
    assert parse_camtrap("siteA, siteB").deployments == ("siteA", "siteB")


@pytest.mark.parametrize("kwargs, words", [
    (dict(time_of_day=["midnight"]), "midnight"),
    (dict(category="animal,bird"), "bird"),
    (dict(classified="robot"), "robot"),
    (dict(species="x" * 201), "species"),
])
def test_bad_form_fields_are_refused_with_a_fix(kwargs, words):
    with pytest.raises(InputError) as caught:
        parse_camtrap(**kwargs)
    assert words in caught.value.message and caught.value.hint
