"""`python app.py users add NAME` with names that look like another's (issue 36, item 1): a name with
invisible characters (zero-width, bidi controls) is refused, since it would be shown as typed and pass for
someone else; a name that is an existing person's typed another way (full-width, upper case) replaces that
person's line (their password, role and spelling), and the command says whose line it was. Table-driven;
the users file is read back as text (not through the app's own reader)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.live_server import app_env, cli

CASES = [  # (name typed, exit status, the command says, names in the file after)
    ("a\u200bna", 2, "has invisible characters in it", ["ana"]),
    ("\u202eana", 2, "has invisible characters in it", ["ana"]),
    ("an\ufeffa", 2, "has invisible characters in it", ["ana"]),
    ("\uff41\uff4e\uff41", 0, "(annotator): password and role changed in", ["\uff41\uff4e\uff41"]),
    ("ANA", 0, "(it was 'ana': the same name, as names are compared)", ["ANA"]),
    ("ben", 0, "ben (annotator) written to", ["ana", "ben"]),
]


@pytest.mark.parametrize("typed,rc,says,names", CASES, ids=[repr(c[0]) for c in CASES])
def test_users_add_with_a_name_like_another(tmp_path: Path, typed, rc, says, names):
    data, users = tmp_path / "data", tmp_path / "users.txt"
    env = app_env(data, ECOLENS_USERS_FILE=str(users))
    assert cli(data, "users", "add", "ana", env=env, stdin=b"ana-pw\n").returncode == 0
    first = users.read_text(encoding="utf-8")
    done = cli(data, "users", "add", typed, env=env, stdin=b"other-pw\n")
    assert done.returncode == rc and says in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    if rc == 2:
        assert "how to fix: type the name again with visible characters only" in done.stderr
        assert users.read_text(encoding="utf-8") == first  # nothing changed
    lines = users.read_text(encoding="utf-8").splitlines()
    assert [line.split(":", 1)[0] for line in lines] == names
