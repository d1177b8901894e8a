"""The people who may log in to the web app (the `users_file` setting): one person a line,

    NAME:HASH:ROLE

NAME as the person logs in and is shown (no ':' and no line break; compared as core.contracts.bounds.name_key
compares annotator names), ROLE `owner` (the project's owner: sees everyone's labels and the agreement
between annotators) or `annotator`, and HASH the password's scrypt hash (RFC 7914, Python's hashlib.scrypt):

    scrypt$N$r$p$SALT$KEY

with N, r, p the cost parameters, SALT 16 random bytes and KEY the 32-byte derived key, both in URL-safe
base64 without padding. Blank lines and lines starting with '#' are ignored. `python app.py users add NAME
--role owner|annotator` writes a line (the password read from the terminal or standard input). The file is
read again when it changes, so a person added while the app runs can log in at once."""
from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from core.contracts import bounds
from core.contracts.errors import ConfigError, InputError

log = logging.getLogger(__name__)
ROLES = ("owner", "annotator")
OWNER = "owner"
SCRYPT_N, SCRYPT_R, SCRYPT_P, KEY_BYTES, SALT_BYTES = 2 ** 14, 8, 1, 32, 16
MAX_PASSWORD = 1024
MAX_FILE_BYTES = 1_000_000
FORMAT_HINT = "each line NAME:scrypt$N$r$p$SALT$KEY:ROLE (role owner or annotator); write lines with " \
              "`python app.py users add NAME --role annotator`"


@dataclass(frozen=True)
class Person:
    name: str  # as written in the users file (or the Hugging Face user name)
    role: str = "annotator"

    @property
    def key(self) -> str:
        """What the person's sessions, files and labels are owned by."""
        return bounds.name_key(self.name)

    @property
    def is_owner(self) -> bool:
        return self.role == OWNER


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_password(password: str, salt: bytes | None = None) -> str:
    """The scrypt hash line part for `password` (a fresh random salt unless given)."""
    if not password or len(password) > MAX_PASSWORD:
        raise InputError(f"A password must have 1 to {MAX_PASSWORD} characters", "type another password")
    salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    key = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=KEY_BYTES)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(key)}"


def _parts(stored: str) -> tuple[int, int, int, bytes, bytes]:
    kind, n, r, p, salt, key = stored.split("$")
    if kind != "scrypt":
        raise ValueError(kind)
    n_, r_, p_ = int(n), int(r), int(p)
    if not (2 <= n_ <= 2 ** 20 and n_ & (n_ - 1) == 0 and 1 <= r_ <= 32 and 1 <= p_ <= 16):
        raise ValueError("cost")
    return n_, r_, p_, _unb64(salt), _unb64(key)


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` gives the stored hash (compared in constant time); False for a malformed hash."""
    try:
        n, r, p, salt, key = _parts(stored)
    except (ValueError, TypeError):
        return False
    if not password or len(password) > MAX_PASSWORD:
        return False
    got = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=len(key),
                         maxmem=128 * r * (n + p + 2) + (1 << 20))
    return hmac.compare_digest(got, key)


def check_name(name: str) -> str:
    """A person's name as the users file keeps it; InputError for one it cannot hold."""
    clean = bounds.name(name)
    if not clean or len(clean) > 100 or ":" in clean or not bounds.name_key(clean):
        raise InputError(f"{str(name)[:60]!r} cannot be a user name",
                         "use 1 to 100 visible characters, without ':'")
    return clean


def check_new_name(name: str) -> str:
    """check_name, and no invisible characters: a name `users add` writes. A line already in the file is read
    with check_name alone, so a file written before this refusal still loads (and the web app still starts)."""
    clean = check_name(name)
    if bounds.visible(clean) != clean:  # shown as typed, a zero-width or bidi character hides in the name
        raise InputError(f"The user name {bounds.visible(clean)[:60]!r} has invisible characters in it (zero-width, "
                         "bidi or other format characters)", "type the name again with visible characters only")
    return clean


def parse_line(line: str, where: str) -> tuple[Person, str] | None:
    """(person, hash) of one line, None for a blank or comment line; ConfigError naming `where` otherwise."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    name, sep1, rest = text.partition(":")
    stored, sep2, role = rest.rpartition(":")
    if not (sep1 and sep2):
        raise ConfigError(f"{where}: not NAME:HASH:ROLE", FORMAT_HINT)
    try:
        person = Person(check_name(name), role.strip())
        _parts(stored.strip())
    except InputError as exc:
        raise ConfigError(f"{where}: {exc.message}", FORMAT_HINT) from None
    except (ValueError, TypeError):
        raise ConfigError(f"{where}: the password hash is not scrypt$N$r$p$SALT$KEY", FORMAT_HINT) from None
    if person.role not in ROLES:
        raise ConfigError(f"{where}: unknown role {role.strip()[:30]!r}",
                          "the role is owner or annotator; " + FORMAT_HINT)
    return person, stored.strip()


def read_users(path: Path) -> dict[str, tuple[Person, str]]:
    """name key -> (person, hash); ConfigError for a missing, oversized or malformed file, or a name twice."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ConfigError(f"The users file {path.name} is over {MAX_FILE_BYTES // 1000} kB", FORMAT_HINT)
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"The users file {path.name} cannot be read ({type(exc).__name__})",
                          "check the users_file setting and the file's permissions") from None
    found: dict[str, tuple[Person, str]] = {}
    for number, line in enumerate(lines, start=1):
        entry = parse_line(line, f"{path.name} line {number}")
        if entry is None:
            continue
        if entry[0].key in found:
            raise ConfigError(f"{path.name} line {number}: {entry[0].name!r} is listed twice",
                              "keep one line per person (`python app.py users add NAME` replaces a person's line)")
        found[entry[0].key] = entry
    return found


def add_user(path: Path, name: str, password: str, role: str) -> Person:
    """Write (or replace) `name`'s line in the users file, readable by this user only; returns the person."""
    if role not in ROLES:
        raise InputError(f"Unknown role {role!r}", "use owner or annotator")
    person = Person(check_new_name(name), role)
    entries = read_users(path) if path.exists() else {}
    entries[person.key] = (person, hash_password(password))
    text = "".join(f"{p.name}:{h}:{p.role}\n" for p, h in entries.values())
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = path.with_name(path.name + ".new")
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(fresh, path)
    log.info("users file %s: %s is %s", path.name, person.name, role)
    return person


class Users:
    """The users file, read again when it changes; `check` and `person` for the web app."""

    def __init__(self, path: Path | str):
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._seen: tuple[float, int] | None = None
        self._entries: dict[str, tuple[Person, str]] = {}
        self._dummy = hash_password(secrets.token_urlsafe(12))
        self._entries = read_users(self.path)  # a bad file stops the start, with the line that is wrong
        self._seen = self._stamp()

    def _stamp(self) -> tuple[float, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime, st.st_size

    def _current(self) -> dict[str, tuple[Person, str]]:
        with self._lock:
            stamp = self._stamp()
            if stamp != self._seen:
                try:
                    self._entries = read_users(self.path)
                except ConfigError as exc:  # keep the people known before; the log says what is wrong
                    log.error("the users file was not read again: %s", exc)
                self._seen = stamp
            return self._entries

    def person(self, name: str) -> Person | None:
        entry = self._current().get(bounds.name_key(name or ""))
        return entry[0] if entry else None

    def check(self, name: str, password: str) -> Person | None:
        """The person when `password` is theirs; None otherwise (an unknown name costs as much as a known one)."""
        entry = self._current().get(bounds.name_key(name or ""))
        ok = verify_password(password or "", entry[1] if entry else self._dummy)
        return entry[0] if entry and ok else None
