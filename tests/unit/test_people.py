"""Who is who: annotator names compared NFKC-normalised without invisible characters (shown as typed), the
users file (scrypt hashes, one person a line, clear errors naming the line), `python app.py users add`, and the
session log as a logged-in person may use it (ui.owned_log)."""
from __future__ import annotations

import io
import stat

import pytest

from core.contracts import bounds
from core.contracts.errors import ConfigError, InputError, NotFoundError
from core.contracts.sessionlog import Label
from core.labels import same_annotator
from core.people.session_tokens import looks_like_token
from core.people.users import Users, add_user, hash_password, read_users, verify_password
from core.sessions.memory_log import MemorySessionLog
from ui.identity import Identity
from ui.owned_log import OwnedLog

ZWSP, ZWNJ, RLO, PDF, BOM, LRM = "\u200b", "\u200c", "\u202e", "\u202c", "\ufeff", "\u200e"


@pytest.mark.parametrize("typed", [
    "Renée", "RENÉE", "rene\u0301e",  # case and composed / decomposed accents
    "Ｒｅｎéｅ",  # full-width letters
    f"Re{ZWSP}née", f"{BOM}Renée", f"Ren{ZWNJ}ée{LRM}", f"{RLO}Renée{PDF}",  # invisible characters
    "  Renée  ", "Re\ufe0fnée",  # spaces around, a variation selector
])
def test_one_annotator_however_the_name_is_typed(typed):
    assert same_annotator(typed, "Renée")


@pytest.mark.parametrize("other", ["Rene", "René", "Renee", "Re née", "Renée2"])
def test_different_names_stay_different(other):
    assert not same_annotator(other, "Renée")


def test_names_are_stored_as_typed_and_an_invisible_only_name_is_empty():
    log = MemorySessionLog()
    sid = log.start_session("label")
    log.add_label(Label(sid, "frogs", 1, 1, "Ｒｅｎéｅ"))
    assert log.labels()[0].annotator == "Ｒｅｎéｅ"  # shown as typed (NFC only)
    with pytest.raises(InputError, match="annotator name is empty"):
        log.add_label(Label(sid, "frogs", 2, 1, f"{ZWSP}{BOM}{RLO}"))
    assert bounds.name_key(f"{ZWSP} {BOM}") == ""


def test_a_password_hash_is_salted_scrypt_and_checks_only_its_password():
    one, two = hash_password("correct horse"), hash_password("correct horse")
    assert one.startswith("scrypt$16384$8$1$") and one != two  # a fresh salt each time
    assert verify_password("correct horse", one) and verify_password("correct horse", two)
    assert not verify_password("correct hors", one) and not verify_password("", one)
    assert not verify_password("correct horse", "md5$abc") and not verify_password("x", "scrypt$3$8$1$a$b")


def test_users_add_writes_a_private_file_and_replaces_a_persons_line(tmp_path):
    path = tmp_path / "users.txt"
    add_user(path, "Ana", "first", "annotator")
    add_user(path, "Olga", "boss", "owner")
    add_user(path, "ANA", "second", "owner")  # the same person: line replaced, not added
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and lines[0].startswith("ANA:scrypt$") and lines[0].endswith(":owner")
    users = Users(path)
    assert users.check("ana", "second").role == "owner" and users.check("Ana", "first") is None
    assert users.check("nobody", "second") is None and users.check("Olga", "boss").is_owner
    with pytest.raises(InputError, match="cannot be a user name"):
        add_user(path, "a:b", "x", "annotator")
    with pytest.raises(InputError, match="Unknown role"):
        add_user(path, "Ben", "x", "admin")


def test_the_users_file_is_read_again_when_it_changes(tmp_path):
    path = tmp_path / "users.txt"
    add_user(path, "Ana", "pw", "annotator")
    users = Users(path)
    assert users.person("Ben") is None
    add_user(path, "Ben", "pw2", "annotator")
    assert users.check("Ben", "pw2") is not None  # without a restart


@pytest.mark.parametrize("line, words", [
    ("Ana", "not NAME:HASH:ROLE"),
    ("Ana:plain-password:annotator", "not scrypt$N$r$p$SALT$KEY"),
    ("Ana:{h}:admin", "unknown role 'admin'"),
    (":{h}:owner", "cannot be a user name"),
    ("Ana:{h}:owner\nana:{h}:annotator", "listed twice"),
])
def test_a_bad_users_file_is_refused_naming_its_line(tmp_path, line, words):
    path = tmp_path / "users.txt"
    path.write_text("# people\n\n" + line.format(h=hash_password("pw")) + "\n")
    with pytest.raises(ConfigError) as exc:
        read_users(path)
    assert words in exc.value.message and "users.txt line" in exc.value.message and "users add" in exc.value.hint


def test_a_users_file_written_before_the_invisible_character_refusal_still_loads(tmp_path):
    """`users add` refuses a name with a zero-width or bidi character now; a line the file already holds with one
    (written by an earlier version, or a ZWNJ of a Persian name) is still read, so the web app starts and further
    `users add` calls work; the new name itself is refused with the fix."""
    path = tmp_path / "users.txt"
    path.write_text(f"Mehr{ZWNJ}nush:{hash_password('pw')}:owner\n", encoding="utf-8")
    assert [p.name for p, _ in read_users(path).values()] == [f"Mehr{ZWNJ}nush"]
    assert Users(path).check(f"Mehr{ZWNJ}nush", "pw") is not None
    add_user(path, "ben", "ben-pw", "annotator")
    assert sorted(p.name for p, _ in read_users(path).values()) == [f"Mehr{ZWNJ}nush", "ben"]
    with pytest.raises(InputError, match="invisible characters"):
        add_user(path, f"a{ZWSP}na", "pw", "annotator")


def test_the_users_command_reads_the_password_from_stdin(tmp_path, monkeypatch, capsys):
    import app

    monkeypatch.setenv("ECOLENS_DATA_DIR", str(tmp_path))
    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret pass\n"))
    assert app.main(["users", "add", "Ana Lima", "--role", "owner"]) == 0
    assert "set users_file" in capsys.readouterr().err
    users = Users(tmp_path / "users.txt")
    assert users.check("ana lima", "s3cret pass").is_owner and "s3cret" not in (tmp_path / "users.txt").read_text()
    assert app.main(["users", "list"]) == 0
    assert "Ana Lima\towner" in capsys.readouterr().out


class FakeRequest:
    def __init__(self, username):
        self.username = username


def _as(monkeypatch, who):
    monkeypatch.setattr("ui.identity.current_request", lambda: FakeRequest(who) if who else None)


def test_the_log_as_a_logged_in_person_may_use_it(tmp_path, monkeypatch):
    path = tmp_path / "users.txt"
    for name, role in (("ana", "annotator"), ("ben", "annotator"), ("olga", "owner")):
        add_user(path, name, "pw", role)
    inner = MemorySessionLog()
    log = OwnedLog(inner, Identity(Users(path)))
    _as(monkeypatch, "ana")
    a = log.start_session("label", "frogs")
    log.add_label(Label(a, "frogs", 1, 1, ""))  # no name given: saved under her own
    with pytest.raises(InputError, match="logged in as 'ana'"):
        log.add_label(Label(a, "frogs", 2, 1, "Ben"))
    token = log.token(a)
    assert looks_like_token(token) and log.find(token) == a
    _as(monkeypatch, "ben")
    b = log.start_session("label", "frogs")
    log.add_label(Label(b, "frogs", 1, 0, "BEN\u200b"))  # his own name, however typed: saved as the file has it
    before = len(inner.labels())
    for asked in (token, a, str(a), "1 OR 1=1", "", "x" * 500):
        with pytest.raises(NotFoundError) as exc:
            log.find(asked)
        assert exc.value.message.startswith("There is no session")
    assert [s.id for s in log.sessions()] == [b] and [lb.annotator for lb in log.labels()] == ["ben"]
    with pytest.raises(InputError, match="Only the project's owner"):
        log.may_compare()
    assert len(inner.labels()) == before  # nothing changed by what was refused
    _as(monkeypatch, "olga")
    assert log.find(token) == a and {s.id for s in log.sessions()} == {a, b}
    assert sorted(lb.annotator for lb in log.labels()) == ["ana", "ben"]
    log.may_compare()
    _as(monkeypatch, None)  # no request (no login): only what nobody owns
    assert log.sessions() == []


def test_without_logins_the_log_is_everyones_and_names_are_typed(monkeypatch):
    _as(monkeypatch, "ana")  # a user name from the shared password's login is no person
    log = OwnedLog(MemorySessionLog(), Identity())
    sid = log.start_session("label")
    log.add_label(Label(sid, "frogs", 1, 1, "Whoever"))
    assert log.labels()[0].annotator == "Whoever" and log.find(log.token(sid)) == sid
    log.may_compare()


class FakeOAuthRequest:
    """A gr.Request on a Space: no Gradio user name, the Hugging Face login in the session."""

    def __init__(self, name):
        self.username = None
        self.request = type("R", (), {"session": {"oauth_info": {"userinfo": {"preferred_username": name}}}})()


def test_a_hugging_face_login_is_the_person_and_the_spaces_author_its_owner(tmp_path):
    from ui.upload_guard import SCRIPT, request_owner

    identity = Identity(oauth=True, space_owner="olga")
    assert identity.person_of(FakeOAuthRequest("ana")).role == "annotator"
    assert identity.person_of(FakeOAuthRequest("olga")).is_owner
    assert identity.person_of(FakeOAuthRequest("")) is None  # a visitor who has not logged in
    from http.cookies import SimpleCookie
    scope = {"session": {"oauth_info": {"userinfo": {"preferred_username": "Ａna"}}}}
    assert request_owner(scope, SimpleCookie()) == "user:ana"  # files go by the same name key
    assert request_owner({}, SimpleCookie("ecolens-owner=abc")) == "browser:abc"
    assert request_owner({}, SimpleCookie()) == SCRIPT


def test_a_person_taken_out_of_the_users_file_while_logged_in_labels_only_as_themselves(tmp_path):
    path = tmp_path / "users.txt"
    add_user(path, "olga", "pw", "owner")
    identity = Identity(Users(path))
    assert identity.person_of(FakeRequest("OLGA")).is_owner
    gone = identity.person_of(FakeRequest("ana"))  # Gradio still knows her login; the file no longer lists her
    assert gone.name == "ana" and not gone.is_owner


def test_the_login_checks_each_persons_own_password(tmp_path):
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from ui.login import auth_function

    def run(coro):
        # in a thread of its own: an earlier test of the full lane may leave an event loop running in this one
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coro).result()

    path = tmp_path / "users.txt"
    add_user(path, "ana", "ana-pw", "annotator")
    check = auth_function("", Users(path))
    check.guard.clock = lambda: 0.0  # no waiting window in play: the brake counts, the answers are what we test
    assert run(check("ana", "ana-pw")) and run(check("ANA", "ana-pw"))
    assert check.guard.failures == type(check.guard.failures)()
    assert not run(check("ecolens", ""))  # the shared user is no one here
    assert len(check.guard.failures) == 1
