"""Presentation helpers: escaping, coverage and evidence panels, overlap table."""
from __future__ import annotations

import re

from ui import badges, evidence, present, tables


def test_explanation_shows_coverage_and_escapes_metadata():
    hit = {"id": 7, "rank": 1, "score": 0.5, "taxon": "<i>Rana</i>", "license": "cc-by", "caption": "a & b"}
    stages = {"coverage": {"subqueries": [{"text": "frog"}, {"text": "calling"}],
                           "photos": [{"id": 7, "satisfies": [1], "dense": 0.3}], "uncovered": [0]}}
    html = present.explanation_html(hit, stages)
    assert "Covers: calling" in html and "&lt;i&gt;Rana&lt;/i&gt;" in html and "a &amp; b" in html
    md = evidence.evidence_md({**stages, "answer": {"text": "It calls <loudly>", "cited_ids": [7, 3]}},
                              [{"id": 3, "rank": 1}, {"id": 7, "rank": 2}])
    assert "&lt;loudly&gt;" in md and re.sub(r"<[^>]+>", "", md).count("photos #2, #1") == 1
    assert "Parts of the query:** frog; calling" in md
    header = present.cover_header([{**hit, "covers": ["calling"]}, {"id": 8, "rank": 2}], stages)
    assert "**#1: the photo that shows the most parts of your query**" in header
    assert "from #2 on, the photos closest to your whole query." in header and "Parts no photo covers:** frog" in header


def test_a_covering_photo_is_captioned_with_the_short_names_of_its_parts():
    subs = [{"text": "Slate Reedpiper with a black crest"}, {"text": "Slate Reedpiper with an orange belly"}]
    assert present.part_names(subs) == {"Slate Reedpiper with a black crest": "black crest",
                                        "Slate Reedpiper with an orange belly": "orange belly"}
    long = present.part_names([{"text": "a bird carrying a long twig of birch to the nest"}, {"text": "a nest"}])
    assert long["a nest"] == "nest" and long["a bird carrying a long twig of birch to the nest"] == \
        "bird carrying a long…"  # cut at a word, never inside one
    hits = [{"id": 1, "rank": 1, "similarity": 0.31, "common_name": "Slate Reedpiper",
             "covers": ["Slate Reedpiper with a black crest", "Slate Reedpiper with an orange belly"]},
            {"id": 2, "rank": 2, "similarity": 0.2, "common_name": "Rusty Wren"}]
    items = present.gallery_items(hits, {"coverage": {"subqueries": subs}}, ["/a.png", "/b.png"])
    assert [c for _, c in items] == ["#1 covers: black crest, orange belly · Slate Reedpiper · 0.31",
                                     "Rusty Wren · #2 · 0.20"]


def test_overlap_counts_shared_top_k():
    md = tables.overlap_md(["A", "B"], [[1, 2, 3], [3, 4, 5]], 3)
    assert "| A | 3 (100%) | 1 (33%) |" in md


def test_visualizations_include_the_reference_picture_labelled_generated():
    items = present.visualization_items({"visret": {"visualizations": [{"path": "/a.png", "seed": 4}]},
                                         "coverage": {"reference": {"path": "/r.png", "seed": 0}}})
    assert items == [("/a.png", "drawn · variant 4"), ("/r.png", "drawn · variant 0")]


def test_a_question_the_checker_cannot_see_shows_as_not_checked_and_counts_for_nothing():
    """The judge's abstention: the badge says "not checked" (no confidence, no yes) with its reason; a photo
    none of whose questions could be checked shows "not checked" as its score."""
    frog = {"question": "Is there a frog in the photo?", "answer": "yes", "p_yes": 0.99, "checked": True,
            "reason": "read from the picture: plan frog 0.99 -> p(yes) 0.99"}
    night = {"question": "Is the frog calling at night?", "answer": "not checked", "p_yes": None, "checked": False,
             "unchecked": ["calling", "at night"],
             "reason": "calling, at night: not something the photo checker can see, so this question was not checked"}
    stages = {"rerank": {"photos": [{"id": 7, "answers": [frog, night], "score": 74.5},  # (0.99 + 0.5) / 2
                                    {"id": 8, "answers": [dict(night)], "score": None}]}}
    html = present.explanation_html({"id": 7, "rank": 1, "score": 74.5}, stages)
    assert html.count("badge-unchecked") == 1 and html.count("badge-yes") == 1
    badge = html[html.index("badge-unchecked"):]
    assert "<b>not checked</b>" in badge and "Is the frog calling at night?" in badge
    assert "calling, at night: not something the photo checker can see" in badge
    assert "sure it is yes" not in badge and "counts as undecided" in badge
    assert "Checks passed: 74% (1 of 2 checked)" in html
    assert present.checked_ids(stages) == {7: 74.5}
    assert present.score_text({"id": 8, "score": 0.0}, "checks", present.checked_ids(stages)) == "not checked"
    rows = present.results_json({"hits": [{"id": 7, "rank": 1, "score": 74.5}], "stages": stages}, [], "ok")
    assert rows["results"][0]["checks"] == {"made": 1, "asked": 2} and rows["results"][0]["score"] == 74.5
    assert rows["results"][0]["badges"][1]["answer"] == "not checked"
    assert rows["results"][0]["badges"][1]["p_yes"] is None


def test_a_rerank_that_scored_no_photo_is_not_shown_on_the_checks_scale():
    unchecked = {"question": "Is it a heron?", "answer": "not checked", "p_yes": None, "checked": False,
                 "reason": "SmolVLM-256M-Instruct answers like random weights: its checks are not used."}
    none_scored = {"rerank": {"photos": [{"id": 1, "answers": [unchecked], "score": None},
                                         {"id": 2, "answers": [unchecked], "score": None}]}}
    assert present.scale_of(none_scored) == "similarity"
    one_scored = {"rerank": {"photos": [{"id": 1, "answers": [unchecked], "score": None},
                                        {"id": 2, "answers": [], "score": 81.0}]}}
    assert present.scale_of(one_scored) == "checks"
    hit = {"id": 1, "rank": 1, "similarity": 0.31}
    assert present.score_text(hit, present.scale_of(none_scored)) == "0.31"
    html = badges.badges_html([unchecked])
    assert "badge-unchecked" in html and "its checks are not used" in html
