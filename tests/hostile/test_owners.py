"""Each person's sessions, labels, identifications and files are theirs (issue 36, items 1 and 2), against the
real web app with a users file: ana and ben (annotators) and olga (the owner). Table-driven: each hostile call
by ben (another's session token, a session number, SQL text, another's name on a label or an identification,
the agreement, another's export, a file no one was handed) gets its message, says no server path, and changes
nothing in the database; then what each may do: ana reopens her session and fetches her export, olga sees
both and their agreement."""
from __future__ import annotations

import csv
import json
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.live_server import LiveServer, app_env, counts, integrity_ok
from tests.people_data import people_data

gradio_client = pytest.importorskip("gradio_client")
PEOPLE = {"ana": "annotator", "ben": "annotator", "olga": "owner"}
QUERY = "a heron"
NO_SESSION = "There is no session"
LEAKS = ("Traceback", "/tmp/", "sqlite", "SELECT", "File \"")


@dataclass
class World:
    server: LiveServer
    data: Path
    cookies: dict[str, str]
    clients: dict[str, Any]
    tokens: dict[str, str]  # person -> the token of their search session
    photos: list[int]
    export: dict[str, Any]  # ana's label export as the API handed it (path, url)


def call(world: World, who: str, api: str, args: list) -> tuple[int, str]:
    """(HTTP status, 'COMPLETE' or the error's message) of one call as `who`, through /gradio_api/call."""
    headers = {"Content-Type": "application/json", "Cookie": world.cookies[who]}
    status, reply = world.server.get(f"/gradio_api/call{api}", "POST", json.dumps({"data": args}).encode(), headers)
    if status != 200:
        return status, reply.decode("utf-8", "replace")
    event = json.loads(reply)["event_id"]
    _, stream = world.server.get(f"/gradio_api/call{api}/{event}", headers={"Cookie": world.cookies[who]})
    text = stream.decode("utf-8", "replace")
    if "event: complete" in text:
        return 200, "COMPLETE"
    data = text.split("event: error", 1)[-1].split("data:", 1)[-1].strip()
    return 200, str(json.loads(data)) if data else ""


def fetch(world: World, who: str, path: str) -> tuple[int, str]:
    status, body = world.server.get("/gradio_api/file=" + urllib.parse.quote(path),
                                    headers={"Cookie": world.cookies[who]})
    return status, body.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    data, users = people_data(tmp_path_factory.mktemp("owners"), PEOPLE, 700)
    server = LiveServer(data, env=app_env(data, ECOLENS_USERS_FILE=str(users)))
    try:
        cookies = {}
        for name in PEOPLE:
            status, cookie = server.login(f"{name}-pw", name)
            assert status == 200 and cookie, status
            cookies[name] = cookie
        clients = {n: gradio_client.Client(server.url, verbose=False, auth=(n, f"{n}-pw"), download_files=False)
                   for n in PEOPLE}
        tokens, found = {}, []
        for name in ("ana", "ben"):
            *_, result = clients[name].predict(QUERY, api_name="/search")
            tokens[name], found = result["session_id"], [r["id"] for r in result["results"]]
        for pid in found[:3]:  # they agree on the first photo only
            clients["ana"].predict(QUERY, pid, 1, "", 0.5, api_name="/label")
            clients["ben"].predict(QUERY, pid, 1 if pid == found[0] else 0, "ben", 0.5, api_name="/label")
        export = clients["ana"].predict("csv", QUERY, "", api_name="/export")
        yield World(server, data, cookies, clients, tokens, found, export)
    finally:
        server.stop()


@dataclass
class Hostile:
    name: str
    api: str
    args: Callable[[World], list]
    words: str


CASES = [
    Hostile("another's session token", "/history_open", lambda w: [w.tokens["ana"]], NO_SESSION),
    Hostile("a session number", "/history_open", lambda w: [1], NO_SESSION),
    Hostile("a session number as text", "/history_open", lambda w: ["1"], NO_SESSION),
    Hostile("SQL text", "/history_open", lambda w: ["1 OR 1=1"], NO_SESSION),
    Hostile("a token-shaped guess", "/history_open", lambda w: ["AAAAAAAAAAAAAAAAAAAAAA"], NO_SESSION),
    Hostile("a label under another's name", "/label", lambda w: [QUERY, w.photos[0], 0, "ana", 1.0],
            "You are logged in as 'ben'"),
    Hostile("a label under another's name typed wide and with a zero-width space", "/label",
            lambda w: [QUERY, w.photos[1], 1, "ａｎ\u200bａ", 1.0], "You are logged in as 'ben'"),
    Hostile("another's labels exported", "/export", lambda w: ["csv", QUERY, "ana"],
            "You are logged in as 'ben': you label, load and export labels under your own name only, not 'ana'"),
    Hostile("the agreement as an annotator", "/agreement", lambda w: [], "Only the project's owner"),
    Hostile("an identification under another's name", "/identify",
            lambda w: ["Ardea cinerea", "ana", w.photos[0], None, None], "You are logged in as 'ben'"),
    Hostile("photos to label under another's name", "/label_load", lambda w: [QUERY, "olga", 5],
            "You are logged in as 'ben'"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_ben_cannot_reach_what_is_not_his(world, case: Hostile):
    before = counts(world.data)
    status, message = call(world, "ben", case.api, case.args(world))
    assert status == 200 and case.words in message, message
    assert not any(leak in message for leak in LEAKS), message
    assert counts(world.data) == before  # nothing was written
    assert integrity_ok(world.data)


def test_the_same_answer_for_another_persons_session_as_for_none(world):
    _, theirs = call(world, "ben", "/history_open", [world.tokens["ana"]])
    _, nothing = call(world, "ben", "/history_open", ["B" * 22])
    assert theirs.replace(world.tokens["ana"], "B" * 22) == nothing


def test_files_are_served_only_to_whom_they_were_handed(world):
    path = world.export["path"]
    assert fetch(world, "ana", path)[0] == 200
    status, body = fetch(world, "ben", path)
    assert status == 404 and path not in body and "uploads" not in body
    folder = tempfile.mkdtemp(prefix="put-there-by-another-program-", dir=Path(path).parent.parent)
    foreign = Path(folder) / "secret.txt"
    foreign.write_text("not EcoLens's")
    for who in PEOPLE:
        status, body = fetch(world, who, str(foreign))
        assert status == 404 and "secret" not in body and str(foreign.parent) not in body
    status, body = fetch(world, "ana", str(world.data / "ecolens.sqlite"))  # outside every served folder
    assert status in (403, 404) and str(world.data) not in body


def test_each_sees_their_own_and_the_owner_sees_both(world):
    status, message = call(world, "ana", "/history_open", [world.tokens["ana"]])
    assert (status, message) == (200, "COMPLETE")
    rows = _annotators(world.clients["ana"].predict("csv", QUERY, "", api_name="/export")["path"])
    assert rows == {"ana"}  # her export holds her labels only
    table, *_ = world.clients["olga"].predict(world.tokens["ben"], api_name="/history_open")
    assert QUERY in table
    assert call(world, "olga", "/history_open", [world.tokens["ana"]]) == (200, "COMPLETE")
    everyone = world.clients["olga"].predict("csv", QUERY, "", api_name="/export")["path"]
    assert _annotators(everyone) == {"ana", "ben"}
    with open(everyone, newline="") as f:
        tokens = {r["session_id"] for r in csv.DictReader(f)}
    assert tokens and all(len(t) >= 16 and not t.isdigit() for t in tokens)  # sessions named by their tokens
    annotators = {r[0] for r in _rows(world, "SELECT annotator FROM labels")}
    owners = {r[0] for r in _rows(world, "SELECT owner FROM sessions")}
    assert annotators == {"ana", "ben"} and owners == {"ana", "ben"}
    assert all(len(r[0]) >= 16 for r in _rows(world, "SELECT token FROM sessions"))


def _annotators(path: str) -> set[str]:
    with open(path, newline="") as f:
        return {r["annotator"] for r in csv.DictReader(f)}


def _rows(world: World, sql: str) -> list[tuple]:
    from tests.live_server import db_rows
    return db_rows(world.data, sql)
