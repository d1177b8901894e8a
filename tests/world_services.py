"""The field-guide demo world as the integration tests use it: drawn into a data directory, ingested through
the app's own services (app.build_services) with offline settings, and ready to search."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable


def world_services(data: Path, per_species: int, backends: dict[str, str],
                   before_ingest: Callable[[Path], Any] | None = None, **settings: Any) -> tuple[Any, Any]:
    """(services, what `before_ingest(csv_path)` returned): the world drawn with seed 0 (no benchmark),
    `settings` over the offline ones (rule LLM, metadata captions), `backends` chosen by name."""
    from app import build_services
    from core.contracts.settings import load_settings
    from fieldguide.world import build_world

    csv_path = build_world(data / "world", seed=0, per_species=per_species, benchmark=False)
    extra = before_ingest(csv_path) if before_ingest is not None else None
    settings = load_settings(environ={}, data_dir=str(data), **{"llm": "rule", "captioner": "metadata",
                                                                **settings, **backends})
    services = build_services(settings)
    services.ingestor().run(str(csv_path), None)
    services.corpus.reload()
    return services, extra
