"""The API's /search with the camera-trap parameters (after the older ones: an older call still works), on the
real web app over a camera card ingested here: every result carries the camera-trap facts."""
from __future__ import annotations

import json

import pytest

from tests.camtrap_photos import exif_jpeg, write
from tests.live_server import LiveServer, cli

gradio_client = pytest.importorskip("gradio_client")
OLD = ("an animal", "Fast", 10, 1, 10, "full", False, "", "", "", [], "", "", None)  # the 14 older parameters
RESULT = 8  # outputs: gallery, status, notices, scale, visualizations, evidence, explanation, details, result


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    card = tmp_path_factory.mktemp("api") / "card"
    write(card / "siteA" / "a1.jpg", exif_jpeg("2024:06:21 13:00:00", "+01:00", colour=(10, 20, 30)))
    write(card / "siteA" / "a2.jpg", exif_jpeg("2024:06:21 13:00:20", "+01:00", colour=(60, 20, 30)))
    write(card / "siteB" / "b1.jpg", exif_jpeg("2024:06:22 02:00:00", colour=(10, 90, 30)))
    write(card / "plain.jpg", exif_jpeg(colour=(200, 20, 30)))
    data = tmp_path_factory.mktemp("data")
    done = cli(data, "ingest", str(card))
    assert done.returncode == 0, done.stderr
    server = LiveServer(data)
    site = gradio_client.Client(server.url, verbose=False)
    site.server = server
    yield site
    server.stop()


def test_an_older_call_gets_the_new_fields(site):
    out = site.predict(*OLD, api_name="/search")
    results = out[RESULT]["results"]
    assert len(results) == 4
    for r in results:
        assert {"deployment_id", "event_id", "timestamp", "detections", "matched_detection"} <= set(r)
    stamps = {r["timestamp"] for r in results}
    assert {"2024-06-21T13:00:00+01:00", "2024-06-22T02:00:00", None} <= stamps


def test_deployment_and_by_event_parameters(site):
    out = site.predict(*OLD, "siteA", "", False, True, "", "", "", api_name="/search")
    (only,) = out[RESULT]["results"]
    assert only["deployment_id"] == "siteA" and only["event_frames"] == 2 and len(only["event_frame_ids"]) == 2


def test_a_bad_time_of_day_is_refused_in_words(site):
    with pytest.raises(Exception) as err:
        site.predict(*OLD, "", "teatime", False, False, "", "", "", api_name="/search")
    assert "teatime" in str(err.value)


def test_a_raw_call_with_only_the_older_values_still_works(site):
    """A script posting the 14 older values as JSON (no client filling in the rest) gets its results."""
    status, reply = site.server.get("/gradio_api/call/search", "POST", json.dumps({"data": list(OLD)}).encode(),
                                    {"Content-Type": "application/json"})
    assert status == 200, reply
    _, stream = site.server.get(f"/gradio_api/call/search/{json.loads(reply)['event_id']}")
    text = stream.decode("utf-8", "replace")
    assert "event: complete" in text and "deployment_id" in text, text[-500:]
