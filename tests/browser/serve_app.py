"""Serve the real app the way app.py's serve() does once it passes the session log (used by the browser
tests while app.py does not yet): python tests/browser/serve_app.py --port N."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import app  # noqa: E402
from core.settings import load_settings  # noqa: E402
from storage.db import open_engine  # noqa: E402
from storage.sessionlog import SqlSessionLog  # noqa: E402
from ui.server import launch  # noqa: E402

if __name__ == "__main__":
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 7860
    engine = app.build_engine(load_settings(port=port))
    log = SqlSessionLog(open_engine(engine.settings.path("ecolens.sqlite")), engine.settings.path("artefacts"))
    sys.exit(launch(engine, app.STANDIN_BANNER, log))
