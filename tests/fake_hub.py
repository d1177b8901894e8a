"""A local HTTP server on 127.0.0.1 posing as the Hugging Face hub (point HF_ENDPOINT at `url`), for tests:
repositories are dicts of path -> bytes; it answers the tree listing (/api/{type}s/{repo}/tree/{rev}) and
HEAD / GET of /{repo}/resolve/{rev}/{file} (models) and /datasets/{repo}/resolve/... with Content-Length,
ETag, X-Repo-Commit and, for large-file-storage files, X-Linked-Etag / X-Linked-Size; ranges (a resumed
download) get 206. Knobs: `rate` (bytes a second, to stop a download half-way), `corrupt` (paths served with
bytes other than their checksum says), and `log` (what was asked: method, path, Range header)."""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"
LFS_FROM = 1024  # files at least this big are 'large-file-storage' files (sha256 checksums)


def child_env(hub_url: str | None, data: Path, **settings: str) -> dict[str, str]:
    """The environment of an EcoLens child process on the hub at `hub_url` (None: no hub): without test.sh's
    HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE, without HF_HOME (models go to the data directory) and the caller's
    ECOLENS_* settings; `settings` become ECOLENS_* variables."""
    drop = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME", "HF_HUB_CACHE", "HF_ENDPOINT")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("ECOLENS_")}
    if hub_url:
        env["HF_ENDPOINT"] = hub_url
    env["ECOLENS_DATA_DIR"] = str(data)
    env.update({f"ECOLENS_{k.upper()}": v for k, v in settings.items()})
    return env


def git_oid(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


class FakeHub:
    def __init__(self):
        self.repos: dict[tuple[str, str], dict[str, bytes]] = {}  # (type, 'owner/name') -> files
        self.corrupt: set[str] = set()
        self.rate: float | None = None
        self.log: list[tuple[str, str, str]] = []
        self.sent = 0  # body bytes sent, all requests together
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add(self, kind: str, repo: str, files: dict[str, bytes]) -> None:
        self.repos[(kind, repo)] = dict(files)

    def start(self) -> "FakeHub":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def entry(self, path: str, data: bytes) -> dict:
        e = {"type": "file", "oid": git_oid(data), "size": len(data), "path": path}
        if len(data) >= LFS_FROM:
            e["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 130}
        return e

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _find(self):
                path = unquote(urlsplit(self.path).path)
                if path.startswith("/api/"):
                    parts = path[len("/api/"):].split("/")
                    if len(parts) >= 5 and parts[3] == "tree":
                        return "tree", parts[0][:-1], "/".join(parts[1:3]), None
                    return None
                kind = "model"
                if path.startswith("/datasets/"):
                    kind, path = "dataset", path[len("/datasets"):]
                parts = path.lstrip("/").split("/")
                if len(parts) >= 5 and parts[2] == "resolve":
                    return "file", kind, "/".join(parts[:2]), "/".join(parts[4:])
                return None

            def _answer(self, body: bool):
                hub.log.append((self.command, self.path, self.headers.get("Range", "")))
                found = self._find()
                if found is None or (found[1], found[2]) not in hub.repos:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "RepoNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                what, kind, repo, name = found
                files = hub.repos[(kind, repo)]
                if what == "tree":
                    data = json.dumps([hub.entry(p, d) for p, d in sorted(files.items())]).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if body:
                        self.wfile.write(data)
                    return
                if name not in files:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = files[name]
                entry = hub.entry(name, data)
                etag = entry["lfs"]["oid"] if "lfs" in entry else entry["oid"]
                served = bytes(b ^ 0xFF for b in data) if name in hub.corrupt else data
                start = 0
                rng = self.headers.get("Range", "")
                if rng.startswith("bytes=") and rng[6:].split("-")[0].isdigit():
                    start = int(rng[6:].split("-")[0])
                self.send_response(206 if start else 200)
                self.send_header("ETag", f'"{etag}"')
                self.send_header("X-Repo-Commit", COMMIT)
                if "lfs" in entry:
                    self.send_header("X-Linked-Etag", f'"{etag}"')
                    self.send_header("X-Linked-Size", str(len(data)))
                self.send_header("Accept-Ranges", "bytes")
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                if not body:
                    return
                chunk = 4096
                for i in range(start, len(served), chunk):
                    try:
                        self.wfile.write(served[i:i + chunk])
                        self.wfile.flush()
                    except OSError:
                        return
                    hub.sent += len(served[i:i + chunk])
                    if hub.rate:
                        time.sleep(chunk / hub.rate)

            def do_HEAD(self):
                self._answer(False)

            def do_GET(self):
                self._answer(True)

        return Handler
