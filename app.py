"""EcoLens composition root and command-line entry point.

`python app.py` serves the web app; `python app.py COMMAND` runs a command (see --help). This module builds
settings, backends, storage and services and hands them to the command or the web app; it is the only
place that knows every layer."""
from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.backends.registry import Backends  # noqa: E402
from core.errors import EcoLensError  # noqa: E402
from core.index_store import IndexStore  # noqa: E402
from core.ingest import Ingestor  # noqa: E402
from core.search import SearchService  # noqa: E402
from core.settings import Settings, load_settings  # noqa: E402

STANDIN_BANNER = ("SYNTHETIC DEMO: the field-guide world (invented species) searched with offline stand-in "
                  "models, not real CLIP / diffusion / vision-language models.")

# command name -> module under cli/ (each has add_parser(sub) and run(ctx, args))
COMMANDS = {"config": "cli.config", "ingest": "cli.ingest", "search": "cli.methods_search", "chat": "cli.chat",
            "eval": "cli.evaluate", "eval-run": "cli.eval_run", "repair": "cli.repair"}


@dataclass
class Engine:
    """Everything a command or the web app needs, wired once."""

    settings: Settings
    catalog: object
    backends: Backends
    index_store: IndexStore
    search: SearchService

    def ingestor(self) -> Ingestor:
        return Ingestor(self.catalog, self.index_store, self.backends.embedder, self.settings)

    def standin_in_use(self) -> bool:
        return any(v["standin"] for v in self.backends.describe().values())

    def ensure_corpus(self, progress=None) -> list[str]:
        """Make sure there is something to search: the configured corpus, or else the synthetic field-guide
        world when stand-in models are in use. Returns notices for the user."""
        notices: list[str] = []
        s = self.settings
        if self.catalog.count() == 0:
            if s.corpus:
                report = self.ingestor().run(s.corpus, progress)
                notices.append(f"built the catalog from {s.corpus}: {report.added} photos")
            elif self.backends.embedder.is_standin:
                from core.fieldguide.world import build_world

                csv_path = build_world(s.path("fieldguide"), seed=0)
                report = self.ingestor().run(csv_path, progress)
                notices.append(f"built the synthetic field-guide world into {s.path('fieldguide')}: "
                               f"{report.added} photos")
            self.search.reload()
        if self.backends.embedder.is_standin:
            notices.insert(0, STANDIN_BANNER)
        return notices


def build_engine(settings: Settings) -> Engine:
    """Open storage and create backends (lazily) for `settings`."""
    from storage.catalog import SqlCatalog
    from storage.db import open_engine

    from core.index import set_threads

    set_threads(settings.threads)
    settings.path().mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog(open_engine(settings.path("ecolens.sqlite")))
    backends = Backends(settings)
    store = IndexStore(settings.path())
    return Engine(settings, catalog, backends, store, SearchService(catalog, store, backends, settings))


@dataclass
class Context:
    """What a command receives: the settings, and the engine built on first use."""

    settings: Settings
    _engine: Engine | None = field(default=None, repr=False)

    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = build_engine(self.settings)
        return self._engine


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python app.py", description="EcoLens: expert search of nature photos. "
                                     "With no command, serves the web app.")
    parser.add_argument("--config", help="TOML settings file (default: $ECOLENS_CONFIG or ./ecolens.toml)")
    parser.add_argument("--port", type=int, help="port of the web app")
    parser.add_argument("--host", help="address of the web app")
    sub = parser.add_subparsers(dest="command")
    for module in COMMANDS.values():
        importlib.import_module(module).add_parser(sub)
    return parser


def serve(ctx: Context) -> int:
    """Build the web app on the engine and its session log, and serve it until interrupted."""
    from storage.db import open_engine
    from storage.sessionlog import SqlSessionLog
    from ui.server import launch

    engine = ctx.engine()
    session_log = SqlSessionLog(open_engine(engine.settings.path("ecolens.sqlite")), engine.settings.path("artefacts"))
    return launch(engine, STANDIN_BANNER, session_log)


def _join_negative_values(argv: list[str]) -> list[str]:
    """argparse reads "--bbox -10,35,30,60" as two options; glue a value that starts with a minus sign."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] == "--bbox" and arg[:1] == "-" and arg[1:2].isdigit():
            out[-1] = f"--bbox={arg}"
        else:
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(_join_negative_values(sys.argv[1:] if argv is None else argv))
    try:
        overrides = {k: v for k, v in (("port", args.port), ("host", args.host)) if v}
        ctx = Context(load_settings(args.config, **overrides))
        if args.command is None:
            return serve(ctx)
        return importlib.import_module(COMMANDS[args.command]).run(ctx, args)
    except EcoLensError as exc:
        print(f"error: {exc.message}" + (f"\nhow to fix: {exc.hint}" if exc.hint else ""), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
