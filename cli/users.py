"""`python app.py users add NAME --role owner|annotator`: write NAME's line in the users file (the users_file
setting; when unset, data_dir/users.txt, and the command says to set it). The password is read from the
terminal without echo (typed twice), or as the first line of standard input when that is not a terminal
(`printf 'secret\\n' | python app.py users add Ana --role annotator`); it is stored only as a scrypt hash.
`users list` shows who may log in and their roles."""
from __future__ import annotations

import getpass
import sys

from core.contracts.errors import InputError
from core.people.users import ROLES, add_user, read_users


def add_parser(sub) -> None:
    p = sub.add_parser("users", help="the people who may log in to the web app (the users_file setting)")
    acts = p.add_subparsers(dest="users_action", required=True)
    add = acts.add_parser("add", help="add a person or change their password or role (password from stdin)")
    add.add_argument("name", help="the name the person logs in with and labels under")
    add.add_argument("--role", choices=ROLES, default="annotator",
                     help="owner: sees everyone's labels and the agreement; annotator: their own (default)")
    acts.add_parser("list", help="who may log in, with their roles")


def users_path(settings):
    return settings.path(settings.users_file or "users.txt")


def _password() -> str:
    if sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if getpass.getpass("Password again: ") != first:
            raise InputError("The two passwords differ", "run the command again and type the same password twice")
        return first
    line = sys.stdin.readline(2048)
    return line.rstrip("\r\n")


def run(ctx, args) -> int:
    path = users_path(ctx.settings)
    if args.users_action == "list":
        for person, _ in (read_users(path) if path.exists() else {}).values():
            print(f"{person.name}\t{person.role}")
        return 0
    known = read_users(path) if path.exists() else {}
    person = add_user(path, args.name, _password(), args.role)
    if person.key in known:  # the same person typed another way ('ＡＮＡ' is 'ana'): their line, replaced
        was = known[person.key][0].name
        same = f" (it was {was!r}: the same name, as names are compared)" if was != person.name else ""
        print(f"{person.name} ({person.role}): password and role changed in {path}{same}", file=sys.stderr)
    else:
        print(f"{person.name} ({person.role}) written to {path}", file=sys.stderr)
    if not ctx.settings.users_file:
        print(f"note: set users_file = {path} (ECOLENS_USERS_FILE) for the web app to use it", file=sys.stderr)
    return 0
