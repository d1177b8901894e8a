"""The requirements split: the runtime file has what the app imports and nothing only tests need; the Space
gets gradio's OAuth extra; llama.cpp and the test tools are extras; the Dockerfile's final stage has no
compilers, an init, a health check and the Hugging Face cache on the volume."""
from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_CODE = ["app.py", "core", "cli", "ui", "storage"]
# imported only when chosen: llm=llama_cpp (requirements-llama.txt), ingest --engine ray (requirements-dev.txt; a
# missing ray is a clear error)
LAZY_EXTRAS = {"llama_cpp", "ray"}


def _names(path: str) -> set[str]:
    out = set()
    for line in (ROOT / path).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            out.add(re.split(r"[\[=<>!~ ]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return out


def _third_party_imports() -> set[str]:
    files = [ROOT / "app.py"] + [p for d in RUNTIME_CODE[1:] for p in (ROOT / d).rglob("*.py")]
    local = {"core", "cli", "ui", "storage", "app", "scripts", "tests"}
    found = set()
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in local and m not in sys.stdlib_module_names and m != "__future__"}


def test_every_runtime_import_is_a_runtime_requirement():
    runtime = _names("requirements.txt")
    dists = packages_distributions()
    missing = {}
    for module in _third_party_imports() - LAZY_EXTRAS:
        names = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        if not names & runtime:
            missing[module] = sorted(names)
    assert not missing, f"imported by the app but not in requirements.txt: {missing}"


def test_runtime_has_no_test_tools_and_the_space_gets_oauth():
    runtime = _names("requirements.txt")
    assert not runtime & {"pytest", "pytest-timeout", "playwright", "llama-cpp-python", "pandas"}
    assert re.search(r"^gradio\[oauth\]==", (ROOT / "requirements.txt").read_text(), re.MULTILINE)
    dev = (ROOT / "requirements-dev.txt").read_text()
    assert "-r requirements.txt" in dev and "-r requirements-llama.txt" in dev and "pytest==" in dev
    assert "hf_oauth: true" in (ROOT / "README.md").read_text()


def test_dockerfile_runs_without_compilers_under_an_init_with_a_health_check():
    text = (ROOT / "Dockerfile").read_text()
    stages = re.split(r"^FROM ", text, flags=re.MULTILINE)
    final = stages[-1]
    assert len(stages) >= 3, "a build stage and a run stage"
    assert "build-essential" not in final and "cmake" not in final
    assert "tini" in final and re.search(r"^ENTRYPOINT \[\"/usr/bin/tini\"", final, re.MULTILINE)
    assert re.search(r"^HEALTHCHECK ", final, re.MULTILINE) and re.search(r"^USER ecolens", final, re.MULTILINE)
    assert "HF_HOME=/data/" in final and "ECOLENS_DATA_DIR=/data" in final
    assert "ECOLENS_VENV" not in text and "ECOLENS_CACHE" not in text  # install-time names use ECOLENS_SETUP_


def test_run_sh_builds_llama_only_when_chosen(tmp_path, monkeypatch):
    from scripts.wants_llama import main

    monkeypatch.chdir(tmp_path)
    for k in [k for k in __import__("os").environ if k.startswith("ECOLENS_")]:
        monkeypatch.delenv(k)
    assert main([]) == 1
    cfg = tmp_path / "eco.toml"
    cfg.write_text("llm = 'llama_cpp'\n")
    assert main(["--config", str(cfg)]) == 0 and main([f"--config={cfg}", "search", "x"]) == 0
    monkeypatch.setenv("ECOLENS_LLM", "llama_cpp")
    assert main([]) == 0
    monkeypatch.setenv("ECOLENS_LLM", "openai")
    assert main([]) == 1
    run_sh = (ROOT / "run.sh").read_text()
    assert "scripts/wants_llama.py" in run_sh and "setup.sh --llama" in run_sh
    assert "setup.sh --dev" in (ROOT / "test.sh").read_text()
