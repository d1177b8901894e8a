"""One browser's uploads are not served to another: an ASGI middleware in front of Gradio's routes.

Every browser gets a random owner cookie (`ecolens-owner`) on its first response. A file uploaded through
Gradio's upload route is recorded as owned by the cookie that came with the upload, and Gradio's file route
serves a recorded upload only to a request carrying one of its owners' cookies; anyone else gets 404, as for
a file that does not exist. Two browsers that upload the same picture (Gradio names uploads by content) both
own it.

Files that are not uploads (exports and pictures the app hands out, examples) are not recorded and are
served as Gradio serves them: by their unguessable path (a SHA-256 salted with Gradio's per-installation
secret, plus the name) to any logged-in user who was given the URL. The scripting API fetches such results
without a browser cookie, so tying them to a cookie would break it. The record lives in memory: after a
restart, earlier uploads (which Gradio deletes at shutdown when upload_keep_s is set) are unrecorded."""
from __future__ import annotations

import json
import logging
import secrets
import threading
from http.cookies import CookieError, SimpleCookie
from pathlib import Path

log = logging.getLogger(__name__)
COOKIE = "ecolens-owner"
MAX_RECORDS = 100_000  # uploads remembered; the oldest are forgotten first (their files are long deleted)


def _cookie(headers: list[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name.lower() == b"cookie":
            jar = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except CookieError:  # a malformed cookie header: no owner
                return ""
            if COOKIE in jar:
                return jar[COOKIE].value
    return ""


def _header(headers: list[tuple[bytes, bytes]], wanted: bytes) -> str:
    return next((v.decode("latin-1") for k, v in headers if k.lower() == wanted), "")


def _resolved(path: str) -> str:
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, ValueError, RuntimeError):
        return path


class UploadGuard:
    """ASGI middleware (pass as `Middleware(UploadGuard)` in the FastAPI app's middleware)."""

    def __init__(self, app, api_prefix: str = "/gradio_api"):
        self.app = app
        self.upload_route = f"{api_prefix}/upload"
        self.file_route = f"{api_prefix}/file="
        self.owners: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        headers = list(scope.get("headers") or [])
        owner = _cookie(headers)
        fresh = "" if owner else secrets.token_urlsafe(24)
        owner = owner or fresh
        path = scope.get("path", "")
        root = scope.get("root_path", "") or ""
        route = path[len(root):] if root and path.startswith(root) else path
        if route.startswith(self.file_route) and not self.may_read(_resolved(route[len(self.file_route):]), owner):
            return await self._not_found(send)
        secure = scope.get("scheme") == "https" or _header(headers, b"x-forwarded-proto") == "https"
        recording = route.rstrip("/") == self.upload_route and scope.get("method") == "POST"
        body: list[bytes] = []
        status = [0]

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message.get("status", 0)
                if fresh:
                    attrs = "Path=/; HttpOnly; " + ("SameSite=None; Secure" if secure else "SameSite=Lax")
                    message = {**message, "headers": [*message.get("headers", []),
                                                      (b"set-cookie", f"{COOKIE}={fresh}; {attrs}".encode())]}
            elif message["type"] == "http.response.body" and recording and status[0] == 200:
                body.append(message.get("body", b""))
                if not message.get("more_body", False):
                    self.record(b"".join(body), owner)
            await send(message)

        await self.app(scope, receive, sending)

    def record(self, body: bytes, owner: str) -> None:
        try:
            paths = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return
        if not isinstance(paths, list):
            return
        with self._lock:
            for p in paths:
                if isinstance(p, str):
                    self.owners.setdefault(_resolved(p), set()).add(owner)
            while len(self.owners) > MAX_RECORDS:
                self.owners.pop(next(iter(self.owners)))

    def may_read(self, path: str, owner: str) -> bool:
        with self._lock:
            owners = self.owners.get(path)
        if owners is None or owner in owners:
            return True
        log.warning("refused another browser's upload %s", Path(path).name[:80])
        return False

    @staticmethod
    async def _not_found(send) -> None:
        body = b'{"detail": "Not Found"}'
        await send({"type": "http.response.start", "status": 404,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
