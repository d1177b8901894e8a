"""Logins under `python app.py serve --processes 2` with a users file: a person who logs in through one web process
is logged in on the other (the same cookie, read from the database), keeps their login and their sessions when
their web process is killed with SIGKILL and started again by the supervisor, and a logout through one process
ends the login on both. Another person still cannot open their session."""
from __future__ import annotations

import os
import shutil
import signal

import pytest

from tests.integration.test_serve_processes import FORM
from tests.live_server import db_rows
from tests.people_data import people_data
from tests.served_site import request, served, wait_for

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (apt-get install nginx)")
QUERY = "a heron"
PEOPLE = {"ana": "annotator", "ben": "annotator"}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data, users = people_data(tmp_path_factory.mktemp("logins"), PEOPLE, 500)
    with served(data, 2, ECOLENS_USERS_FILE=str(users)) as found:
        yield found


def test_a_login_holds_on_every_process_and_across_a_killed_process(site):
    (a, route_a), (b, route_b) = sorted(site.routes.items())
    ana = site.login("ana", "ana-pw", route_a)
    ben = site.login("ben", "ben-pw", route_b)
    assert site.user(ana, route_a) == ("ana", a)
    assert site.user(ana, route_b) == ("ana", b)  # the cookie made by process a, honoured by process b
    assert site.user(ben, route_a) == ("ben", a)
    assert site.user("", route_b) == (None, b)
    stored = db_rows(site.data_dir, "SELECT * FROM logins")
    assert len(stored) == 2 and not any(ana.split("=", 1)[1] in str(row) for row in stored)  # hashes only

    def searched():
        kind, out = site.call("search", [QUERY, *FORM], ana, route_a)
        return out[8]["session_id"] if kind == "complete" and isinstance(out[8], dict) else None
    session = wait_for("ana's first search (the collection being prepared)", searched)
    assert site.call("history_open", [session], ana, route_b)[0] == "complete"  # hers on the other process
    refused = site.call("history_open", [session], ben, route_b)
    assert refused[0] == "error" and "no session" in str(refused[1]).lower(), refused

    # process a killed: the supervisor starts it again, and ana is still logged in there, with her session
    old = site.web_pid(a)
    assert old is not None
    os.kill(old, signal.SIGKILL)
    wait_for("process a's restart", lambda: (site.web_pid(a) or old) != old)
    assert wait_for("ana's login answered by the new process a", lambda: site.user(ana, route_a) == ("ana", a))
    assert site.call("history_open", [session], ana, route_a)[0] == "complete"
    assert site.call("history_open", [session], ben, route_a)[0] == "error"

    # a logout through process b ends ana's login on process a too; ben stays logged in
    status, _, _ = request(site.url + "logout", f"ecolens_route={route_b}; {ana}")
    assert status in (200, 302)
    assert site.user(ana, route_a) == (None, a)
    assert site.user(ben, route_a) == ("ben", a)
    assert [r[0] for r in db_rows(site.data_dir, "SELECT name FROM logins")] == ["ben"]
