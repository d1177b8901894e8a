"""The login store (storage.logins) and Gradio's view of it (ui.login_tokens): a token logs its person in until
login_days have passed, only the token's hash is stored, logout ends it, ended logins are refused and deleted,
a second store on the same database (another web process, a restart) knows the same logins and the same
cookie name, and a different database has a cookie name of its own."""
from __future__ import annotations

import asyncio
import secrets
import sqlite3
import threading
from datetime import datetime, timedelta, timezone

import pytest

from core.contracts.errors import InputError
from storage.db import open_engine
from storage.logins import SqlLogins, token_hash
from ui.login_tokens import Everyone, LoginTokens, lifespan


class Clock:
    def __init__(self):
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "ecolens.sqlite"
    return path, open_engine(path)


def raw(path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def test_a_token_logs_its_person_in_and_only_its_hash_is_stored(db):
    path, engine = db
    store = SqlLogins(engine, 14)
    token = secrets.token_urlsafe(16)
    store.add(token, "ana")
    assert store.name(token) == "ana"
    assert store.name(token + "x") is None and store.name("") is None
    rows = raw(path, "SELECT * FROM logins")
    assert len(rows) == 1 and token_hash(token) in rows[0]
    assert not any(token in str(value) for value in rows[0])  # the token itself is nowhere in the row
    for file in (path, path.with_name(path.name + "-wal")):  # nor anywhere in the database's files
        assert not file.exists() or token.encode() not in file.read_bytes()


def test_another_process_and_a_restart_know_the_login_and_the_cookie_name(db, tmp_path):
    path, engine = db
    token = secrets.token_urlsafe(16)
    first = SqlLogins(engine, 14)
    first.add(token, "ben")
    engine.dispose()
    again = SqlLogins(open_engine(path), 14)  # a new engine on the same file: another process, or after a restart
    assert again.name(token) == "ben"
    assert again.cookie_id == first.cookie_id and len(first.cookie_id) >= 20
    other = SqlLogins(open_engine(tmp_path / "other" / "ecolens.sqlite"), 14)  # another data directory
    assert other.cookie_id != first.cookie_id and other.name(token) is None


def test_a_login_ends_after_login_days_and_ended_ones_are_deleted_at_the_next_login(db):
    path, engine = db
    clock = Clock()
    store = SqlLogins(engine, 2, clock=clock)
    old, fresh = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    store.add(old, "ana")
    clock.now += timedelta(days=2) - timedelta(seconds=1)
    assert store.name(old) == "ana" and store.count() == 1
    clock.now += timedelta(seconds=1)
    assert store.name(old) is None and store.count() == 0 and store.names() == []  # refused at once
    assert raw(path, "SELECT COUNT(*) FROM logins") == [(1,)]  # still there until the next login
    store.add(fresh, "ben")
    assert raw(path, "SELECT name FROM logins") == [("ben",)]
    created, expires = raw(path, "SELECT created_at, expires_at FROM logins")[0]
    assert datetime.fromisoformat(expires) - datetime.fromisoformat(created) == timedelta(days=2)


def test_logout_ends_one_token_or_every_login_of_a_person(db):
    _, engine = db
    store = SqlLogins(engine, 14)
    a1, a2, b = (secrets.token_urlsafe(16) for _ in range(3))
    store.add(a1, "ana")
    store.add(a2, "ana")
    store.add(b, "ben")
    assert store.names() == ["ana", "ben"] and store.count() == 3
    store.remove(a1)
    assert store.name(a1) is None and store.name(a2) == "ana"
    assert store.remove_person("ana") == 1
    assert store.name(a2) is None and store.name(b) == "ben" and store.names() == ["ben"]


@pytest.mark.parametrize("days", [0, -1, 1000])
def test_login_days_out_of_range_is_refused_with_a_fix(db, days):
    with pytest.raises(InputError, match="login_days must be") as err:
        SqlLogins(db[1], days)
    assert "e.g. 14" in err.value.hint


def test_gradio_reads_writes_and_logs_out_through_the_mapping(db):
    _, engine = db
    store = SqlLogins(engine, 14)
    tokens = LoginTokens(store)
    ana, ben = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    tokens[ana] = "ana"  # Gradio's /login
    tokens[ben] = "ben"
    assert tokens.get(ana) == "ana" and tokens.get(None) is None and tokens.get("nope") is None  # /user, /token
    assert ana in tokens and "nope" not in tokens and len(tokens) == 2
    # Gradio's /logout (all sessions): every key whose value is the person is deleted
    for key in list(tokens.keys()):
        assert isinstance(key, Everyone)
        if tokens[key] == "ana":
            del tokens[key]
    assert tokens.get(ana) is None and tokens.get(ben) == "ben"
    del tokens[ben]  # /logout of one session: the cookie's token
    assert store.count() == 0
    with pytest.raises(KeyError):
        tokens[""] = "nobody"


def test_the_lifespan_puts_the_store_and_its_cookie_name_in_before_the_app_serves(db):
    store = SqlLogins(db[1], 14)

    class App:
        tokens: dict = {}
        cookie_id = "random-per-process"

    app = App()

    async def run():
        async with lifespan(store)(app):
            return app.tokens, app.cookie_id
    # a loop of its own in a thread of its own: an earlier test of the suite may leave this thread's loop running
    out: list = []
    worker = threading.Thread(target=lambda: out.append(asyncio.run(run())))
    worker.start()
    worker.join(timeout=30)
    tokens, cookie_id = out[0]
    assert isinstance(tokens, LoginTokens) and tokens.store is store and cookie_id == store.cookie_id


def test_launch_options_hand_the_store_to_gradio_only_when_people_log_in(db, tmp_path):
    from core.config import Settings
    from ui.server import launch_options

    store = SqlLogins(db[1], 14)
    assert "lifespan" not in launch_options(Settings(data_dir=str(tmp_path)), environ={}, logins=store)["app_kwargs"]
    with_password = launch_options(Settings(data_dir=str(tmp_path), password="pw"), environ={}, logins=store)
    assert "lifespan" in with_password["app_kwargs"]


def test_a_person_taken_out_of_the_users_file_is_logged_out_though_their_login_is_kept(db, tmp_path):
    """A login lasts login_days across restarts now; a person whose line the owner took out of the users file
    is no longer let in by it (before the logins were kept, a restart ended every login)."""
    from core.config import Settings
    from core.people.users import Users, add_user
    from ui.server import launch_options

    users_path = tmp_path / "users.txt"
    add_user(users_path, "ana", "ana-pw", "annotator")
    add_user(users_path, "ben", "ben-pw", "annotator")
    store = SqlLogins(db[1], 14)
    opts = launch_options(Settings(data_dir=str(tmp_path), users_file=str(users_path)), environ={},
                          users=Users(users_path), logins=store)

    class App:
        tokens: dict = {}
        cookie_id = "random-per-process"

    app = App()

    async def enter():
        async with opts["app_kwargs"]["lifespan"](app):
            pass
    # a loop of its own in a thread of its own: an earlier test of the suite may leave this thread's loop running
    worker = threading.Thread(target=lambda: asyncio.run(enter()))
    worker.start()
    worker.join(timeout=30)
    ana, ben = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    app.tokens[ana], app.tokens[ben] = "ana", "ben"
    assert app.tokens.get(ana) == "ana" and app.tokens.get(ben) == "ben"
    lines = users_path.read_text(encoding="utf-8").splitlines()
    users_path.write_text("".join(line + "\n" for line in lines if not line.startswith("ana:")), encoding="utf-8")
    assert app.tokens.get(ana) is None and ana not in app.tokens  # Gradio asks for the password again
    assert app.tokens.get(ben) == "ben" and store.name(ana) == "ana"  # ben stays; the row ends with login_days


def test_a_login_through_one_gradio_server_is_honoured_by_another_on_the_same_database(db):
    """Two Gradio servers in this process stand for two web processes (or one before and after a restart)."""
    import urllib.parse
    import urllib.request

    import gradio as gr

    def serve(store):
        with gr.Blocks() as blocks:
            gr.Markdown("hello")
        blocks.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True,
                      auth=lambda user, password: password == f"{user}-pw",
                      app_kwargs={"lifespan": lifespan(store)})
        return blocks

    store = SqlLogins(db[1], 14)
    first, second = serve(store), serve(SqlLogins(open_engine(db[0]), 14))
    try:
        form = urllib.parse.urlencode({"username": "ana", "password": "ana-pw"}).encode()
        with urllib.request.urlopen(urllib.request.Request(first.local_url + "login", data=form), timeout=30) as r:
            cookies = [c.split(";", 1)[0] for c in r.headers.get_all("set-cookie")]
        assert [c.split("=", 1)[0] for c in cookies] == [f"access-token-{store.cookie_id}",
                                                         f"access-token-unsecure-{store.cookie_id}"]
        assert store.names() == ["ana"]
        for server in (first, second):
            request = urllib.request.Request(server.local_url + "gradio_api/user", headers={"Cookie": cookies[0]})
            with urllib.request.urlopen(request, timeout=30) as r:
                assert r.read() == b'"ana"'
    finally:
        first.close()
        second.close()
