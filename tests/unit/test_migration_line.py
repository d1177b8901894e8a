"""The catalog's Alembic migrations form one line: a single head, a single base, and every revision's
down_revision the one revision before it (no merges, no branches). Changes made side by side that each add a
migration on the same parent give two heads, and `upgrade head` (storage.db.migrate, at every start) then
fails; this test names the revisions to re-parent."""
from __future__ import annotations

from pathlib import Path

from alembic.config import Config
from alembic.script import ScriptDirectory

from storage.db import MIGRATIONS


def scripts(location: Path) -> ScriptDirectory:
    cfg = Config()
    cfg.set_main_option("script_location", str(location))
    return ScriptDirectory.from_config(cfg)


def line_problems(script: ScriptDirectory) -> list[str]:
    """What keeps the revisions from being one straight line, in words (empty: one line)."""
    problems = []
    heads = script.get_heads()
    if len(heads) != 1:
        problems.append(f"{len(heads)} heads ({', '.join(sorted(heads))}): set one's down_revision to the other")
    revisions = list(script.walk_revisions())
    for rev in revisions:
        down = rev.down_revision
        if isinstance(down, (tuple, list)):
            problems.append(f"{rev.revision} merges {', '.join(down)}: give it one down_revision")
    bases = [rev.revision for rev in revisions if rev.down_revision is None]
    if len(bases) != 1:
        problems.append(f"{len(bases)} bases ({', '.join(sorted(bases))}): only the first revision has none")
    children: dict[str, list[str]] = {}
    for rev in revisions:
        if isinstance(rev.down_revision, str):
            children.setdefault(rev.down_revision, []).append(rev.revision)
    for parent, kids in sorted(children.items()):
        if len(kids) > 1:
            problems.append(f"{parent} has {len(kids)} children ({', '.join(sorted(kids))}): chain them instead")
    if len(heads) == 1:  # walking down from the head must reach every revision, once each
        seen, rev = [], script.get_revision(heads[0])
        while rev is not None and rev.revision not in seen:
            seen.append(rev.revision)
            rev = script.get_revision(rev.down_revision) if isinstance(rev.down_revision, str) else None
        missed = {r.revision for r in revisions} - set(seen)
        if missed:
            problems.append(f"not below the head: {', '.join(sorted(missed))}")
    return problems


def test_the_catalog_migrations_are_one_line_with_one_head():
    script = scripts(MIGRATIONS)
    assert line_problems(script) == []
    assert len(list(script.walk_revisions())) == len(list((MIGRATIONS / "versions").glob("*.py")))


def _revision(folder: Path, name: str, down: str | None) -> None:
    (folder / f"{name}.py").write_text(f'revision = "{name}"\ndown_revision = {down!r}\nbranch_labels = None\n'
                                       "depends_on = None\n\n\ndef upgrade():\n    pass\n\n\n"
                                       "def downgrade():\n    pass\n")


def test_two_revisions_on_one_parent_are_named(tmp_path):
    """The check itself: two migrations written side by side on the same parent are caught."""
    (tmp_path / "versions").mkdir()
    (tmp_path / "script.py.mako").write_text((MIGRATIONS / "script.py.mako").read_text())
    _revision(tmp_path / "versions", "a1", None)
    _revision(tmp_path / "versions", "b2", "a1")
    assert line_problems(scripts(tmp_path)) == []
    _revision(tmp_path / "versions", "c3", "a1")
    problems = line_problems(scripts(tmp_path))
    assert any("2 heads (b2, c3)" in p for p in problems)
    assert any("a1 has 2 children (b2, c3)" in p for p in problems)
