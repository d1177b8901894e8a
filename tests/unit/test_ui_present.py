"""Presentation helpers: escaping, coverage and evidence panels, overlap table."""
from __future__ import annotations

from ui import present


def test_explanation_shows_coverage_and_escapes_metadata():
    hit = {"id": 7, "rank": 1, "score": 0.5, "taxon": "<i>Rana</i>", "license": "cc-by", "caption": "a & b"}
    stages = {"coverage": {"subqueries": [{"text": "frog"}, {"text": "calling"}],
                           "photos": [{"id": 7, "satisfies": [1], "dense": 0.3}], "uncovered": [0]}}
    html = present.explanation_html(hit, stages)
    assert "Covers: calling" in html and "&lt;i&gt;Rana&lt;/i&gt;" in html and "a &amp; b" in html
    md = present.evidence_md({**stages, "answer": {"text": "It calls <loudly>", "cited_ids": [7, 3]}})
    assert "&lt;loudly&gt;" in md and "photos 7, 3" in md and "Parts no photo covers:** frog" in md


def test_overlap_counts_shared_top_k():
    md = present.overlap_md(["A", "B"], [[1, 2, 3], [3, 4, 5]], 3)
    assert "| A | 3 (100%) | 1 (33%) |" in md


def test_visualizations_include_the_reference_picture_labelled_generated():
    items = present.visualization_items({"visret": {"visualizations": [{"path": "/a.png", "seed": 4}]},
                                         "coverage": {"reference": {"path": "/r.png", "seed": 0}}})
    assert items == [("/a.png", "drawn · variant 4"), ("/r.png", "drawn · variant 0")]
