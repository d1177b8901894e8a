"""Calls to an endpoint that does not exist, or with a body that is not a call, answered in the API's one error
shape (docs/reference/api.md#errors): an ASGI middleware in front of Gradio's `POST /gradio_api/call/<name>`.

Without it an unknown name is a bare `500 Internal Server Error` with a traceback in the server's log, and a
body that is not JSON (or has no `data` list) is FastAPI's validation text. With it: `404` with
`{"error": "No endpoint /<name> ...", "title": "Not found"}`, and `422` with `{"error": ..., "title": "Invalid
input"}`; the log gets one line each. Calls to endpoints that exist, with a body that is a call, pass
untouched (the body is handed on as it came)."""
from __future__ import annotations

import json
import logging
import re
from typing import Iterable

log = logging.getLogger(__name__)
MAX_BODY = 64 << 20  # a call's JSON body; a larger one is left to Gradio's own limits
_CALL = re.compile(r"^/gradio_api/call/([^/]+)/?$")


def _problem(body: bytes) -> str:
    """Why `body` is not a call ({"data": [...]}), or '' when it is one."""
    try:
        call = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return "the request body is not UTF-8 text"
    except ValueError:
        return "the request body is not JSON"
    if not isinstance(call, dict) or "data" not in call:
        return 'the request body has no "data" (send {"data": [value, ...]})'
    if not isinstance(call["data"], list):
        return '"data" must be a list of the parameters\' values, in order'
    return ""


class ApiGuard:
    """ASGI middleware: pass as `Middleware(ApiGuard, names=..., public=...)` (ui.server.api_names)."""

    def __init__(self, app, names: Iterable[str] = (), public: Iterable[str] = ()):
        """`names`: every api_name (Gradio answers for those); `public`: the ones a message lists."""
        self.app = app
        self.names = {n.lstrip("/") for n in names if n}
        self.public = sorted({n.lstrip("/") for n in public if n})

    async def __call__(self, scope, receive, send):
        if scope.get("type") == "http" and "/file=" in scope.get("path", ""):
            return await self.app(scope, receive, no_server_paths(send))
        if scope.get("type") != "http" or scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        path, root = scope.get("path", ""), scope.get("root_path", "") or ""
        found = _CALL.match(path[len(root):] if root and path.startswith(root) else path)
        if not found:
            return await self.app(scope, receive, send)
        name = found.group(1)
        if name not in self.names:
            log.info("/%s refused: no such endpoint", name[:80])
            known = ", ".join(f"/{n}" for n in self.public)
            return await _answer(send, 404, f"No endpoint /{name[:80]}. The endpoints are {known} "
                                            "(Client(url).view_api() lists their parameters).", "Not found")
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, _replay(chunks, False, receive, message), send)
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > MAX_BODY:
                break
        problem = "" if size > MAX_BODY else _problem(b"".join(chunks))
        if problem:
            log.info("/%s refused: %s", name, problem)
            return await _answer(send, 422, f"{problem[0].upper()}{problem[1:]}.", "Invalid input")
        return await self.app(scope, _replay(chunks, more, receive), send)


def _replay(chunks: list[bytes], more: bool, receive, last=None):
    """A `receive` that hands on the body already read (and `last`, a message that came instead of more
    body), then whatever the client sends next (the rest of the body, a disconnect)."""
    queue = [{"type": "http.request", "body": b"".join(chunks), "more_body": more}]
    if last is not None:
        queue.append(last)

    async def replay():
        if queue:
            return queue.pop(0)
        return await receive()
    return replay


async def _answer(send, status: int, message: str, title: str) -> None:
    body = json.dumps({"error": message, "title": title}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


FILE_REFUSED = ("This file is not served: it is not one of this session's photos or files. Use the link that a "
                "search or an export returned to you; an old link: run that search or export again.")


def file_refusal(status: int) -> bytes:
    """The body of a refused file (403 or 404) in the API's error shape, the same whoever refuses it (Gradio,
    or ui.upload_guard for a file handed to someone else), so that neither names the path nor tells the two
    apart."""
    return json.dumps({"error": FILE_REFUSED, "title": "Not found" if status == 404 else "Forbidden"}).encode()


def no_server_paths(send):
    """A `send` for a request of a file: a refusal (403, 404) gets the API's error shape without the path
    asked for (Gradio's own text names the file's absolute path on the server)."""
    rewriting = False

    async def wrapped(message):
        nonlocal rewriting
        if message["type"] == "http.response.start" and message.get("status") in (403, 404):
            rewriting = True
            body = file_refusal(message["status"])
            wrapped.body = body
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in (b"content-length",
                                                                                         b"content-type")]
            return await send({**message, "headers": headers + [(b"content-type", b"application/json"),
                                                                 (b"content-length", str(len(body)).encode())]})
        if rewriting and message["type"] == "http.response.body":
            if wrapped.body is None:
                return None  # the rest of the original text: already replaced
            body, wrapped.body = wrapped.body, None
            return await send({"type": "http.response.body", "body": body, "more_body": False})
        return await send(message)
    wrapped.body = None
    return wrapped
