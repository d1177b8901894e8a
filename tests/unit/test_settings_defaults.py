"""A setting's default lives in the settings model only: no module of the app reads a setting with a fallback
of its own, `getattr(settings, "name", default)`, which would keep a second default beside the model's."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "ui", "storage", "cli", "fieldguide")


def _app_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for package in PACKAGES:
        if (ROOT / package).is_dir():
            files += sorted((ROOT / package).rglob("*.py"))
    return files


def _defaulted_setting_reads(source: str) -> list[tuple[int, str]]:
    """(line, code) of every getattr(<expression naming settings>, <name>, <default>) in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) == 3 and "settings" in ast.unparse(node.args[0]).lower()):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_scan_recognises_a_repeated_default():
    code = "a = getattr(settings, 'k', 20)\nb = getattr(self.settings, name, None)\nc = getattr(settings, 'k')\n" \
           "d = getattr(photo, 'kind', '')\n"
    assert [line for line, _ in _defaulted_setting_reads(code)] == [1, 2]


def test_no_setting_is_read_with_a_default_of_its_own():
    files = _app_files()
    assert len(files) > 50  # the scan reads the real code
    repeated = [f"{path.relative_to(ROOT)}:{line}: {code}" for path in files
                for line, code in _defaulted_setting_reads(path.read_text(encoding="utf-8"))]
    assert not repeated, ("settings read with a default of their own (use settings.NAME; the default belongs in "
                          "core/config/settings.py):\n" + "\n".join(repeated))
