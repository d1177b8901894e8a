"""The import rules of the architecture: ui -> core <- storage; app.py wires everything."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the field-guide world is a plug-in: only app.py (the composition root), tests and benchmarks import it
FORBIDDEN = {
    "core": {"gradio", "ui", "storage", "cli", "app", "sqlalchemy", "alembic", "fieldguide"},
    "ui": {"torch", "faiss", "open_clip", "diffusers", "sqlalchemy", "alembic", "storage", "cli", "fieldguide"},
    "storage": {"ui", "cli", "gradio", "app", "torch", "faiss", "fieldguide"},
    "cli": {"gradio", "ui", "storage", "sqlalchemy", "fieldguide"},
    "fieldguide": {"gradio", "ui", "storage", "cli", "app", "sqlalchemy", "alembic"},
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


def _module_imports(path: Path, package_modules: set[str]) -> set[str]:
    """Project modules `path` imports (at any depth in the file: lazy imports count too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        out |= {n for n in names if n in package_modules}
    return out


def test_no_import_circles():
    """The import graph of core/, fieldguide/, storage/, ui/ and cli/ (lazy imports included) has no cycle."""
    files = {}
    for package in ("core", "fieldguide", "storage", "ui", "cli"):
        for path in (ROOT / package).rglob("*.py"):
            mod = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            files[mod.removesuffix(".__init__")] = path
    graph = {m: _module_imports(p, set(files)) - {m} for m, p in files.items()}
    graph = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}  # a package's own init
    state: dict[str, int] = {}
    cycles = []

    def visit(m, stack):
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(" -> ".join(stack[stack.index(d):] + [d]))
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, "\n".join(cycles)


def test_core_has_few_loose_modules():
    loose = sorted(p.name for p in (ROOT / "core").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= 10, loose


# The floors inside core/, lowest first: a module never imports one of a higher floor (lazy imports count too).
# A module stands on the floor of the longest name listed that holds it (core.camtrap.crops: floor 4, the rest of
# core.camtrap: floor 3).
CORE_FLOORS = (
    ("core.licences", "core.redact"),  # plain helpers the shapes use
    ("core.contracts",),  # shapes and protocols every layer shares
    ("core.prompts", "core.imageio", "core.logs", "core.config", "core.plugins", "core.sessions",
     "core.people",  # who may log in (users file) and session tokens
     "core.camtrap"),  # camera-trap records, files and filters read and written
    ("core.backends", "core.vectors", "core.served", "core.exports", "core.darwincore", "core.dwc",
     "core.camtrap.crop_index", "core.camtrap.crops"),  # crops: pictures cut and their vectors
    ("core.ingest", "core.workers", "core.serving", "core.labels", "core.exporting"),
    ("core.methods",),
    ("core.search", "core.doctor"),
    ("core.evaluation",),
)
# The one door from ui/ into core: the shapes (core.contracts), the settings it shows, the presets it asks the
# engine for, the preparation it shows, the files it serves and writes for people, and who is logged in.
# Everything else the page needs comes through the engine it is handed (core.search.engine.SearchEngine) or
# through the contracts.
UI_DOOR = ("core.contracts", "core.config", "core.search.presets", "core.search.preparation", "core.served",
           "core.imageio", "core.labels", "core.exports", "core.exporting", "core.darwincore",
           "core.sessions.memory_log", "core.camtrap.filters", "core.camtrap.people", "core.people",
           "core.camtrap.capture_time")  # a frame's time in words, shared with the command line


def _core_names(path: Path) -> set[str]:
    """The core modules `path` imports, as dotted names (`from core import x` names core.x)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("core.")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "core":
                out |= {f"core.{a.name}" for a in node.names}
            elif node.module.startswith("core."):
                out.add(node.module)
    return out


def _floor(module: str) -> int | None:
    held = [(len(m), i) for i, floor in enumerate(CORE_FLOORS) for m in floor
            if module == m or module.startswith(m + ".")]
    return max(held)[1] if held else None


def test_every_core_module_stands_on_a_floor():
    missing = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        mod = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        if mod != "core" and _floor(mod) is None:
            missing.append(mod)
    assert not missing, f"add these to CORE_FLOORS: {missing}"


def test_no_core_import_runs_up_a_floor():
    bad = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        mod = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        own = _floor(mod)
        for name in sorted(_core_names(path)):
            theirs = _floor(name)
            if own is not None and theirs is not None and theirs > own:
                bad.append(f"{path.relative_to(ROOT)} (floor {own + 1}) imports {name} (floor {theirs + 1})")
    assert not bad, "\n".join(bad)


def test_ui_enters_core_through_its_one_door():
    bad = []
    for path in sorted((ROOT / "ui").rglob("*.py")):
        for name in sorted(_core_names(path)):
            if not any(name == d or name.startswith(d + ".") for d in UI_DOOR):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)
