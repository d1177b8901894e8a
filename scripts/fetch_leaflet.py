"""Fetch Leaflet (the map of the Filters panel) from the npm registry into assets/vendor/leaflet/: the tarball
is checked against the registry's sha512 integrity before anything is unpacked, bounded in time and size.
The page inlines leaflet.js and leaflet.css from there, so no CDN is ever asked. Without it the page says the
map is not installed and the place box still works.

    python scripts/fetch_leaflet.py            (scripts/setup.sh runs it; the Dockerfile too)
"""
from __future__ import annotations

import base64
import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

VERSION = "1.9.4"
TARBALL = f"https://registry.npmjs.org/leaflet/-/leaflet-{VERSION}.tgz"
# the registry's dist.integrity for this version (npm view leaflet@1.9.4 dist.integrity)
INTEGRITY = "sha512-nxS1ynzJOmOlHp+iL3FyWqK89GtNL8U8rvlMOsQdTTssxZwCXh8N2NB3GDQOL+YR3XnWyZAxwQixURb+FA74PA=="
WANTED = ("package/dist/leaflet.js", "package/dist/leaflet.css", "package/LICENSE")
MAX_BYTES = 5_000_000
TIMEOUT_S = 60
TARGET = Path(__file__).resolve().parents[1] / "assets" / "vendor" / "leaflet"


def fetch(target: Path = TARGET, url: str = TARBALL, integrity: str = INTEGRITY) -> Path:
    """Download, verify and unpack; returns the folder. Raises RuntimeError with the reason."""
    stamp = target / "VERSION"
    have = stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == VERSION
    if have and all((target / Path(name).name).is_file() for name in WANTED):
        return target
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as reply:
        data = reply.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise RuntimeError(f"{url} is larger than {MAX_BYTES} bytes")
    algo, _, expected = integrity.partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != expected:
        raise RuntimeError(f"{url} does not match its registry checksum ({algo} {got} != {expected})")
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for name in WANTED:
            member = tar.getmember(name)
            (target / Path(name).name).write_bytes(tar.extractfile(member).read())
    (target / "VERSION").write_text(VERSION + "\n", encoding="utf-8")
    return target


if __name__ == "__main__":
    try:
        where = fetch()
    except Exception as exc:  # a script: say why and how to go on, exit non-zero
        print(f"fetch_leaflet: Leaflet {VERSION} could not be fetched ({exc}); the page's map stays off "
              "(the place box still works). Fix: check the network to registry.npmjs.org and run again.",
              file=sys.stderr)
        sys.exit(1)
    print(f"fetch_leaflet: Leaflet {VERSION} in {where}")
