"""The page's camera-trap words (ui.camtrap_present): captions of frames and event cards, the photo view's lines
in plain words (escaped), and a plain photo left as it was (even with a capture time
from its EXIF)."""
from __future__ import annotations

from ui import camtrap_present as P
from ui import present

FRAME = {"id": 7, "rank": 1, "score": 0.3, "similarity": 0.31, "path": "/cards/siteA/IMG_0007.JPG",
         "deployment_id": "siteA", "event_id": "siteA#4", "timestamp": "2024-06-01T03:12:45+02:00",
         "detections": [{"bbox": [0.1, 0.2, 0.3, 0.4], "category": "animal", "conf": 0.93, "model": "MDV5a"}]}


def test_a_plain_photos_caption_is_as_before():
    plain = {"id": 3, "rank": 2, "score": 0.5, "similarity": 0.5, "common_name": "Red fox"}
    assert present.gallery_items([plain], {}, ["t.jpg"]) == [("t.jpg", "Red fox · #2 · 0.50")]
    # the search JSON's camera-trap fields of a plain photo (null, []), even with a capture time from its EXIF
    dated = {**plain, "deployment_id": None, "event_id": None, "timestamp": "2024-05-01T10:00:00",
             "detections": [], "matched_detection": None}
    assert present.gallery_items([dated], {}, ["t.jpg"]) == [("t.jpg", "Red fox · #2 · 0.50")]
    assert P.facts_html({"timestamp": "2024-05-01T10:00:00", "detections": [], "detector_looked": False}) == ""


def test_a_frames_caption_names_its_deployment_and_time_and_an_event_card_its_frames():
    assert P.caption_tail(FRAME) == " · siteA · 2024-06-01 03:12"
    card = {**FRAME, "event_frames": 5, "event_frame_ids": [7, 8, 9, 10, 11]}
    (_, caption), = present.gallery_items([card], {}, ["t.jpg"])
    assert caption == "IMG_0007.JPG · #1 · 0.31 · 5 frames · siteA · 2024-06-01 03:12"
    one = {**FRAME, "event_frames": 1, "event_frame_ids": [7]}
    assert P.caption_tail(one) == " · 1 frame · siteA · 2024-06-01 03:12"
    boxed = {**FRAME, "matched_detection": FRAME["detections"][0]}
    (_, caption), = present.gallery_items([boxed], {}, ["t.jpg"])
    assert caption.endswith("· siteA · 2024-06-01 03:12 · matched in the animal's box")
    assert P.caption_tail({**FRAME, "timestamp": None}) == " · siteA · time unknown"


def test_the_search_json_carries_the_camera_trap_fields_only_for_frames():
    state = {"hits": [FRAME, {"id": 3, "rank": 2, "score": 0.1}], "stages": {}, "query": "fox"}
    rows = present.results_json(state, [], "")["results"]
    assert rows[0]["deployment_id"] == "siteA" and rows[0]["timestamp"] == "2024-06-01T03:12:45+02:00"
    assert rows[0]["detections"] == FRAME["detections"]
    assert rows[1].get("deployment_id") is None


def test_the_capture_time_says_whether_its_offset_is_known():
    assert P.taken_text("2024-06-01T03:12:45+02:00") == "2024-06-01 03:12:45 (UTC+02:00)"
    assert P.taken_text("2024-06-01T03:12:45") == \
        "2024-06-01 03:12:45 (the camera's clock, offset from UTC not known)"
    assert P.taken_text(None) == "time unknown"


def test_the_page_and_the_command_line_read_utc_alike_each_in_its_words():
    """One reading of a timestamp (core.camtrap.capture_time.taken): 'Z', '+00:00' and '-00:00' are all UTC."""
    from cli.common import taken

    for utc in ("Z", "+00:00", "-00:00"):
        assert P.taken_text("2024-06-01T03:12:45" + utc) == "2024-06-01 03:12:45 (UTC+00:00)"
        assert taken("2024-06-01T03:12:45" + utc) == "2024-06-01 03:12:45 UTC+00:00"
    assert taken("2024-06-01T03:12:45-05:30") == "2024-06-01 03:12:45 UTC-05:30"
    assert taken("2024-06-01T03:12:45") == "2024-06-01 03:12:45 (offset from UTC not known)"


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
    assert "Vulpes vulpes, 2 seen · the whole event, by Renée (a person), 2026-11-28 05:30 UTC" in html
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


def test_the_identify_box_starts_at_the_count_known_else_at_one_animal():
    obs = [{"scientific_name": "Canis lupus", "count": 4, "method": "machine", "classified_at": "2026-01-02"},
           {"scientific_name": "Vulpes vulpes", "count": 2, "method": "human", "classified_at": "2026-01-01"},
           {"scientific_name": "Vulpes vulpes", "method": "human", "classified_at": "2026-01-03"}]
    assert P.count_shown({"observations": obs, "max_n": 5}) == 2  # a person's newest count said
    assert P.count_shown({"observations": obs[:1], "max_n": 5}) == 4
    assert P.count_shown({"observations": [], "max_n": 3}) == 3  # the event's MaxN
    assert P.count_shown({"observations": [{"type": "blank", "count": 0}], "max_n": None}) == 1
    assert P.count_shown({}) == 1 and P.count_shown(None) == 1  # never 0: that is 'blank'


def test_the_strip_captions_each_frame_with_its_place_in_the_event():
    items = P.strip_items([4, 5], ["a.jpg", "b.jpg"], {4: "2024-06-01T03:12:00+02:00", 5: None})
    assert items == [("a.jpg", "frame 1 of 2 · 03:12:00"), ("b.jpg", "frame 2 of 2 · time unknown")]


def test_the_photo_view_draws_the_boxes_at_or_above_the_threshold():
    from types import SimpleNamespace

    from core.camtrap.desk import CamtrapDesk
    from ui.camtrap_form import CamtrapPage, logged_in

    page = CamtrapPage(CamtrapDesk(None, SimpleNamespace(detection_threshold=0.2)))
    faint = {"bbox": [0.6, 0.6, 0.1, 0.1], "category": "animal", "conf": 0.05, "model": "MDV5a"}
    tag, _ = page.view_edit({**FRAME, "detections": FRAME["detections"] + [faint]})
    assert '"boxes": [[0.1, 0.2, 0.3, 0.4]]' in tag and '"labels": ["animal 93%"]' in tag  # the faint one left out
    assert page.view_edit({**FRAME, "detections": [faint]}) is None
    assert page.view_edit({"timestamp": "2024-05-01T10:00:00", "detections": []}) is None  # a plain photo
    assert CamtrapPage(None).view_edit(FRAME) is None
    assert logged_in(SimpleNamespace(username="ada")) and not logged_in(SimpleNamespace(username=None))
    assert not logged_in(None)
    assert logged_in(SimpleNamespace(username=None, session={"oauth_info": {"userinfo": {"name": "ada"}}}))
    assert not logged_in(SimpleNamespace(username=None, session={}))
    from gradio.route_utils import Obj

    assert logged_in(SimpleNamespace(username=None, session=Obj({"oauth_info": {"userinfo": {"name": "ada"}}})))
    assert not logged_in(SimpleNamespace(username=None, session=Obj({})))


def test_an_older_call_is_read_with_the_newer_parameters_at_their_defaults():
    from types import SimpleNamespace

    import gradio as gr

    from ui.forms import with_defaults

    with gr.Blocks():
        blocks = [gr.Textbox(), gr.State({"x": 1}), gr.Textbox(""), gr.Checkbox(False),
                  gr.Radio(["", "human"], value="")]
    fn = SimpleNamespace(inputs=blocks)
    assert with_defaults(fn, ["a heron"]) == ["a heron", None, "", False, ""]
    assert with_defaults(fn, ["a", None, "siteA", True, "human"]) == ["a", None, "siteA", True, "human"]


def test_a_frame_without_a_catalog_species_is_named_by_its_identification_read_once():
    from ui.camtrap_form import CamtrapPage

    class Desk:
        reads = 0

        def facts(self, ids):
            Desk.reads += 1
            return {7: {**FRAME, "observations": [{"scientific_name": "Puma concolor", "method": "human"}]}}

    page = CamtrapPage(Desk())
    named = {"id": 9, "rank": 2, "score": 0.1, "common_name": "Red fox", "deployment_id": "siteB"}
    hits = page.enrich([dict(FRAME), named])
    assert hits[0]["identified"] == "Puma concolor" and "identified" not in hits[1]
    assert present.gallery_items(hits[:1], {}, ["t.jpg"])[0][1].startswith("Puma concolor · #1")
    assert page.enrich(hits) == hits and Desk.reads == 1  # read once per search


def test_a_medium_found_by_its_words_alone_says_so_not_a_stand_in_dash():
    """A Camtrap DP medium kept without its file (no vector) that the catalog's words found: its caption says
    'words only' (not 'stand-in –') and the photo view says why there is no similarity, not a stand-in score
    of '–' explained as a number, nor 'found by its catalog record too'."""
    stages = {"standin_similarity": "fieldguide", "score": {"kind": "fusion"}}
    mallard = {**FRAME, "similarity": None, "score": 0.0328, "taxon": "Anas platyrhynchos",
               "path": "https://multimedia.agouti.eu/assets/a33837bf/file", "catalog_match": ["anas", "platyrhynchos"]}
    (_, caption), = present.gallery_items([mallard], stages, ["t.jpg"])
    assert caption.startswith("Anas platyrhynchos · #1 · words only · siteA") and "–" not in caption, caption
    view = present.explanation_html(mallard, stages)
    assert "No similarity: there is no picture of this photo on this machine" in view, view
    assert "“anas”, “platyrhynchos”" in view and "Stand-in score" not in view and " too:" not in view, view
    # a frame that has its picture keeps its (stand-in) score and the words that also matched
    heron = {**mallard, "similarity": 0.11, "path": "/cards/RCNX0040.JPG"}
    (_, caption), = present.gallery_items([heron], stages, ["t.jpg"])
    assert "· stand-in 0.11 ·" in caption and "words only" not in caption, caption
    view = present.explanation_html(heron, stages)
    assert "Stand-in score: 0.11" in view and "Found by its catalog record too" in view, view


def test_the_deployments_menu_names_each_deployment_by_its_place_and_filters_by_its_key():
    """A Camtrap DP package's deploymentIDs ('62c200a9') say nothing to a person: the menu shows the place's
    name beside the key; the value chosen is the key the filter takes. A card's folder (no place) stays as is."""
    from types import SimpleNamespace

    from core.camtrap.desk import CamtrapDesk
    from core.contracts.camtrap import Deployment
    from ui.camtrap_form import CamtrapPage

    class Store:
        def deployments(self):
            return [Deployment(key="62c200a9", location_name="B_DM_val 4_'t WAD"),
                    Deployment(key="00a2c20d", location_id="e254a13c"), Deployment(key="north"),
                    Deployment(key="siteA", location_name="siteA")]

    box, menu = CamtrapPage(CamtrapDesk(Store(), SimpleNamespace(detection_threshold=0.2))).offer()
    assert box["visible"] is True
    assert menu["choices"] == [("62c200a9 · B_DM_val 4_'t WAD", "62c200a9"), ("00a2c20d · e254a13c", "00a2c20d"),
                               ("north", "north"), ("siteA", "siteA")]
    box, menu = CamtrapPage(None).offer()
    assert box["visible"] is False and menu["choices"] == []


def test_a_box_of_the_packages_own_observations_is_said_in_words_not_by_its_marker():
    """The photo view said 'by camtrap-dp: Western Europe species model Version 1': the marker EcoLens keeps on
    boxes made from a package's observations is not a word for a person."""
    box = {"bbox": [0.52, 0.67, 0.15, 0.29], "category": "animal", "conf": 0.85, "label": "Ardea",
           "model": "camtrap-dp: Western Europe species model Version 1"}
    said = P.detection_text(box)
    assert said == ("an animal (85% sure, classified as Ardea), by Western Europe species model Version 1 "
                    "(a box of the Camtrap DP package's observations)"), said
    assert P.detection_text({**box, "model": "MDV5a", "label": None}) == "an animal (85% sure), by MDV5a"
