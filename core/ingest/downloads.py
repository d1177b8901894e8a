"""Fetching a photo named by an http(s) URL (a CSV `image_url`), bounded: a total wall-clock limit per photo
(connect, headers and the whole body: a server that drips a byte a second is cut at the limit), the size cap
(bounds.MAX_PHOTO_BYTES), at most MAX_REDIRECTS redirects, and no loopback, private, link-local or otherwise
non-public address unless allow_private_urls is set.

The address is checked after name resolution and on every redirect, and the connection goes to the very
address that was checked (a name that resolves differently a moment later cannot slip through). Every
refusal or cut is a DownloadError (an OSError, so the ingest skips that photo with the reason and goes on).

Proxies (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) are NOT used: a proxy resolves and connects on its own, so the
address rule could not be kept through one. When one is set for photo URLs, the ingest says so once
(`proxy_notice`) instead of going around it silently."""
from __future__ import annotations

import http.client
import ipaddress
import logging
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urljoin, urlsplit
from urllib.request import getproxies_environment, proxy_bypass_environment

from core.contracts import bounds

log = logging.getLogger(__name__)
MAX_REDIRECTS = 5
CHUNK = 64 * 1024
PRIVATE_HINT = "set allow_private_urls = true to fetch photos from a server on this machine or network"


class DownloadError(OSError):
    """A photo URL that was refused or could not be fetched in time; str() is the whole reason. `unreachable`:
    the host itself failed (its name did not resolve, its address was refused, nothing answered), so its other
    URLs would fail alike (core.ingest.host_gate stops trying them)."""

    def __init__(self, message: str, unreachable: bool = False):
        super().__init__(message)
        self.unreachable = unreachable


@dataclass(frozen=True)
class DownloadPolicy:
    timeout_s: float = 60.0
    allow_private: bool = False
    max_bytes: int = bounds.MAX_PHOTO_BYTES

    @classmethod
    def from_settings(cls, settings: Any) -> "DownloadPolicy":
        return cls(float(settings.download_timeout_s),
                   bool(settings.allow_private_urls))


def reader(url: str, policy: DownloadPolicy) -> Callable[[], bytes]:
    return lambda: fetch(url, policy)


def bind(items: list, policy: DownloadPolicy) -> None:
    """Make every remote item of a scanned source read through `policy` (the settings' limits)."""
    for item in items:
        ref = str(getattr(item.photo, "path", "") or "")
        if ref.lower().startswith(("http://", "https://")):
            item.read = reader(ref, policy)


def proxy_notice(urls: list[str]) -> str:
    """A notice when a proxy is set for some of these photo URLs (they are fetched directly all the same);
    '' when none is."""
    proxies = getproxies_environment()
    for url in urls:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        proxy = proxies.get(scheme) or proxies.get("all")
        if proxy and not proxy_bypass_environment(parts.hostname or "", proxies):
            name = f"{scheme.upper()}_PROXY" if proxies.get(scheme) else "ALL_PROXY"
            text = (f"{name} is set, but photos are downloaded directly from their servers, not through the proxy "
                    "(the address of each server is checked before connecting, which a proxy would bypass); on a "
                    "network that lets only the proxy out, download the photos first and ingest the folder")
            log.warning("%s", text)
            return text
    return ""


def refusal(address: str) -> str:
    """Why an address is not public ('' when it is)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for test, name in (("is_loopback", "a loopback"), ("is_link_local", "a link-local"),
                       ("is_unspecified", "an unspecified"), ("is_multicast", "a multicast"),
                       ("is_private", "a private"), ("is_reserved", "a reserved")):
        if getattr(ip, test):
            return f"{name} address"
    return "" if ip.is_global else "a non-public address"


def _resolve(host: str, port: int, url: str, policy: DownloadPolicy, left: float) -> str:
    """The address to connect to: the first of the host's addresses, all of them public unless allowed."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def look_up() -> None:  # getaddrinfo has no timeout of its own
        try:
            box["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=look_up, daemon=True, name="photo-dns").start()
    if not done.wait(max(0.0, left)):
        raise DownloadError(f"{url}: the name {host} could not be resolved within {policy.timeout_s:g} s", True)
    if "error" in box:
        raise DownloadError(f"{url}: the name {host} could not be resolved ({box['error']})", True)
    addresses = list(dict.fromkeys(info[4][0] for info in box["infos"]))
    if not addresses:
        raise DownloadError(f"{url}: the name {host} has no address", True)
    if not policy.allow_private:
        for address in addresses:
            why = refusal(address)
            if why:
                raise DownloadError(f"{url} was refused: {host} resolves to {address}, {why} "
                                    f"({PRIVATE_HINT})", True)
    return addresses[0]


class _Pinned(http.client.HTTPConnection):
    """An HTTP connection to a checked address, sending the URL's own host name."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def fetch(url: str, policy: DownloadPolicy) -> bytes:
    """The bytes at `url`, or DownloadError saying why not (refused address, time limit, size cap, HTTP error)."""
    end = time.monotonic() + policy.timeout_s
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        status, location, data = _get(current, url, policy, end)
        if location is None:
            if status >= 400:
                raise DownloadError(f"{url} cannot be read: the server answered HTTP {status}")
            return bounds.download(data, url) if data else data
        current = urljoin(current, location)
        if urlsplit(current).scheme.lower() not in ("http", "https"):
            raise DownloadError(f"{url} was refused: it redirects to {current.split(':', 1)[0]}: (only http and "
                                "https are fetched)")
    raise DownloadError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _get(current: str, url: str, policy: DownloadPolicy, end: float) -> tuple[int, str | None, bytes]:
    """One request: (status, redirect location or None, body)."""
    parts = urlsplit(current)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise DownloadError(f"{url}: {current} is not an http(s) URL with a host")
    port = parts.port or (443 if scheme == "https" else 80)
    address = _resolve(parts.hostname, port, url, policy, end - time.monotonic())
    left = end - time.monotonic()
    if left <= 0:
        raise DownloadError(f"{url}: no answer within {policy.timeout_s:g} s (download_timeout_s)")
    cls = _PinnedTLS if scheme == "https" else _Pinned
    conn = cls(parts.hostname, port, address, timeout=left)
    received = [0]
    fired = threading.Event()
    opened: list[socket.socket] = []  # http.client forgets the socket once the reply will close it

    def cut() -> None:  # wakes a read that is waiting for the next trickle of a header or the body
        fired.set()
        for sock in opened or ([conn.sock] if conn.sock is not None else []):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(left, cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        path = parts.path or "/"
        conn.request("GET", path + (f"?{parts.query}" if parts.query else ""),
                     headers={"User-Agent": "EcoLens photo ingest", "Accept": "image/*"})
        opened.append(conn.sock)
        if fired.is_set():  # the watchdog fired while connecting
            raise TimeoutError
        response = conn.getresponse()
        received[0] = 1
        if response.status in (301, 302, 303, 307, 308) and response.getheader("Location"):
            return response.status, response.getheader("Location"), b""
        if response.status >= 400:
            return response.status, None, b""
        declared = response.getheader("Content-Length")
        if declared and declared.isdigit() and int(declared) > policy.max_bytes:
            raise DownloadError(f"{url} is larger than {policy.max_bytes // 1_000_000} MB")
        chunks, size = [], 0
        while True:
            if time.monotonic() >= end:
                raise TimeoutError
            try:
                opened[0].settimeout(max(0.01, end - time.monotonic()))
            except OSError:  # already closed by the response (all of it was read)
                pass
            chunk = response.read1(CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > policy.max_bytes:
                break  # bounds.download says so
        if fired.is_set():  # the watchdog ended the read: what came is only part of the photo
            raise TimeoutError
        if declared and declared.isdigit() and size < int(declared):
            raise DownloadError(f"{url} cannot be read: the server closed the connection after {size} of "
                                f"{declared} bytes")
        return response.status, None, b"".join(chunks)
    except DownloadError:
        raise
    except (OSError, http.client.HTTPException) as exc:  # TimeoutError is an OSError
        if fired.is_set() or time.monotonic() >= end or isinstance(exc, TimeoutError):
            if received[0]:
                raise DownloadError(f"{url}: the photo was still arriving after {policy.timeout_s:g} s "
                                    "(download_timeout_s)") from None
            raise DownloadError(f"{url}: no answer within {policy.timeout_s:g} s (download_timeout_s)", True) from None
        raise DownloadError(f"{url} cannot be read ({exc})", not received[0]) from None
    finally:
        watchdog.cancel()
        conn.close()
