"""Every Verify search ends within its time limit, whatever the model server does: the REAL openai client
backends against misbehaving servers on 127.0.0.1 (tests/faultservers.py: no answer, 429 with Retry-After 30,
a reply dripped a byte a second, HTTP 500, an HTML page, a blind judge), with the judge alone on that server
or the language model too. Each search returns within deadline_verify_s plus 5 s with its photos (the first
stage's order for those not checked) and a notice naming the cause and the server; the blind judge is asked
no more than its image check's two pictures. A search cut by its limit says which limit passed and who took
the time, and its cut calls pause nothing: the next search asks the server again."""
from __future__ import annotations

import re
import time

import pytest

from app import build_services
from core.config import load_settings
from core.search.presets import request_for
from tests.faultservers import FaultServer
from tests.photos import make_photo_folder

CALL_S = 2.0  # backend_timeout_s
DEADLINE = 5.0  # deadline_verify_s
SLACK = 5.0  # the done-when's bound: the deadline plus 5 s

CAUSES = {
    "hang": r"did not answer within|had not answered|time limit",
    "rate_limited": r"rate-limited \(429\)",
    "drip": r"still sending its reply|time limit",
    "error_500": r"HTTP 500",
    "html": r"HTML page|not JSON|unusable|failed",
    "blind": r"does not see the photos",
}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    root = tmp_path_factory.mktemp("search-deadlines")
    folder = make_photo_folder(root / "photos", good=12, broken=0)
    settings = load_settings(environ={}, data_dir=str(root / "data"), embedder="hash", checkpoint_s=0.0)
    build_services(settings).ingestor().run(folder)
    return root


def _services(root, url: str, llm_too: bool, **kw):
    values = dict(environ={}, data_dir=str(root / "data"), embedder="hash", judge="openai", judge_model="m",
                  openai_base_url=url + "/v1", backend_timeout_s=CALL_S, backend_retries=2,
                  deadline_verify_s=DEADLINE, judge_concurrency=8)
    if llm_too:
        values.update(llm="openai", llm_model="m")
    values.update(kw)
    return build_services(load_settings(**values))


def _verify(services, query: str):
    t0 = time.monotonic()
    result = services.engine.search(request_for("Verify", query, k=8, rerank_k=8))
    return result, time.monotonic() - t0


@pytest.mark.parametrize("llm_too", [False, True], ids=["judge", "llm-and-judge"])
@pytest.mark.parametrize("mode", list(CAUSES))
def test_a_verify_search_ends_within_its_deadline_and_names_the_cause(catalog, mode, llm_too):
    with FaultServer(mode) as server:
        services = _services(catalog, server.url, llm_too)
        result, elapsed = _verify(services, "a green frog on a leaf")
        image_calls = server.image_calls
    assert elapsed < DEADLINE + SLACK, f"{mode}: {elapsed:.1f} s"
    assert len(result.hits) == 8  # the search returned what it had
    stage = result.stages["rerank"]
    assert stage["judged"] == 0 or stage["order"] != "judge"
    where = f"127.0.0.1:{server.server_address[1]}"
    naming = [n for n in result.notices if where in n and re.search(CAUSES[mode], n)]
    assert naming, f"{mode}: no notice names the cause and {where}: {result.notices}"
    assert stage["order"] == "first-stage", stage  # nothing was reordered by a failing judge
    if mode == "blind":
        assert image_calls <= 2, image_calls  # the image check's two pictures, then never again


def test_a_slow_judge_is_cut_by_the_search_deadline_and_the_rest_keep_their_order(catalog):
    """A judge that answers each call in 1 byte/s drips: every call would take longer than the search has
    left, so the search's limit (not the call's) ends them; the notice names the limit and the judge, the
    stage counts the photos not checked, and the next search probes the server again (nothing paused)."""
    with FaultServer("drip") as server:
        services = _services(catalog, server.url, False, backend_timeout_s=30.0, deadline_verify_s=3.0)
        first = services.engine.search(request_for("Fast", "a green frog on a leaf", k=8))
        result, elapsed = _verify(services, "a green frog on a leaf")
        calls = server.calls
        again, _ = _verify(services, "a red frog")
        calls_again = server.calls
    assert elapsed < 3.0 + SLACK, elapsed
    stage = result.stages["rerank"]
    assert stage["out_of_time"] == 8 and stage["judged"] == 0 and stage["order"] == "first-stage", stage
    notice = next(n for n in result.notices if "time limit" in n)
    assert re.search(r"Verify's time limit of 3 s", notice) and "photo checker at http://127.0.0.1:" in notice, notice
    assert "deadline_verify_s" in notice and "8 of 8 photos were not checked" in notice, notice
    assert calls >= 1 and calls_again > calls  # a cut call paused nothing: the next search asked again
    assert again.stages["rerank"]["paused"] == 0
    assert first.notices == [] or not any("time limit" in n for n in first.notices)


def test_a_retry_after_longer_than_the_search_has_left_is_not_waited_out(catalog):
    """429 with Retry-After 30 under a 60 s call limit but a 4 s search: no 30 s wait, the search ends in
    time and the notice names the rate limit."""
    with FaultServer("rate_limited") as server:
        services = _services(catalog, server.url, False, backend_timeout_s=60.0, deadline_verify_s=4.0)
        result, elapsed = _verify(services, "a green frog on a leaf")
    assert elapsed < 4.0 + SLACK, elapsed
    assert any("rate-limited (429)" in n and "asked to wait 30 s" in n for n in result.notices), result.notices
