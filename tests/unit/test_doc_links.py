"""The documentation holds together: every relative link and image in README.md and docs/ points at a file that
exists (and a `#anchor` at a heading of that file), and the README stays a front page."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 220
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")  # [text](target "title"), ![alt](...)
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)  # [name]: target
HTML = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)=\"([^\"]+)\"", re.I)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The text without code (fenced blocks and inline code), where link syntax is not a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def targets(text: str) -> list[str]:
    prose = _prose(text)
    return [m.group(1) for pattern in (LINK, REFERENCE, HTML) for m in pattern.finditer(prose)]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base, n = slug(heading), 0
        while (name := base if n == 0 else f"{base}-{n}") in found:  # repeated headings get -1, -2, ...
            n += 1
        found.add(name)
    return found | set(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", path.read_text(encoding="utf-8")))


def broken_links(doc: Path, root: Path = ROOT) -> list[str]:
    doc, bad = doc.resolve(), []
    for target in targets(doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto: ... are not checked here
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / unquote(path)).resolve() if path else doc
        if not dest.exists():
            bad.append(f"{doc.relative_to(root)}: {target} (no such file)")
        elif root not in dest.parents:
            bad.append(f"{doc.relative_to(root)}: {target} (outside the repository)")
        elif anchor and dest.suffix == ".md" and unquote(anchor).lower() not in anchors(dest):
            bad.append(f"{doc.relative_to(root)}: {target} (no heading #{anchor} in {dest.relative_to(root)})")
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_relative_link_resolves(doc):
    bad = broken_links(doc)
    assert not bad, "\n".join(bad)


def test_the_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (f"README.md has {lines} lines; move detail into docs/ "
                                       f"(at most {README_MAX_LINES})")


def test_the_checker_finds_what_it_should(tmp_path):
    """The checker itself: a missing file and a missing heading are found, a good link and code are not."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## The `search` command\n", encoding="utf-8")
    doc = tmp_path / "README.md"
    doc.write_text("[ok](docs/other.md#the-search-command) ![pic](docs/missing.png) [bad](docs/other.md#nope)\n"
                   "`[code](not/a/link.md)`\n```\n[also code](nowhere.md)\n```\n[web](https://example.org/x)\n",
                   encoding="utf-8")
    bad = broken_links(doc, tmp_path.resolve())
    assert len(bad) == 2 and "docs/missing.png (no such file)" in bad[0] and "#nope" in bad[1], bad


CODE_PATH = re.compile(r"`((?:core|ui|storage|cli|fieldguide|bench|scripts|tests)/[\w/.-]+\.(?:py|sh|md))`")


def test_the_architecture_page_names_only_files_that_exist():
    """docs/architecture.md names modules by path (`core/search/engine.py`): each one is in the tree, so the
    page follows the code when a module moves."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = sorted(set(CODE_PATH.findall(text)))
    assert named, "the architecture page names no module"
    missing = [p for p in named if not (ROOT / p).exists()]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"
