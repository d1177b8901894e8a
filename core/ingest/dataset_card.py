"""A hub dataset's card (its README.md): the licence its YAML header declares (`license: cc-by-nc-4.0`), named
as people write it ("CC BY-NC 4.0") for the page's banner. The card is downloaded with the dataset (at most
MAX_BYTES; core/ingest/hub_dataset.py) and read here from the local copy; only its first READ_BYTES are read."""
from __future__ import annotations

import logging
import re
from pathlib import Path

log = logging.getLogger(__name__)
FILE = "README.md"
MAX_BYTES = 1_000_000  # a card larger than this is not downloaded (the banner then names the photos' licences)
READ_BYTES = 65_536  # the YAML header is at the top
_HEADER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(\r?\n|\Z)", re.S)
# hub licence ids that are not written by the rule in licence_name
NAMES = {"apache-2.0": "Apache 2.0", "mit": "MIT", "odbl": "ODbL", "odc-by": "ODC-By", "pddl": "PDDL",
         "cc0-1.0": "CC0 1.0", "unlicense": "The Unlicense", "openrail": "OpenRAIL", "gpl-3.0": "GPL 3.0"}


def licence_name(licence_id: str) -> str:
    """'cc-by-nc-4.0' -> 'CC BY-NC 4.0'; 'cc-by-sa-3.0' -> 'CC BY-SA 3.0'; 'apache-2.0' -> 'Apache 2.0'; any
    other id as it is written."""
    lid = licence_id.strip().lower()
    if lid in NAMES:
        return NAMES[lid]
    m = re.fullmatch(r"cc-(by(?:-nc)?(?:-nd|-sa)?)-(\d\.\d)", lid)
    if m:
        return f"CC {m.group(1).upper()} {m.group(2)}"
    return licence_id.strip()


def licence(folder: Path) -> str:
    """The licence the card in `folder` declares, named for people ('' when there is no card, no YAML header
    or no licence in it). 'other' is named by the card's license_name when it has one."""
    path = Path(folder) / FILE
    try:
        with path.open("rb") as fh:
            text = fh.read(READ_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    m = _HEADER.match(text)
    if not m:
        return ""
    import yaml

    try:
        header = yaml.safe_load(m.group(1))
    except yaml.YAMLError as exc:
        log.warning("the dataset card %s has a YAML header that cannot be read (%s)", path, exc)
        return ""
    if not isinstance(header, dict):
        return ""
    value = header.get("license")
    ids = [str(v) for v in (value if isinstance(value, list) else [value]) if v]
    named = [str(header.get("license_name") or "other") if i.lower() == "other" else licence_name(i) for i in ids]
    return ", ".join(named)
