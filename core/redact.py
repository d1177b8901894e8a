"""Redaction of credentials inside URLs: the one place that decides what of a URL may be shown or logged.

`mask_url` hides a user name and password (https://user:pass@host -> https://***@host) and the values of
query parameters (?key=... -> ?key=***), except a few known harmless ones; `mask_urls_in` does the same for
every URL inside a longer text (error messages, notices). Settings (`core.config.masked`), backend model
ids, backend error messages and log records (`MaskUrlsFilter`) all go through these functions."""
from __future__ import annotations

import logging
import re
from urllib.parse import parse_qsl, urlsplit, urlunsplit

MASK = "***"
HARMLESS_QUERY_KEYS = frozenset({"api-version", "api_version", "version", "format"})
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]{}]+")


def mask_url(url: str) -> str:
    """`url` with its user info, query values (but HARMLESS_QUERY_KEYS) and fragment replaced by ***.
    Text that is not a URL comes back unchanged; a URL that cannot be parsed comes back fully masked."""
    if not url or "://" not in url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # e.g. a port that is not a number
        scheme = url.split("://", 1)[0]
        return f"{scheme}://{MASK}"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{'[' + host + ']' if ':' in host else host}{port}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if pairs:
            query = "&".join(f"{k}={v if k.lower() in HARMLESS_QUERY_KEYS else MASK}" for k, v in pairs)
        else:
            query = MASK
    fragment = MASK if parts.fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def mask_urls_in(text: str) -> str:
    """`text` with every URL in it passed through mask_url."""
    if not text or "://" not in text:
        return text
    return _URL.sub(lambda m: mask_url(m.group(0)), text)


class MaskUrlsFilter(logging.Filter):
    """A logging filter that masks credentials in URLs of a record's message and arguments (attach it to a
    handler: `handler.addFilter(MaskUrlsFilter())`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = mask_urls_in(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(mask_urls_in(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: mask_urls_in(v) if isinstance(v, str) else v for k, v in record.args.items()}
        if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
            record.exc_text = mask_urls_in(logging.Formatter().formatException(record.exc_info))
        return True
