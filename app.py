"""EcoLens composition root and command-line entry point.

`python app.py` serves the web app; `python app.py COMMAND` runs a command (see --help). This module builds
settings, backends, storage and services and hands them to the command or the web app; it is the only
place that knows every layer."""
from __future__ import annotations

import importlib
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from cli.parser import join_negative_values, make_parser, report
from core.backends.registry import Backends
from core.config import Settings, load_settings
from core.contracts.errors import EcoLensError
from core.contracts.world import RuleBooks, World
from core.ingest.ingestor import Ingestor
from core.logs import configure_logging
from core.plugins.registry import demo_world, get_world, load_modules
from core.search import space
from core.search.banner import EMPTY, OWN, SYNTHETIC, banner_for, headline
from core.search.corpus import Corpus
from core.search.engine import SearchEngine
from core.search.preparation import Progress, prepare_corpus
from core.vectors.index_store import IndexStore

ROOT = Path(__file__).resolve().parent


# world plug-ins (core.contracts.world): each module's register() adds its rule book, backends, demo and benchmark
WORLD_PLUGINS = ("fieldguide.plugin",)
load_modules(WORLD_PLUGINS)  # remembered: worker processes and Ray actors register the same ones

# command name -> module under cli/ (each has add_parser(sub) and run(ctx, args))
COMMANDS = {"config": "cli.config", "ingest": "cli.ingest", "search": "cli.methods_search", "chat": "cli.chat",
            "eval": "cli.evaluate", "eval-run": "cli.eval_run", "doctor": "cli.doctor", "repair": "cli.repair",
            "export": "cli.export", "users": "cli.users", "serve": "cli.serve"}


# commands that run without the models and photos a profile or a hub corpus needs (they report on them)
NO_PREFLIGHT = {"config", "doctor", "export", "users"}


@dataclass
class Services:
    """Everything a command or the web app needs, wired once: storage, backends, the corpus view and the one
    search engine that every front end uses."""

    settings: Settings
    catalog: object
    backends: Backends
    index_store: IndexStore
    corpus: Corpus
    engine: SearchEngine
    _banner: tuple | None = field(default=None, repr=False)  # (catalog size and backends, text, line): banner()
    _books: tuple | None = field(default=None, repr=False)  # (catalog size, RuleBooks): rule_books()
    _read_as: World | None = field(default=None, repr=False)  # read_as(): every search in this world's terms
    fallback: str = ""  # why the start fell back to the stand-in world (a Space without the hub), for the banner
    camtrap: object | None = None  # the camera-trap store (core.contracts.camtrap.CamtrapStore), beside the catalog
    checkup: object | None = None  # core.search.model_checkup.ModelCheckup: the doctor's checks of real models

    def ingestor(self) -> Ingestor:
        return Ingestor(self.catalog, self.index_store, self.backends.embedder, self.settings, camtrap=self.camtrap)

    def session_log(self):
        """The session log (searches, labels, exports) in the catalog's database, on a connection of its own."""
        from storage.db import open_engine
        from storage.sessionlog import SqlSessionLog

        return SqlSessionLog(open_engine(self.settings.path("ecolens.sqlite"), self.settings.sqlite_mmap_mb << 20),
                             self.settings.path("artefacts"))

    def corpus_kind(self) -> str:
        """What is (or, on first start, will be) searched: core.search.banner SYNTHETIC, OWN or EMPTY."""
        if self.catalog.count() == 0:
            if self.settings.corpus:
                return OWN
            return SYNTHETIC if self.backends.embedder.is_standin else EMPTY
        demo = demo_world()
        if demo is None:
            return OWN
        world = str(Path(self.settings.path(demo.demo_folder)).resolve()) + os.sep  # where prepare_corpus builds it
        if demo.recognises is not None:
            return SYNTHETIC if demo.recognises(self.catalog, world) else OWN
        return SYNTHETIC if self.catalog.count_outside(world) == 0 else OWN

    def photo_counts(self) -> tuple[int, int]:
        """(photos of the demo world, the user's own photos) in the catalog."""
        total = self.catalog.count()
        demo = demo_world()
        if demo is None or total == 0:
            return 0, total
        world = str(Path(self.settings.path(demo.demo_folder)).resolve()) + os.sep
        own = self.catalog.count_outside(world)
        return total - own, own

    def world(self) -> World | None:
        """The world the collection is (or, on first start, will be) nothing but, if any."""
        if self._read_as is not None:
            return self._read_as
        demo = demo_world()
        return demo if demo is not None and self.corpus_kind() == SYNTHETIC else None

    def rule_books(self) -> RuleBooks:
        """The rule books a search started now reads (the engine asks at the start of each search): the demo
        world's for everything while the collection is that world; with the world's photos among a user's own,
        the world's for its photos only and the generic rules for the rest and for the request; the generic
        rules otherwise. Worked out again only when the catalog's count changed (an ingest by the command line
        shows up at the next search, never under a running one)."""
        key = self.catalog.count()
        if self._books is None or self._books[0] != key:
            demo = demo_world()
            world = self.world()
            if world is not None:
                books = RuleBooks.whole(world)
            elif demo is not None and demo.photo_source in self.catalog.sources():  # the world's among others
                books = RuleBooks.mixed(demo)
            else:
                books = RuleBooks()
            self._books = (key, books)
        return self._books[1]

    def choose_world(self) -> str:
        """The name of the rule book that reads requests now ('generic' unless the collection is a world)."""
        return self.rule_books().request.name

    def read_as(self, name: str) -> None:
        """Read every search in the terms of world `name`, whatever the catalog holds (a world's own benchmark,
        wherever its photos lie)."""
        self._read_as = get_world(name)
        self._books = None
        self.backends.world = self._read_as

    def banner(self) -> str:
        """One truthful line about the photos (with their counts: demo photos, your own) and the models in use
        ('' when all is real and the photos are all yours). Asked at every page load and after every search,
        so it follows an ingest by the command line; it only reads (the catalog again only when it has grown)."""
        described = self.backends.describe()
        checked = self.checkup.version if self.checkup is not None else 0
        key = (self.catalog.count(), repr(sorted(described.items())), checked)
        if self._banner is None or self._banner[0] != key:
            counts = self.photo_counts()
            kind = self.corpus_kind()
            hub = self.hub_banner()  # a hub corpus's line says what is searched: not 'N of your photos' again
            fileless = self.catalog.count_fileless() if counts[1] and not hub else 0
            text = banner_for(self.settings, described, kind, counts if sum(counts) and not hub else None, fileless)
            # the short line of a collection that is no hub corpus, from the same counts (banner_parts)
            line = "" if hub else headline(self.settings, described, kind, counts if sum(counts) else None, fileless)
            failed = self.checkup.banner() if self.checkup is not None else ""  # models that failed their check
            text = " ".join(t for t in (hub, text, failed, f"Note: {self.fallback}." if self.fallback else "") if t)
            self._banner = (key, text, line)
        return self._banner[1]

    def banner_parts(self) -> tuple[str, str]:
        """(the banner in one short line, the whole banner): the page shows the line, the rest one click away."""
        from core.search.banner import hub_line

        text = self.banner()
        if not text:
            return "", ""
        if self.hub_banner():
            from core.ingest import hub_dataset

            line = hub_line(hub_dataset.parse(self.settings.corpus).label(), self.catalog.count(), [], self.settings,
                            judged="judge" not in self.backends.unusable)
        else:  # worked out with the banner, again only when the catalog or the models changed
            line = self._banner[2]
        return (line or text), text

    def hub_banner(self) -> str:
        """What a hub corpus is ('4000 photos from INQUIRE-Rerank (validation split), under CC BY-NC 4.0 ...': the
        dataset card's licence, else the photos' licence values), '' for any other corpus."""
        from core.ingest import hub_dataset
        from core.search.banner import hub_line

        if not hub_dataset.is_hub(self.settings.corpus):
            return ""
        files = hub_dataset.local_files(self.settings, self.settings.corpus)
        return hub_line(hub_dataset.parse(self.settings.corpus).label(), self.catalog.count(),
                        hub_dataset.licences(files) if files else [], self.settings,
                        hub_dataset.card_licence(self.settings, self.settings.corpus) if files else "",
                        judged="judge" not in self.backends.unusable)

    def example_queries(self) -> list[str]:
        """Example searches: a hub corpus's benchmark queries (their labels stay with the evaluation)."""
        from core.ingest import hub_dataset

        if not hub_dataset.is_hub(self.settings.corpus):
            return []
        files = hub_dataset.local_files(self.settings, self.settings.corpus)
        return hub_dataset.example_queries(files) if files else []

    def ensure_corpus(self, progress: Progress | None = None) -> list[str]:
        """Build the catalog on first use (the configured corpus, or the synthetic world with stand-in models);
        returns notices for the user, the banner first. Hub models the settings name are downloaded first."""
        from core.backends import model_fetch

        fetched = model_fetch.fetch(self.settings, progress)
        emb = self.backends.embedder
        notices = fetched + prepare_corpus(self.settings, self.catalog, self.corpus, emb.is_standin,
                                 lambda path, step, **card: self.ingestor().run(path, step, **card), progress)
        self.backends.world = self.world()  # the answer reader 'auto' follows the collection just prepared
        banner = self.banner()
        return ([banner] if banner else []) + notices


def uses_workers(settings: Settings, serving: bool) -> bool:
    """Whether local model work runs in worker processes (setting workers; 'auto': in the web app only)."""
    return settings.workers == "on" or (settings.workers == "auto" and serving)


class _LazyEmbedder:
    """The configured embedder, built on first use of any of its attributes."""

    def __init__(self, backends: Backends):
        self._backends = backends

    def __getattr__(self, name: str):
        return getattr(self._backends.embedder, name)


def build_services(settings: Settings, fallback: str = "", serving: bool = False,
                   checks: bool | None = None) -> Services:
    """Open storage and create backends (lazily), the corpus view and the search engine for `settings`;
    `serving`: for the web app (workers = 'auto' puts local model work in worker processes there). `checks`
    (default: `serving`): run the doctor's checks on each real model once it loads, in the background
    (core.search.model_checkup; the banner names a model that fails them)."""
    from core.vectors.threads import set_threads
    from storage.camtrap_store import SqlCamtrapStore
    from storage.catalog import SqlCatalog
    from storage.db import open_engine

    set_threads(settings.threads)
    settings.path().mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog(open_engine(settings.path("ecolens.sqlite"), settings.sqlite_mmap_mb << 20))
    backends = Backends(settings)
    if uses_workers(settings, serving):  # before any backend is built; each worker registers the same plug-ins
        from core.workers.pool import WorkerPool
        from core.workers.shared import from_environment

        # under `serve --processes N` every web process uses the one pool the serve command runs
        backends.workers = from_environment(settings) or WorkerPool(settings, WORLD_PLUGINS)
    store = IndexStore(settings.path())
    # a model profile's embedder is built at first use, after the background preparation downloaded it (with
    # progress on the page); otherwise at once, as always
    embedder = _LazyEmbedder(backends) if space.uses_hub(settings) else backends.embedder
    camtrap = SqlCamtrapStore(catalog.engine)
    corpus = Corpus(catalog, store, embedder, settings, camtrap=camtrap)
    checkup = None
    if serving if checks is None else checks:
        from core.search.model_checkup import ModelCheckup

        checkup = ModelCheckup(backends)
        backends.on_load = checkup.loaded
    # every search reads the rule books the services work out from the catalog at its start
    engine = SearchEngine(corpus, backends, settings, rules=lambda: services.rule_books())
    services = Services(settings, catalog, backends, store, corpus, engine, fallback=fallback, camtrap=camtrap,
                        checkup=checkup)
    backends.world = services.world()  # the answer reader 'auto' reads the world's photos with the world's reader
    return services


@dataclass
class Context:
    """What a command receives: the settings, and the services built on first use."""

    settings: Settings
    _services: Services | None = field(default=None, repr=False)
    fallback: str = ""  # why a Space kept the stand-in world (core.search.space)
    noted: bool = False  # the command's output already carries the stand-in note (cli.common.note_standins)
    serving: bool = False  # the web app, not a command (see uses_workers)

    def services(self) -> Services:
        if self._services is None:
            self._services = build_services(self.settings, self.fallback, self.serving)
        return self._services


def serve(ctx: Context) -> int:
    """Build the web app on the engine and its session log, and serve it until interrupted. The photo
    collection is prepared in the background; the page shows its progress."""
    from cli.serve import prepare_for_page
    from core.vectors.threads import one_blas_thread
    from ui.server import launch

    ctx.serving = True
    one_blas_thread()  # a web process's matrix products are small: numpy's BLAS threads would only spin
    services = ctx.services()
    from core.camtrap.desk import CamtrapDesk
    from core.people.users import Users
    from storage.db import open_engine
    from storage.logins import SqlLogins
    from storage.served_files import SqlServedFiles

    settings = services.settings
    users = Users(settings.path(settings.users_file)) if settings.users_file else None  # a bad file stops here
    db = open_engine(settings.path("ecolens.sqlite"), settings.sqlite_mmap_mb << 20)
    grants = SqlServedFiles(db)
    # logins in the database: every web process of this data directory and a restarted one know them
    logins = SqlLogins(db, settings.login_days) if users is not None or settings.password else None
    return launch(services.engine, services.session_log(), services.banner_parts,
                  lambda progress: prepare_for_page(services, progress), services.example_queries,
                  CamtrapDesk(services.camtrap, services.settings), users=users, grants=grants, logins=logins)


def serve_command(ctx: Context, args) -> int:
    """`serve`: one process as `python app.py`; several behind nginx (cli.serve), each started as this file is."""
    from cli.serve import check_processes, run_many

    if check_processes(args.processes) == 1:
        return serve(ctx)
    command = [sys.executable, str(ROOT / "app.py")] + (["--config", args.config] if args.config else [])
    return run_many(ctx.settings, command, WORLD_PLUGINS, args.processes)


def main(argv: list[str] | None = None) -> int:
    args = make_parser(COMMANDS.values()).parse_args(join_negative_values(sys.argv[1:] if argv is None else argv))
    try:
        overrides = {k: v for k, v in (("port", args.port), ("host", args.host)) if v}
        settings, fallback = space.space_start(load_settings(args.config, **overrides))
        ctx = Context(settings, fallback=fallback)
        configure_logging(ctx.settings.path(), ctx.settings.log_level, console=args.command in (None, "serve"))
        space.use_model_cache(ctx.settings)
        if space.uses_hub(ctx.settings) and args.command not in NO_PREFLIGHT:
            space.preflight(ctx.settings)  # offline without the models or the corpus: an error within seconds
        if args.command is None:
            return serve(ctx)
        if args.command == "serve":
            return serve_command(ctx, args)
        code = importlib.import_module(COMMANDS[args.command]).run(ctx, args)
        from cli.common import note_standins

        note_standins(ctx)  # every command's output says when stand-in models or the demo world are in use
        return code
    except EcoLensError as exc:
        return report(exc)
    except Exception as exc:  # the database or the disk failing (locked, full, damaged): a message, not a traceback
        from storage.retry import storage_error

        err = storage_error(exc)
        if err is None:
            raise
        logging.getLogger(__name__).exception("command failed on storage")
        return report(err)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
