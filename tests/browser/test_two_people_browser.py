"""Two people logged in at once (a users file: ana and ben annotate, olga owns the project), each in a
Chromium context of their own against the real server: the annotator box shows who is logged in and cannot be
typed in; neither sees, opens or fetches the other's sessions, labels or exports; only the owner is offered
the agreement, and she sees both sessions and how the two agree."""
from __future__ import annotations

import tempfile

import pytest

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.browser.pages import press, search, tab
from tests.live_server import LiveServer, app_env
from tests.people_data import people_data

PEOPLE = {"ana": "annotator", "ben": "annotator", "olga": "owner"}
QUERY = "a heron"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data, users = people_data(tmp_path_factory.mktemp("two-people"), PEOPLE, 900, count=8)
    server = LiveServer(data, env=app_env(data, ECOLENS_USERS_FILE=str(users)))
    yield server
    server.stop()


@pytest.fixture()
def person(playwright, site):
    contexts = []

    def login(name: str):
        ctx = playwright.chromium.launch_persistent_context(
            tempfile.mkdtemp(prefix="ecolens-chromium-"), executable_path=CHROMIUM, headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        contexts.append(ctx)
        answer = ctx.request.post(site.url + "login", form={"username": name, "password": f"{name}-pw"})
        assert answer.ok, answer.status
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        page.goto(site.url)
        page.wait_for_selector("#search-query textarea")
        return page

    yield login
    for ctx in contexts:
        ctx.close()


def rows(site, sql: str) -> list[tuple]:
    from tests.live_server import db_rows
    return db_rows(site.data_dir, sql)


def open_session(page, token: str) -> None:
    tab(page, "History")
    page.fill("#history-sessions input", token)
    page.click("#history-open")


def label_first(page, name: str, judge: bool = True) -> None:
    """Load QUERY in the Label tab (the annotator box already shows `name`, read-only) and judge one photo."""
    tab(page, "Label")
    box = page.locator("#label-annotator textarea, #label-annotator input").first
    page.wait_for_function("(n) => { const b = document.querySelector('#label-annotator textarea, "
                           "#label-annotator input'); return b && b.value === n; }", arg=name)
    assert box.is_disabled()  # the logged-in person, not a name to type
    page.fill("#label-k input[type=number]", "5")
    page.fill("#label-query textarea, #label-query input", QUERY)
    page.click("#label-load")
    page.wait_for_function("document.querySelectorAll('#label-board .lb-tile').length === 5")
    if judge:
        press(page, "1", 1)


def test_two_people_neither_sees_nor_changes_the_others_and_the_owner_sees_both(site, person):
    ana, ben = person("ana"), person("ben")
    search(ana, QUERY)
    search(ben, "a beetle")
    label_first(ana, "ana")
    label_first(ben, "ben")
    assert sorted(r[0] for r in rows(site, "SELECT annotator FROM labels")) == ["ana", "ben"]
    tokens = dict(rows(site, "SELECT owner, token FROM sessions WHERE kind = 'search'"))
    assert set(tokens) == {"ana", "ben"}
    assert not ana.locator("#label-agreement").is_visible()  # the agreement is the owner's

    # ana's export: hers to fetch, not ben's
    ana.click("#label-export")
    link = ana.locator("#label-export-file a").first
    link.wait_for()
    href = link.get_attribute("href")
    assert ana.context.request.get(href).status == 200
    refused = ben.context.request.get(href)
    assert refused.status == 404 and "uploads" not in refused.text()

    # ben lists only his own sessions, and ana's token opens nothing
    tab(ben, "History")
    ben.click("#history-refresh")
    ben.click("#history-sessions input")
    ben.locator("[role=option]").first.wait_for()
    listed = ben.locator("[role=option]").all_inner_texts()
    mine = rows(site, "SELECT COUNT(*) FROM sessions WHERE owner = 'ben'")[0][0]
    assert len(listed) == mine == 2 and any("beetle" in item for item in listed), listed  # his search, his labels
    ben.keyboard.press("Escape")
    before = rows(site, "SELECT COUNT(*) FROM labels")
    open_session(ben, tokens["ana"])
    ben.locator(".toast-item").filter(has_text="There is no session").first.wait_for()
    assert "heron" not in ben.locator("#history-requests").inner_text()
    assert rows(site, "SELECT COUNT(*) FROM labels") == before

    # olga, the owner, opens both and sees how the two agree
    olga = person("olga")
    open_session(olga, tokens["ana"])
    olga.wait_for_function("document.querySelector('#history-requests').innerText.includes('heron')")
    open_session(olga, tokens["ben"])
    olga.wait_for_function("document.querySelector('#history-requests').innerText.includes('beetle')")
    label_first(olga, "olga", judge=False)
    assert olga.locator("#label-agreement").is_visible()
    olga.click("#label-agreement")
    olga.wait_for_function("() => { const t = document.querySelector('#label-kappa').innerText;"
                           " return t.includes('ana') && t.includes('ben'); }")
