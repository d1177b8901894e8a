"""The field-guide demo world as the integration tests use it: drawn into a data directory, ingested through
the app's own services (app.build_services) with offline settings, and ready to search; or ingested by
`python app.py ingest` for tests that run the app's commands (`world_app`)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable


def world_services(data: Path, per_species: int, backends: dict[str, str],
                   before_ingest: Callable[[Path], Any] | None = None, **settings: Any) -> tuple[Any, Any]:
    """(services, what `before_ingest(csv_path)` returned): the world drawn with seed 0 (no benchmark),
    `settings` over the offline ones (rule LLM, metadata captions), `backends` chosen by name."""
    from app import build_services
    from core.config import load_settings
    from fieldguide.world import build_world

    csv_path = build_world(data / "world", seed=0, per_species=per_species, benchmark=False)
    extra = before_ingest(csv_path) if before_ingest is not None else None
    settings = load_settings(environ={}, data_dir=str(data), **{"llm": "rule", "captioner": "metadata",
                                                                **settings, **backends})
    services = build_services(settings)
    services.ingestor().run(str(csv_path), None)
    services.corpus.reload()
    return services, extra


def world_app(tmp_path: Path, **env_settings: str) -> tuple[Path, Callable[..., str]]:
    """A small world (seed 0, 3 pictures per species) in tmp_path/world, ingested by `python app.py ingest` into
    tmp_path/data, and a function that runs `app.py` with further arguments on it and returns its stdout (a
    failed command fails the test with the end of its stderr). `env_settings`: extra ECOLENS_* variables; no
    other EcoLens setting is inherited."""
    from fieldguide.world import build_world

    root = Path(__file__).resolve().parents[1]
    world = tmp_path / "world"
    csv_path = build_world(world, seed=0, per_species=3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(tmp_path / "data"), CI="true", **env_settings)

    def app(*args: str) -> str:
        out = subprocess.run([sys.executable, str(root / "app.py"), *args], env=env, cwd=root, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout

    app("ingest", str(csv_path))
    return world, app
