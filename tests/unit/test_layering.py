"""The import rules of the architecture: ui -> core <- storage; app.py wires everything."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = {
    "core": {"gradio", "ui", "storage", "cli", "app", "sqlalchemy", "alembic"},
    "ui": {"torch", "faiss", "open_clip", "diffusers", "sqlalchemy", "alembic", "storage", "cli"},
    "storage": {"ui", "cli", "gradio", "app", "torch", "faiss"},
    "cli": {"gradio", "ui", "storage", "sqlalchemy"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_runs_the_wrong_way(package):
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        wrong = _imports(path) & FORBIDDEN[package]
        if wrong:
            bad.append(f"{path.relative_to(ROOT)} imports {sorted(wrong)}")
    assert not bad, "\n".join(bad)


def test_library_code_never_prints_or_exits():
    bad = []
    for package in ("core", "storage"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "exit"):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} calls {node.func.id}()")
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "exit" and getattr(node.func.value, "id", "") == "sys"):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} calls sys.exit()")
    assert not bad, "\n".join(bad)
