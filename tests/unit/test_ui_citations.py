"""Answers point at the screen: the evidence answer cites the ranks shown in the gallery (links that open the
photo), never raw photo ids; a cited photo that is not on screen is named as such; the answer box is offered
beside the query only while the query is a question."""
from __future__ import annotations

from ui import evidence
from ui.search_form import SearchForm

HITS = [{"id": 281, "rank": 1}, {"id": 57, "rank": 2}, {"id": 12, "rank": 3}]


def test_citations_become_ranks_linked_to_their_photos():
    stages = {"answer": {"text": "Its wings are pale yellow [57] and cream [12, 281]; see also [999].",
                         "cited_ids": [57, 12, 281, 999]}}
    md = evidence.evidence_md(stages, HITS)
    assert "[57]" not in md and "281" not in md
    assert "yellow [<a class='ecolens-cite' href='#photo-2' title='open photo #2'>#2</a>]" in md
    assert "'>#3</a>, <a class='ecolens-cite' href='#photo-1'" in md  # [12, 281] -> [#3, #1]
    assert "[id 999 (not among the results shown)]" in md  # an id the page does not show is said to be one
    assert md.count("href='#photo-2'") == 1  # each cited once: in the text, not again in a list after it


def test_photos_used_but_not_cited_in_the_text_are_listed_after_it():
    md = evidence.evidence_md({"answer": {"text": "Its wings are pale yellow [57].", "cited_ids": [57, 12]}}, HITS)
    assert md.count("href='#photo-2'") == 1 and "(photos <a class='ecolens-cite' href='#photo-3'" in md


def test_answer_text_is_escaped_before_links_are_added():
    md = evidence.evidence_md({"answer": {"text": "<script>x</script> [281]", "cited_ids": [281]}}, HITS)
    assert "<script>" not in md and "&lt;script&gt;" in md and "class='ecolens-cite'" in md


def test_the_answer_box_is_offered_for_questions_only():
    assert SearchForm.offer_answer("what colour is the underside of a tawny pipit's wings?")["visible"]
    assert SearchForm.offer_answer("Does the heron hold a fish")["visible"]
    hidden = SearchForm.offer_answer("a heron holding a fish")
    assert hidden["visible"] is False and hidden["value"] is False  # hidden, and no longer asking
