"""What an ecologist reads on the synthetic world: the yes/no checks of a Verify search, the parts of a Cover
search, and a three-turn dialogue in which marked photos stay marked and are named by the rank numbers on
screen. Each test saves a screenshot the README and docs/user-guide.md show (docs/screenshots/verify.png,
cover.png, dialogue-3-turns.png)."""
from __future__ import annotations

import re

from fieldguide.species import SPECIES
from tests.browser.pages import captions, search, tab

VERIFY_QUERY = "What colour is the belly of the Gold-crested Tuftling?"
COVER_QUERY = "Slate Reedpiper showing both its black crest and its orange belly"
DIALOGUE_START = "a bird perched on a branch"
QUESTION_WORDS = ("Is", "Are", "Does", "Do", "Can", "Has", "Have", "What", "Which", "How")


def _readable(question: str) -> bool:
    """A question as a naturalist would write it: a question word first, one question mark at the end, no
    function word said twice in a row."""
    words = question.split()
    doubled = any(a.lower() == b.lower() for a, b in zip(words, words[1:]))
    return bool(words) and words[0] in QUESTION_WORDS and question.endswith("?") and question.count("?") == 1 \
        and not doubled


def test_verify_checks_read_as_questions_about_the_species(server, open_browser, shot):
    page = open_browser()
    search(page, VERIFY_QUERY, preset="Verify")
    page.locator("#search-gallery .thumbnail-item").first.click()
    page.wait_for_selector("#search-explanation .ecolens-badge")
    page.locator("#lightbox-title").click()
    page.keyboard.press("Escape")  # close the photo view; the explanation beside the gallery stays
    badges = page.eval_on_selector_all("#search-explanation .ecolens-badge", "els => els.map(e => e.innerText)")
    questions = [m.group(0).strip() for b in badges for m in re.finditer(r"[A-Z][^?]*\?", b)]
    assert questions, badges
    assert all(_readable(q) for q in questions), questions
    assert any("Gold-crested Tuftling" in q for q in questions), questions  # the identity question names it
    assert not any(re.search(r"\bdoes (?:the )?crest\b|\bis there a does\b", q, re.IGNORECASE) for q in questions)
    first = captions(page)[0]
    notices = page.locator("#search-notices").inner_text()
    # honest ranking: a #1 that fails its checks is never shown without the notice above the gallery
    if "Gold-crested Tuftling" not in first:
        assert "no photo passed every check" in notices.lower(), (first, notices)
    shot(page, "verify")


def test_cover_splits_the_request_into_the_organism_with_each_part(server, open_browser, shot):
    page = open_browser()
    search(page, COVER_QUERY, preset="Cover")
    evidence = page.locator("#search-evidence").inner_text()
    page.locator("#search-gallery .thumbnail-item").first.click()
    page.wait_for_selector("#search-explanation .ecolens-cover")
    page.locator("#lightbox-title").click()
    page.keyboard.press("Escape")
    text = page.locator("#search-explanation").inner_text() + "\n" + evidence
    assert "Slate Reedpiper with a black crest" in text and "Slate Reedpiper with an orange belly" in text, text
    assert "showing both" not in text.split("Parts of the query")[-1]
    assert "Parts no photo covers" not in text  # the world holds photos showing both
    # no photo of the world shows the crest (side view) and the belly (from below) at once: each part has its
    # own covering photos
    assert all("covers" in c for c in captions(page)[:2]), captions(page)
    shot(page, "cover")


def _rank(caption: str) -> int:
    return int(re.search(r"· #(\d+)", caption).group(1))


def _birds(captions_: list[str]) -> list[int]:
    """Positions of the candidates whose caption names a bird of the world (the species name the page shows)."""
    birds = [sp.common_name for sp in SPECIES if sp.plan == "bird"]
    return [i for i, c in enumerate(captions_) if any(name in c for name in birds)]


def test_three_turn_dialogue_keeps_every_marked_photo_marked(server, open_browser, shot):
    page = open_browser()
    tab(page, "Dialogue")
    page.fill("#dialogue-start-text textarea", DIALOGUE_START)
    page.click("#dialogue-start")
    page.wait_for_selector("#dialogue-gallery .thumbnail-item img")
    bots = "document.querySelectorAll('#dialogue-chat [data-testid=bot]').length"
    page.wait_for_function(f"{bots} >= 1")
    galleries, questions, descriptions, marked = [], [], [], []
    for turn, answer in enumerate(["no", "no", "not sure"]):
        questions.append(page.locator("#dialogue-chat [data-testid=bot]").last.inner_text().strip())
        galleries.append(captions(page, "#dialogue-gallery"))
        descriptions.append(page.locator("#dialogue-description textarea").input_value())
        if turn == 1:  # mark the first two birds shown: both stay starred, named by their rank numbers
            birds = _birds(galleries[-1])[:2]
            assert len(birds) == 2, galleries[-1]  # the candidates for "a bird ..." hold birds to mark
            marked = sorted(_rank(galleries[-1][i]) for i in birds)
            for n, index in enumerate(birds, start=1):
                page.locator("#dialogue-gallery .thumbnail-item").nth(index).click()
                page.wait_for_function("(n) => [...document.querySelectorAll('#dialogue-gallery .caption-label')]"
                                       ".filter(e => e.innerText.startsWith('✓')).length >= n", arg=n)
            page.keyboard.press("Escape")
            starred = [c for c in captions(page, "#dialogue-gallery") if c.startswith("✓")]
            assert sorted(_rank(c) for c in starred) == marked and all(_birds([c]) for c in starred), starred
            assert f"#{marked[0]}, #{marked[1]}" in page.locator("#dialogue-marked").inner_text()
        if answer == "not sure":
            page.click("#dialogue-not-sure")
        else:
            page.fill("#dialogue-answer textarea", answer)
            page.click("#dialogue-send")
        page.wait_for_function(f"{bots} >= {turn + 2}")
    page.wait_for_selector("#dialogue-gallery .thumbnail-item img")
    descriptions.append(page.locator("#dialogue-description textarea").input_value())
    assert all(_readable(q) for q in questions) and len(set(questions)) == 3, questions
    assert galleries[1] != galleries[0]  # a "no" moved the candidates
    # every turn searches for the whole description: the bird, how it sits and where (no "yes" added anything)
    assert all(d.startswith(DIALOGUE_START) for d in descriptions), descriptions
    users = page.eval_on_selector_all("#dialogue-chat [data-testid=user]", "els => els.map(e => e.innerText)")
    assert any(f"#{marked[0]}, #{marked[1]}" in u for u in users), users  # named as the screen named them
    starred = [c for c in captions(page, "#dialogue-gallery") if c.startswith("✓")]
    assert sorted(_rank(c) for c in starred) == [1, 2], starred  # the marked photos come first, still marked
    assert all(_birds([c]) for c in starred), starred
    # how the dialogue picked its questions is never a warning in internal words
    toasts = page.eval_on_selector_all(".toast-item", "els => els.map(e => e.innerText)")
    assert not any("offline rule" in t or "proposed question" in t for t in toasts), toasts
    shot(page, "dialogue-3-turns")
