"""Fetching many media URLs of a few hosts (a Camtrap DP package names hundreds of files on its platform's
server): once a host has failed to resolve or to answer, its other URLs are not tried again in this ingest,
so an offline ingest of a package takes seconds, not one download time limit per file.

Until a host has answered once, its URLs are fetched one at a time (the ingest reads several photos at once:
without this every reading thread would wait out the same dead host); after that, in parallel."""
from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from urllib.parse import urlsplit

from core.ingest import downloads
from core.ingest.downloads import DownloadError, DownloadPolicy

log = logging.getLogger(__name__)


class HostGate:
    def __init__(self, policy: DownloadPolicy, fetch: Callable[[str, DownloadPolicy], bytes] | None = None):
        self.policy, self._fetch = policy, fetch or downloads.fetch
        self._lock = threading.Lock()
        self._first: dict[str, threading.Lock] = {}  # host -> held while its first URL is tried
        self._up: set[str] = set()
        self.down: dict[str, str] = {}  # host -> why it failed
        self.not_tried: Counter = Counter()  # host -> URLs left untried

    def reader(self, url: str) -> Callable[[], bytes]:
        return lambda: self.fetch(url)

    def fetch(self, url: str) -> bytes:
        host = (urlsplit(url).hostname or "").lower()
        with self._lock:
            first = self._first.setdefault(host, threading.Lock())
        if host in self._up:
            return self._try(host, url)
        with first:  # the first URL of a host (or the next, after a failure that was not the host's)
            return self._try(host, url)

    def _try(self, host: str, url: str) -> bytes:
        if host in self.down:
            with self._lock:
                self.not_tried[host] += 1
            raise DownloadError(f"{url} was not tried: {host} could not be reached earlier in this ingest "
                                f"({self.down[host]})", True)
        try:
            data = self._fetch(url, self.policy)
        except DownloadError as exc:
            if exc.unreachable:
                why = str(exc)
                why = why[len(url):].lstrip(": ") if why.startswith(url) else why
                with self._lock:
                    self.down.setdefault(host, why)
                log.warning("host %s unreachable: %s; its other URLs are not tried in this ingest", host, exc)
            raise
        self._up.add(host)
        return data

    def notices(self) -> list[str]:
        """One line per host that failed, with the count of its URLs not tried."""
        return [f"{host} could not be reached ({why}); {self.not_tried[host]} more of its URLs were not tried in "
                "this ingest (run the ingest again when the host can be reached)"
                for host, why in sorted(self.down.items())]
