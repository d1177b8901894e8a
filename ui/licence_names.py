"""A licence as a person reads it: Creative Commons' URLs by their short names ('CC BY 4.0', not
'http://creativecommons.org/licenses/by/4.0/'), linked to the licence; any other URL shown as it is, linked;
any other text shown as it is (escaped).

The short names are Creative Commons' own ("CC BY-NC-SA 4.0", "CC0 1.0", "Public Domain Mark 1.0"). A URL is
matched whatever its scheme (http or https), with or without 'www.', a trailing slash, or a last part naming
the deed or the legal code ('deed.en', 'legalcode')."""
from __future__ import annotations

import re
from html import escape

# the path of a Creative Commons licence or tool under creativecommons.org -> its short name (the version is
# the URL's own and is added after the name)
CC_SHORT_NAMES = {
    "licenses/by": "CC BY",
    "licenses/by-sa": "CC BY-SA",
    "licenses/by-nd": "CC BY-ND",
    "licenses/by-nc": "CC BY-NC",
    "licenses/by-nc-sa": "CC BY-NC-SA",
    "licenses/by-nc-nd": "CC BY-NC-ND",
    "publicdomain/zero": "CC0",
    "publicdomain/mark": "Public Domain Mark",
}

_CC_URL = re.compile(r"https?://(?:www\.)?creativecommons\.org/(licenses|publicdomain)/([a-z-]+)/(\d+(?:\.\d+)*)"
                     r"(?:/(?:deed\.[a-z_-]+|legalcode(?:\.[a-z_-]+)?)?)?/?", re.IGNORECASE)
_URL = re.compile(r"https?://\S+", re.IGNORECASE)


def short_name(text: str | None) -> str:
    """'CC BY 4.0' for a Creative Commons URL CC_SHORT_NAMES knows, '' for anything else."""
    m = _CC_URL.fullmatch(str(text or "").strip())
    if not m:
        return ""
    name = CC_SHORT_NAMES.get(f"{m.group(1).lower()}/{m.group(2).lower()}")
    return f"{name} {m.group(3)}" if name else ""


def licence_text(text: str | None) -> str:
    """The licence in words: its short name for a known Creative Commons URL, else the text as written."""
    return short_name(text) or str(text or "").strip()


def licence_html(text: str | None) -> str:
    """The licence as HTML: a known Creative Commons URL as its short name linked to the URL, any other URL as
    itself linked, other text escaped."""
    raw = str(text or "").strip()
    if not _URL.fullmatch(raw):
        return escape(raw)
    href = escape(raw, quote=True)
    return (f"<a href='{href}' target='_blank' rel='noopener noreferrer'>"
            f"{escape(short_name(raw) or raw)}</a>")
