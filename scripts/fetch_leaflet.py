"""Check Leaflet (the map of the Filters panel), which is committed under assets/vendor/leaflet/: each file's
sha256 must be the one written here, taken from the npm registry's leaflet 1.9.4 tarball (its dist.integrity,
sha512-nxS1ynzJOmOlHp+iL3FyWqK89GtNL8U8rvlMOsQdTTssxZwCXh8N2NB3GDQOL+YR3XnWyZAxwQixURb+FA74PA==, checked
when the files were taken from it with `npm pack leaflet@1.9.4`). The page inlines leaflet.js and leaflet.css,
so no CDN is ever asked; the map draws circle markers, lines and a rectangle only, so Leaflet's marker and
layer-control images (dist/images) are not needed and not kept.

    python scripts/fetch_leaflet.py            (scripts/setup.sh and test.sh run it; the Dockerfile too)

Exits 0 when every file is there and matches; 1 naming each file that is missing or differs, with the fix.
(The name is kept from when it downloaded the files: setup scripts and docs call it by this name.)"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

VERSION = "1.9.4"
# file -> sha256 of that file in leaflet-1.9.4.tgz (package/dist/leaflet.js, package/dist/leaflet.css,
# package/LICENSE: BSD-2-Clause)
SHA256 = {
    "leaflet.js": "db49d009c841f5ca34a888c96511ae936fd9f5533e90d8b2c4d57596f4e5641a",
    "leaflet.css": "a7837102824184820dfa198d1ebcd109ff6d0ff9a2672a074b9a1b4d147d04c6",
    "LICENSE": "53e8dc25862014e4324741ca18fbe3611e11d42ef69f59f86ea8c5389647d4cb",
}
TARGET = Path(__file__).resolve().parents[1] / "assets" / "vendor" / "leaflet"
MAX_BYTES = 5_000_000  # no file of Leaflet is near this; a larger one is not Leaflet


def problems(target: Path = TARGET, expected: dict[str, str] = SHA256) -> list[str]:
    """One line per file that is missing, too large or not the expected bytes (empty: all is well)."""
    out = []
    for name, digest in expected.items():
        path = target / name
        if not path.is_file():
            out.append(f"{path} is missing")
            continue
        if path.stat().st_size > MAX_BYTES:
            out.append(f"{path} is larger than {MAX_BYTES} bytes")
            continue
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != digest:
            out.append(f"{path} differs from Leaflet {VERSION}'s (sha256 {got}, expected {digest})")
    return out


def main() -> int:
    found = problems()
    if found:
        for line in found:
            print(f"fetch_leaflet: {line}", file=sys.stderr)
        print(f"fetch_leaflet: how to fix: restore the committed files (git checkout -- assets/vendor/leaflet), or "
              f"take them again from the npm registry: `npm pack leaflet@{VERSION}` and copy package/dist/leaflet.js, "
              "package/dist/leaflet.css and package/LICENSE there", file=sys.stderr)
        return 1
    print(f"fetch_leaflet: Leaflet {VERSION} in {TARGET} matches its checksums")
    return 0


if __name__ == "__main__":
    sys.exit(main())
