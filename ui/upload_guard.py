"""Only what EcoLens handed to someone is served from its upload folder, and only to them: an ASGI middleware
in front of Gradio's routes.

Gradio serves any file under its upload folder (data_dir/uploads, where it keeps uploads and the files the app
hands out: exports, pictures) to anyone logged in who names its path. Here every request has an owner: the
logged-in person ('user:' and their name key; a users_file login or a Hugging Face one), else the browser (a
random `ecolens-owner` cookie given on its first response), else 'script' (a caller without cookies, such as
a script using the API without a login). Every path under the upload folder that a response hands out (the
upload route's answer, an event's result streamed to the page or the API) is recorded as that owner's before
the response goes on, in the database (storage.served_files: every web process and a restarted one agree).
The file route serves a file under the folder only to one of its owners; for anyone else, and for a file no
response handed out (one another program put there), the answer is 404, as for a file that does not exist.
Gradio's own refusals (403) no longer name the file's path on the server: every refusal is in the API's error
shape (ui.api_guard.file_refusal)."""
from __future__ import annotations

import asyncio
import json
import logging
import secrets
import threading
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Any, Iterator

from core.contracts import bounds
from core.contracts.errors import EcoLensError
from ui.api_guard import file_refusal

log = logging.getLogger(__name__)
COOKIE = "ecolens-owner"
SCRIPT = "script"
MAX_REMEMBERED = 100_000  # (path, owner) pairs this process remembers besides the database
MAX_LINE = 8_000_000  # a streamed line longer than this is not searched for paths
NOT_FOUND = file_refusal(404)  # the API's error shape, as ui.api_guard answers for a file that does not exist
NOT_ALLOWED = file_refusal(403)


def _cookies(headers: list[tuple[bytes, bytes]]) -> SimpleCookie:
    jar: SimpleCookie = SimpleCookie()
    for name, value in headers:
        if name.lower() == b"cookie":
            try:
                jar.load(value.decode("latin-1"))
            except CookieError:  # a malformed cookie header: no cookies
                return SimpleCookie()
    return jar


def _header(headers: list[tuple[bytes, bytes]], wanted: bytes) -> str:
    return next((v.decode("latin-1") for k, v in headers if k.lower() == wanted), "")


def _resolved(path: str) -> str:
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, ValueError, RuntimeError):
        return path


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


class MemoryGrants:
    """The record in this process only (an app without a database: tests, throwaway runs)."""

    def __init__(self) -> None:
        self._owners: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def grant(self, paths, owner: str) -> None:
        with self._lock:
            for p in paths:
                self._owners.setdefault(p, set()).add(owner)

    def owners(self, path: str) -> set[str]:
        with self._lock:
            return set(self._owners.get(path, ()))


def request_owner(scope: dict, jar: SimpleCookie) -> str:
    """'user:<name key>' for a logged-in request, else 'browser:<cookie>', else SCRIPT."""
    app = scope.get("app")
    cookie_id = getattr(app, "cookie_id", None)
    if cookie_id is not None:
        for name in (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}"):
            user = getattr(app, "tokens", {}).get(jar[name].value) if name in jar else None
            if user:
                return "user:" + bounds.name_key(user)
    session = scope.get("session")
    info = session.get("oauth_info") if isinstance(session, dict) else None
    name = ((info or {}).get("userinfo") or {}).get("preferred_username") if isinstance(info, dict) else None
    if name:
        return "user:" + bounds.name_key(name)
    return f"browser:{jar[COOKIE].value}" if COOKIE in jar else SCRIPT


class UploadGuard:
    """ASGI middleware: `Middleware(UploadGuard, folder=..., grants=...)` in the FastAPI app's middleware.
    `folder`: Gradio's upload folder; `grants`: storage.served_files.SqlServedFiles (default: in memory)."""

    def __init__(self, app, api_prefix: str = "/gradio_api", folder: str | None = None, grants: Any = None):
        self.app = app
        self.upload_route = f"{api_prefix}/upload"
        self.file_route = f"{api_prefix}/file="
        if folder is None:
            from gradio.utils import get_upload_folder
            folder = get_upload_folder()
        self.folder = _resolved(str(folder)).rstrip("/") + "/"
        self._needle = json.dumps(self.folder)[1:-1].encode("utf-8")  # the folder as a JSON string writes it
        self.grants = grants if grants is not None else MemoryGrants()
        self._known: dict[tuple[str, str], None] = {}  # (path, owner) recorded by this process
        self._lock = threading.Lock()

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        headers = list(scope.get("headers") or [])
        jar = _cookies(headers)
        fresh = "" if COOKIE in jar else secrets.token_urlsafe(24)
        owner = request_owner(scope, jar)
        path = scope.get("path", "")
        root = scope.get("root_path", "") or ""
        route = path[len(root):] if root and path.startswith(root) else path
        serving = route.startswith(self.file_route)
        if serving:
            wanted = _resolved(route[len(self.file_route):])
            if wanted.startswith(self.folder) and not await self.may_read(wanted, owner):
                return await self._answer(send, 404, NOT_FOUND)
        secure = scope.get("scheme") == "https" or _header(headers, b"x-forwarded-proto") == "https"
        state = {"status": 0, "scan": False, "rest": b""}

        async def sending(message):
            if message["type"] == "http.response.start":
                state["status"] = message.get("status", 0)
                kinds = _header(list(message.get("headers", [])), b"content-type")
                state["scan"] = not serving and ("json" in kinds or "event-stream" in kinds)
                if serving and state["status"] == 403:  # Gradio's refusal names the path: say less
                    message = {**message, "headers": [(b"content-type", b"application/json"),
                                                      (b"content-length", str(len(NOT_ALLOWED)).encode())]}
                    state["swap"] = True
                if fresh:
                    attrs = "Path=/; HttpOnly; " + ("SameSite=None; Secure" if secure else "SameSite=Lax")
                    message = {**message, "headers": [*message.get("headers", []),
                                                      (b"set-cookie", f"{COOKIE}={fresh}; {attrs}".encode())]}
            elif message["type"] == "http.response.body":
                if state.get("swap"):
                    if message.get("more_body", False):
                        return
                    message = {"type": "http.response.body", "body": NOT_ALLOWED}
                elif state["scan"]:
                    await self._scan(state, message.get("body", b""), not message.get("more_body", False), owner)
            await send(message)

        await self.app(scope, receive, sending)

    # ---- recording what a response hands out -----------------------------------------------------------
    async def _scan(self, state: dict, body: bytes, last: bool, owner: str) -> None:
        """Record the upload-folder paths in the complete lines (JSON, or the data lines of a stream) so far."""
        lines = (state["rest"] + body).split(b"\n")
        state["rest"] = b"" if last else lines.pop()
        if len(state["rest"]) > MAX_LINE:  # no JSON line of ours is this long: not searched
            state["rest"] = b""
        paths = [p for line in lines if self._needle in line for p in self._paths(line)]
        if paths:
            await self.record(paths, owner)

    def _paths(self, line: bytes) -> list[str]:
        text = line.decode("utf-8", "replace").strip()
        if text.startswith("data:"):
            text = text[5:].strip()
        try:
            found = list(_strings(json.loads(text)))
        except ValueError:
            return []
        return [_resolved(s) for s in found if s.startswith(self.folder) and len(s) < 4096]

    async def record(self, paths: list[str], owner: str) -> None:
        with self._lock:
            new = [p for p in dict.fromkeys(paths) if (p, owner) not in self._known]
            for p in new:
                self._known[(p, owner)] = None
            while len(self._known) > MAX_REMEMBERED:
                self._known.pop(next(iter(self._known)))
        if not new:
            return
        try:  # before the response goes on: the page asks for the file as soon as it reads its path
            await asyncio.to_thread(self.grants.grant, new, owner)
        except EcoLensError as exc:  # this process still serves them; another would not
            log.error("handed-out files were not recorded in the database: %s", exc)

    async def may_read(self, path: str, owner: str) -> bool:
        with self._lock:
            if (path, owner) in self._known:
                return True
        try:
            owners = await asyncio.to_thread(self.grants.owners, path)
        except Exception:  # the database cannot be read: refuse, the log says why
            log.exception("the owners of a handed-out file could not be read")
            owners = set()
        if owner in owners:
            return True
        log.warning("refused %s a file of the upload folder it was not given: %s", owner.split(":")[0],
                    Path(path).name[:80])
        return False

    @staticmethod
    async def _answer(send, status: int, body: bytes) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
