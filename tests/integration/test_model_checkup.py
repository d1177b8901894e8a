"""The doctor's verdict in the page (core/search/model_checkup.py): the app's own services with tiny random-weight
models under the hub-cpu profile's real names (a SmolVLM judge and captioner, a SmolLM2 LLM, in folders of those
names) check each model once, in the background, after it loads; the banner then names each model that failed
("SmolVLM-256M-Instruct answers like random weights: its checks are not used"), and a Verify search on the demo
world gets "not checked" answers carrying that reason, with no photo on the checks-passed scale. The offline
stand-ins (the demo world's embedder) are not checked. The test waits on the check's completion event."""
from __future__ import annotations

import pytest

pytest.importorskip("transformers")
pytest.importorskip("xgrammar")
pytest.importorskip("num2words")

pytestmark = pytest.mark.slow
CHECK_S = 600.0  # the tiny models' checks take seconds; a loaded 2-core machine may take far longer


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    from app import build_services
    from core.backends import vlm_loading
    from core.config import load_settings
    from fieldguide.world import build_world
    from tests.integration.test_methods_end_to_end import BACKENDS
    from tests.tiny_llm import build_tiny_llama
    from tests.tiny_vlm import build_tiny_smolvlm

    root = tmp_path_factory.mktemp("checkup")
    vlm = build_tiny_smolvlm(root / "HuggingFaceTB" / "SmolVLM-256M-Instruct", yes_no=True)
    llm = build_tiny_llama(root / "HuggingFaceTB" / "SmolLM2-360M-Instruct")
    csv_path = build_world(root / "world", seed=0, per_species=1, benchmark=False)
    settings = load_settings(environ={}, data_dir=str(root / "data"), embedder=BACKENDS["embedder"],
                             generator="standin", judge=f"transformers:{vlm}", captioner=f"transformers:{vlm}",
                             llm=f"transformers:{llm}", device="cpu", workers="off", rerank_k=6, k=6)
    vlm_loading.forget_models()
    built = build_services(settings, checks=True)
    built.ingestor().run(str(csv_path), None)
    built.corpus.reload()
    yield built
    vlm_loading.forget_models()


def test_random_weights_are_named_in_the_banner_after_the_background_check(services):
    checkup = services.checkup
    assert checkup is not None and checkup.done.is_set() and not checkup.results  # nothing loaded: nothing checked
    before = services.banner()
    assert "random weights" not in before
    for kind in ("judge", "captioner", "llm"):  # loading each model starts its check
        getattr(services.backends, kind)
    assert checkup.done.wait(CHECK_S), "the background check did not finish"
    assert set(checkup.results) == {"judge", "captioner", "llm"}  # the stand-in embedder is not checked
    assert checkup.failed() == ["judge", "llm", "captioner"]
    banner = services.banner()
    assert ("SmolVLM-256M-Instruct answers like random weights: its checks are not used, its captions are not "
            "meaningful.") in banner
    assert "SmolLM2-360M-Instruct answers like random weights: its written questions and rewrites are not " \
           "meaningful." in banner
    assert services.backends.unusable["judge"] == ("SmolVLM-256M-Instruct answers like random weights: its checks "
                                                   "are not used.")


def test_a_failed_judge_leaves_every_check_not_checked(services):
    import json

    from core.contracts.search_request import SearchRequest
    from ui.badges import badges_html
    from ui.present import scale_of, score_text

    assert services.backends.judge is not None  # loaded (its check started, if not already)
    assert services.checkup.done.wait(CHECK_S), "the background check did not finish"
    assert "judge" in services.backends.unusable
    calls = dict(services.engine.backends.calls)
    res = services.engine.search(SearchRequest("a small brown bird", method="baseline", rerank="subq", k=6,
                                               rerank_k=6))
    out = json.loads(json.dumps(res.to_json(), default=str))
    rr = out["stages"]["rerank"]
    assert rr["photos"] and rr["scored"] == 0 and rr["order"] == "first-stage"
    answers = [a for p in rr["photos"] for a in p["answers"]]
    assert answers and all(not a["checked"] and a["answer"] == "not checked" for a in answers)
    assert all(a["reason"] == services.backends.unusable["judge"] for a in answers)
    assert services.engine.backends.calls.get("judge", 0) == calls.get("judge", 0)  # the model was not asked
    badges = badges_html(rr["photos"][0]["answers"])  # the photo view's Verify badges
    assert badges.count("badge-unchecked") == len(rr["photos"][0]["answers"]) and "badge-yes" not in badges
    assert ">not checked<" in badges and "answers like random weights: its checks are not used" in badges
    reason = services.backends.unusable["judge"].rstrip(".")
    assert f"not checked by the photo checker: none of the {len(answers)} answers ({reason})" in out["notices"]
    assert scale_of(out["stages"]) == "similarity"  # not the checks-passed scale
    assert all(score_text(h, "similarity") != "not checked" for h in out["results"])
