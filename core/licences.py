"""Licences as codes: what sources write (iNaturalist's `CC-BY-NC`, GBIF's `CC_BY_4_0`, a Creative Commons
URL, `cc by 4.0`) becomes one lower-case code and an optional version, kept beside the raw text, and the
licence filter compares codes rather than substrings.

The filter's rule (documented in the README and the CLI help):
- `cc-by` (any spelling that normalises to it: `CC BY`, `cc_by`, a creativecommons.org URL) matches exactly
  that licence, whatever its version; never `cc-by-nc` or `cc-by-sa`.
- a version narrows it: `cc-by-4.0` (or `CC BY 4.0`) matches CC BY 4.0 only.
- a trailing `*` asks for the family: `cc-by*` matches cc-by and every licence that extends it (cc-by-nc,
  cc-by-nc-sa, ...); `cc-by-nc*` the non-commercial ones among them.
- the bare Creative Commons elements `by`, `nc`, `sa`, `nd` (alone or joined, `nc-sa`) match every CC licence
  that has all of them: `nc` is every non-commercial licence.
Nothing in a filter is a wildcard but that trailing `*`: `%` and `_` are plain characters (`_` is read as a
separator, as GBIF writes `CC_BY_NC`).

Every licence also has a URL for the records that go out (exports, the API, Darwin Core's dcterms:license):
derived from its code and version (`cc-by-nc` 4.0 -> https://creativecommons.org/licenses/by-nc/4.0/, `cc0`
-> https://creativecommons.org/publicdomain/zero/1.0/). A Creative Commons licence written without its
version (iNaturalist's `CC-BY-NC`) links to version 4.0 (`assumed_version` says so); a licence that is not
Creative Commons keeps a URL only when the source wrote one (`url_of`)."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

CC_ELEMENTS = ("by", "nc", "sa", "nd")
_VERSION = re.compile(r"\d+(?:\.\d+)*")
_NOISE_WORDS = {"international", "legalcode", "deed", "unported", "generic", "universal", "license", "licence"}


@dataclass(frozen=True)
class Licence:
    code: str  # "cc-by-nc", "cc0", "pdm", or the normalised text of a licence that is not Creative Commons
    version: str = ""  # "4.0", "" when not stated


def _from_url(text: str) -> Licence | None:
    """A creativecommons.org licence or public-domain URL as a code, None for any other text."""
    m = re.search(r"creativecommons\.org/(licenses|publicdomain)/([^?#]*)", text)
    if not m:
        return None
    parts = [p for p in m.group(2).split("/") if p]
    version = next((p for p in parts[1:] if _VERSION.fullmatch(p)), "")
    if m.group(1) == "publicdomain":
        kind = parts[0] if parts else ""
        return Licence({"zero": "cc0", "mark": "pdm"}.get(kind, "public-domain"), version)
    return Licence("cc-" + parts[0], version) if parts else None


def parse_licence(text: str | None) -> Licence:
    """The code and version of a licence as a source writes it; Licence("") for an empty value."""
    s = unicodedata.normalize("NFKC", str(text or "")).strip().lower()
    if not s:
        return Licence("")
    found = _from_url(s)
    if found is not None:
        return found
    tokens = [t for t in re.split(r"[\s_\-/]+", s) if t and t not in _NOISE_WORDS]
    if tokens and tokens[0] == "cc" and len(tokens) > 1 and tokens[1] == "0":  # "cc 0", "cc-0"
        tokens = ["cc0"] + tokens[2:]
    version_parts: list[str] = []
    while len(tokens) > 1 and _VERSION.fullmatch(tokens[-1]):  # "4.0", or GBIF's "4", "0"
        version_parts.insert(0, tokens.pop())
    version = ".".join(version_parts)
    if tokens and tokens[0] in CC_ELEMENTS and all(t in CC_ELEMENTS for t in tokens):
        tokens = ["cc"] + tokens  # "by-nc" as iNaturalist's API writes it
    return Licence("-".join(tokens), version)


@dataclass(frozen=True)
class LicenceFilter:
    code: str = ""  # exact code (or the family's stem when `family`)
    version: str = ""
    family: bool = False  # `code*`: the code and every code that extends it
    elements: tuple[str, ...] = ()  # bare CC elements: every CC licence that has all of them


def parse_licence_filter(text: str | None) -> LicenceFilter:
    """The licence filter's rule (module docstring) applied to what the user typed."""
    raw = unicodedata.normalize("NFKC", str(text or "")).strip()
    family = raw.endswith("*")
    raw = raw.rstrip("*").strip()
    tokens = [t for t in re.split(r"[\s_\-]+", raw.lower()) if t]
    if tokens and not family and all(t in CC_ELEMENTS for t in tokens):
        return LicenceFilter(elements=tuple(dict.fromkeys(tokens)))
    lic = parse_licence(raw)
    return LicenceFilter(code=lic.code, version=lic.version, family=family)


def matches(flt: LicenceFilter, lic: Licence) -> bool:
    """The filter's rule in Python (the catalog runs the same rule in SQL; tests compare the two)."""
    if flt.elements:
        parts = lic.code.split("-")
        return parts[0] == "cc" and all(e in parts[1:] for e in flt.elements)
    if flt.version and lic.version != flt.version:
        return False
    if flt.family:
        return lic.code == flt.code or lic.code.startswith(flt.code + "-")
    return bool(flt.code) and lic.code == flt.code


def like_escape(text: str, escape: str = "\\") -> str:
    """`text` as a literal inside a LIKE pattern written with ESCAPE '\\': %, _ and the escape are escaped."""
    return text.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")


# the version Creative Commons' current licences carry, used when a source names a CC licence without one
# (iNaturalist's `CC-BY-NC` means 4.0 on photos uploaded since 2019; older photos may be 2.0 or 3.0, so a URL
# built without a stated version says so with `assumed_version`)
CURRENT_CC_VERSION = "4.0"
_CC_ORDER = {"by": 0, "nc": 1, "sa": 2, "nd": 2}  # the order of the elements in a licence's name and URL
_CC_LICENCES = {"by", "by-sa", "by-nd", "by-nc", "by-nc-sa", "by-nc-nd"}


def licence_url(lic: Licence) -> str:
    """The canonical URL of a licence (what Darwin Core's `license` term asks for), '' when there is none:
    cc-by-nc 4.0 -> https://creativecommons.org/licenses/by-nc/4.0/, cc0 -> .../publicdomain/zero/1.0/,
    pdm -> .../publicdomain/mark/1.0/. A CC licence without a version gets CURRENT_CC_VERSION; its elements
    are put in the deed's order (`cc-by-sa-nc` is by-nc-sa); a combination Creative Commons never issued
    (`cc-nc`, `cc-by-sa-nd`) has none."""
    code = lic.code
    if code == "cc0":
        return "https://creativecommons.org/publicdomain/zero/1.0/"
    if code == "pdm":
        return "https://creativecommons.org/publicdomain/mark/1.0/"
    parts = code.split("-")
    if len(parts) > 1 and parts[0] == "cc" and all(p in CC_ELEMENTS for p in parts[1:]):
        elements = "-".join(sorted(dict.fromkeys(parts[1:]), key=lambda e: _CC_ORDER[e]))
        if elements in _CC_LICENCES:
            return f"https://creativecommons.org/licenses/{elements}/{lic.version or CURRENT_CC_VERSION}/"
    return ""


def assumed_version(lic: Licence) -> bool:
    """Whether licence_url had to assume the version (a CC licence written without one)."""
    return lic.code.startswith("cc-") and bool(licence_url(lic)) and not lic.version


def url_of(text: str | None) -> str:
    """The URL a record carries for a licence as a source wrote it: licence_url of its code and version, else
    the text itself when it is an http(s) URL (a licence that is not Creative Commons), else ''."""
    raw = unicodedata.normalize("NFKC", str(text or "")).strip()
    return licence_url(parse_licence(raw)) or (raw if re.match(r"https?://\S+$", raw, re.IGNORECASE) else "")
