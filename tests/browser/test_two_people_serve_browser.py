"""The two-person test (tests/browser/test_two_people_browser.py) through `python app.py serve --processes 2` behind
nginx: ana and ben annotate, olga owns the project, each in a Chromium context of their own. Each logs in through
one web process and then works on the other (their route cookie set to it), so every page runs on a process
that did not make its login; ana and ben work on different processes. Neither sees, opens or fetches the other's
sessions, labels or exports; the owner sees both. Every answer each page got came from its planned process."""
from __future__ import annotations

import shutil
import tempfile

import pytest

from tests.browser import test_two_people_browser as one_process
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.people_data import people_data
from tests.served_site import served

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (apt-get install nginx)")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data, users = people_data(tmp_path_factory.mktemp("two-people-serve"), one_process.PEOPLE, 900, count=8)
    with served(data, 2, ECOLENS_USERS_FILE=str(users)) as found:
        yield found


@pytest.fixture()
def person(playwright, site):
    """login(name): a page of `name`, logged in through one process and working on the other (ana and olga log in
    through the first process, ben through the second). `answered[name]`: (the process it works on, the
    (process, url) of every answer to a request that carried its route cookie)."""
    (first, route_1), (second, route_2) = sorted(site.routes.items())
    plan = {"ben": (route_2, route_1, first)}
    contexts, answered = [], {}

    def login(name: str):
        login_route, work_route, work_process = plan.get(name, (route_1, route_2, second))
        ctx = playwright.chromium.launch_persistent_context(
            tempfile.mkdtemp(prefix="ecolens-chromium-"), executable_path=CHROMIUM, headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        contexts.append(ctx)
        ctx.add_cookies([{"name": "ecolens_route", "value": login_route, "url": site.url}])
        answer = ctx.request.post(site.url + "login", form={"username": name, "password": f"{name}-pw"})
        assert answer.ok, answer.status
        assert answer.headers["x-ecolens-process"] != work_process  # logged in elsewhere than it works
        ctx.add_cookies([{"name": "ecolens_route", "value": work_route, "url": site.url}])
        seen = answered.setdefault(name, (work_process, set()))[1]

        def answer(response) -> None:  # a request sent without cookies (the page's manifest) goes by address
            routed = "ecolens_route=" in response.request.all_headers().get("cookie", "")
            if routed and response.url.startswith(site.url):
                seen.add((response.headers.get("x-ecolens-process"), response.url[:100]))
        ctx.on("response", answer)
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        page.goto(site.url)
        page.wait_for_selector("#search-query textarea")
        return page

    login.answered = answered
    yield login
    for ctx in contexts:
        ctx.close()


def test_two_people_on_two_web_processes_neither_sees_the_others_and_the_owner_sees_both(site, person):
    one_process.test_two_people_neither_sees_nor_changes_the_others_and_the_owner_sees_both(site, person)
    assert set(person.answered) == {"ana", "ben", "olga"}
    for name, (process, seen) in person.answered.items():
        stray = [answer for answer in seen if answer[0] != process]
        assert len(seen) > 10 and not stray, (name, process, stray)  # every routed answer came from its process
    assert person.answered["ana"][0] != person.answered["ben"][0]
