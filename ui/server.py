"""Building the Gradio app from its collaborators (the search engine, session log, banner, the preparation of
the photo collection) and serving it safely: host by environment, only the served copies (data_dir/served)
reachable, the rest of the data directory blocked, upload limit, optional password.

Uploads and files the app hands out (exports) live in Gradio's cache folder, which Gradio's file route serves
to any logged-in user who knows a file's path. EcoLens gives Gradio a folder of its own
(data_dir/uploads, readable by this user only) instead of the shared system one (/tmp/gradio), so a file
another program puts there is never served, and has Gradio delete what it cached after upload_keep_s
seconds. An upload is served back only to the browser that uploaded it (ui.upload_guard); other cached
files (exports, pictures handed out) are reachable by their unguessable path, a SHA-256 salted with Gradio's
per-installation secret plus the name, by a logged-in user given the URL (the scripting API downloads its
results without a browser's cookies, so tying them to a cookie would break it)."""
from __future__ import annotations

import logging
import os
from html import escape
from pathlib import Path
from typing import Any, Callable

import gradio as gr
from starlette.middleware import Middleware

from core.contracts.errors import InputError, NotReady
from core.contracts.logins import LoginStore
from core.contracts.sessionlog import SessionLog
from core.search.preparation import Preparation
from core.sessions.memory_log import MemorySessionLog
from ui import compare_view, dialogue_view, history_view, identify_handlers, label_view, marks, place_map, search_view
from ui import strings as S
from ui.api_guard import ApiGuard
from ui.compare_handlers import CompareHandlers
from ui.dialogue_handlers import DialogueHandlers
from ui.forms import typed_api
from ui.history_handlers import HistoryHandlers
from ui.identify_handlers import IdentifyHandlers
from ui.identity import Identity
from ui.label_handlers import LabelHandlers
from ui.lightbox import KEYS_JS as LIGHTBOX_KEYS_JS
from ui.lightbox import LightboxHandlers, LightboxView
from ui.login import auth_function
from ui.login_tokens import lifespan as kept_logins
from ui.owned_log import OwnedLog
from ui.photos import served_files
from ui.schemas import remember_schemas
from ui.search_handlers import SearchHandlers
from ui.search_view import search_limit
from ui.served_in_place import serve_in_place
from ui.style import CSS, theme
from ui.upload_guard import UploadGuard

HEAD = (label_view.HOTKEYS_JS + LIGHTBOX_KEYS_JS + search_view.TAXON_PLACEHOLDER_JS + search_view.CITE_JS
        + place_map.head())
log = logging.getLogger(__name__)
UPLOADS = "uploads"  # Gradio's cache folder inside the data directory


def own_upload_folder(settings: Any, environ=os.environ) -> Path:
    """Point Gradio's cache (uploads, handed-out files) at data_dir/uploads, private to this user, unless the
    operator chose a folder with GRADIO_TEMP_DIR. Call before the app is built: components read it then."""
    chosen = environ.get("GRADIO_TEMP_DIR")
    if chosen:
        log.info("Gradio's upload folder is %s (GRADIO_TEMP_DIR)", chosen)
        return Path(chosen)
    folder = settings.path(UPLOADS).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        folder.chmod(0o700)
    except OSError:  # a filesystem without modes: the folder is still EcoLens's own
        log.warning("could not make %s private to this user", folder)
    environ["GRADIO_TEMP_DIR"] = str(folder)
    return folder


def cache_expiry(settings: Any) -> tuple[int, int] | None:
    """Gradio's delete_cache (every `frequency` s, delete cached files older than `age` s)."""
    keep = int(settings.upload_keep_s or 0)
    if keep <= 0:
        return None
    return max(1, min(600, keep // 2)), keep


def oauth_enabled(environ=os.environ) -> bool:
    """Hugging Face login is offered only on a Space with OAuth enabled (hf_oauth: true in the README)."""
    return bool(environ.get("SPACE_ID") and environ.get("OAUTH_CLIENT_ID"))


def annotator_box(identity: Identity):
    """What the page load does to the label view's annotator box, its agreement button and the photo view's
    identifier box: with personal logins both boxes show the logged-in person's name and cannot be typed in,
    and only an owner is offered the agreement."""
    def fill():
        who = identity.person()
        if not identity.personal:
            return gr.update(), gr.update(), gr.update()
        if who is None:  # a Space's visitor who has not logged in with Hugging Face: a name to type, as before
            return gr.update(interactive=True), gr.update(visible=False), gr.update(interactive=True)
        name = gr.update(value=who.name, interactive=False)
        return name, gr.update(visible=who.is_owner), name
    return fill


def _gate(preparation: Preparation | None):
    """ready(): raises NotReady while the photo collection is still being prepared (until the first of the user's
    photos are added: those are searched while the rest are embedded), InputError if that failed."""
    def ready() -> None:
        if preparation is not None and not preparation.ready and not preparation.searchable:
            error = InputError if preparation.finished else NotReady
            raise error(preparation.status() or S.PREPARING, S.PREPARING_HINT)
    return ready


def banner_html(banner: str | tuple[str, str]) -> str:
    """The banner as the page shows it: one short line (what is searched, with which models) whose whole text
    is one click away (a <details> element); a plain text is shown whole, in bold."""
    line, text = banner if isinstance(banner, tuple) else ("", banner)
    if not text:
        return ""
    if not line or line == text:
        return f"<b>{escape(text)}</b>"
    return (f"<details class='banner-details'><summary><b>{escape(line)}</b> <span class='banner-more'>"
            f"{escape(S.BANNER_MORE)}</span></summary><p>{escape(text)}</p></details>")


def _banner_md(banner: str | tuple[str, str]):
    """The banner's update: hidden when there is nothing to say."""
    value = banner_html(banner)
    return gr.update(value=value, visible=bool(value))


def build_app(engine: Any, session_log: SessionLog, banner: str | Callable[[], str | tuple[str, str]] = "",
              prepare=None, examples: Callable[[], list[str]] | None = None, camtrap: Any = None,
              identity: Identity | None = None) -> gr.Blocks:
    """The whole app as gr.Blocks on `engine` (core.search.engine.SearchEngine). `banner` (elem_id standin-banner)
    says what is searched and which stand-ins are in use: a text, or a function asked again at every page
    load and after every search (so it follows the catalog: an ingest by the command line shows at once);
    `prepare(progress) -> notices` builds the photo collection on first use: it runs in the background and
    the page shows its progress until it is done. `examples()`: example searches offered under the query box
    (a hub corpus's benchmark queries), asked at page load and once the collection is ready. `camtrap`:
    core.camtrap.desk.CamtrapDesk, the page's door to camera-trap data (None: the page has no camera-trap
    parts). `identity` (ui.identity): who logs in as themselves (default: a Hugging Face login on a Space,
    else nobody); every handler sees the session log as the asker may use it (ui.owned_log)."""
    identity = identity if identity is not None else Identity(oauth=oauth_enabled())
    memory = isinstance(session_log, MemorySessionLog)
    session_log = OwnedLog(session_log, identity)
    remember_schemas()  # every progress update of a search skips outputs: spare the loop their schemas
    preparation = Preparation(prepare).start() if prepare is not None else None
    ready = _gate(preparation)
    settings = getattr(engine, "settings", None)
    banner_text = banner if callable(banner) else (lambda: banner)

    def banner_now():
        if preparation is not None and not preparation.finished:  # the poll below says it once ready
            return gr.update()
        try:
            return _banner_md(banner_text())
        except Exception:  # the catalog is busy or being built: keep the banner as it is
            log.exception("the banner could not be read")
            return gr.update()
    first_banner = banner_text()
    with gr.Blocks(title=S.TITLE, delete_cache=cache_expiry(settings) if settings is not None else None) as app:
        with gr.Row():
            gr.Markdown(f"# {S.TITLE}\n{S.SUBTITLE}", elem_id="title")
            if oauth_enabled():
                gr.LoginButton(elem_id="hf-login", size="sm", scale=0)
        banner_box = gr.Markdown(banner_html(first_banner), elem_id="standin-banner",
                                 visible=bool(banner_html(first_banner)))
        # a callable value is read when each page loads (a string would be the note of the server's start)
        progress = gr.Markdown(preparation.status if preparation else "", elem_id="prepare-status",
                               visible=bool(preparation and not preparation.ready))
        if memory:
            gr.Markdown(S.MEMORY_LOG, elem_id="memory-log-notice")
        marked = gr.State([])  # the photos this page marked, from any gallery
        lightbox = LightboxView(LightboxHandlers(engine, camtrap), marked)
        identify = IdentifyHandlers(lightbox.h, session_log.annotator)  # identified by the logged-in person
        identify_handlers.wire(lightbox, identify)
        marks.build(marks.MarkHandlers(engine, session_log), marked, lightbox)
        search = SearchHandlers(engine, session_log, ready, camtrap)
        with gr.Tabs(elem_id="tabs", overflow_behavior="wrap") as tabs:  # on a phone every tab stays in view
            with gr.Tab(S.TAB_SEARCH, id="search", elem_id="tab-search"):
                search_ui = search_view.build(search, lightbox)
            with gr.Tab(S.TAB_DIALOGUE, id="dialogue", elem_id="tab-dialogue"):
                dialogue_view.build(DialogueHandlers(engine, session_log, ready), lightbox)
            with gr.Tab(S.TAB_COMPARE, id="compare", elem_id="tab-compare"):
                compare_view.build(CompareHandlers(engine, session_log, ready), lightbox)
            with gr.Tab(S.TAB_LABEL, id="label", elem_id="tab-label"):
                labels = LabelHandlers(engine, session_log, ready=ready, camtrap=camtrap)
                annotator, agreement = label_view.build(labels, search_ui.state)
            with gr.Tab(S.TAB_HISTORY, id="history", elem_id="tab-history") as history_tab:
                history = HistoryHandlers(engine, session_log)
                history_ui = history_view.build(history, lightbox)
        history_tab.select(history.refresh, None, history_ui.sessions, api_visibility="private")
        # "More like this" in the photo view searches in the Search tab, whichever gallery the photo came from
        lightbox.more.click(search.more_like_this, [lightbox.photo_id, search_ui.state], search_ui.outputs,
                            api_visibility="private") \
            .then(lambda: (lightbox.h.close(), gr.Tabs(selected="search")), None, [lightbox.box, tabs],
                  api_visibility="private")
        app.load(search.form.taxon_choices, None, search_ui.taxon, api_visibility="private")

        def example_choices():
            try:
                found = list(examples()) if examples is not None else []
            except Exception:  # the files are being written: no examples this time
                log.exception("the example searches could not be read")
                found = []
            return gr.update(choices=found, visible=bool(found))
        app.load(example_choices, None, search_ui.examples, api_visibility="private", show_progress="hidden")
        app.load(search.form.place_map, None, search_ui.place_map, api_visibility="private", show_progress="hidden")
        camtrap_fields = [search_ui.camtrap.box, search_ui.camtrap.deployments]
        app.load(search.camtrap.offer, None, camtrap_fields, api_visibility="private", show_progress="hidden")
        app.load(banner_now, None, banner_box, api_visibility="private", show_progress="hidden")
        # a search may be the first to see photos a command-line ingest added (an event of its own: chained
        # after the search, the banner would show the search's progress timer)
        search_ui.status.change(banner_now, None, banner_box, api_visibility="private", show_progress="hidden",
                                trigger_mode="always_last", concurrency_limit=None)
        if preparation is not None and not preparation.finished:
            timer = gr.Timer(1.0)

            def poll():
                text = preparation.status()
                taxa = search.form.taxon_choices() if preparation.finished else gr.update()
                shown = banner_now() if preparation.finished else gr.update()
                offered = example_choices() if preparation.finished else gr.update()
                places = search.form.place_map() if preparation.finished else gr.update()
                offer = search.camtrap.offer() if preparation.finished else (gr.update(), gr.update())
                return (gr.update(value=text, visible=bool(text)), gr.Timer(active=not preparation.finished), taxa,
                        shown, places, offered, *offer)
            timer.tick(poll, None, [progress, timer, search_ui.taxon, banner_box, search_ui.place_map,
                                    search_ui.examples, *camtrap_fields],
                       api_visibility="private",
                       concurrency_limit=None, show_progress="hidden")
        # a person's identification of a camera-trap frame or event, for scripts (docs/reference/api.md)
        gr.api(identify.identify_api, api_name="identify", concurrency_id="label-api", concurrency_limit=1)
        app.unload(search.page_closed)
        if identity.personal:
            app.load(annotator_box(identity), None, [annotator, agreement, lightbox.who], api_visibility="private")
    return typed_api(app)


# everything the data directory holds besides the served copies
PRIVATE = ("users.txt", "ecolens.sqlite", "ecolens.sqlite-wal", "ecolens.sqlite-shm", "ecolens.sqlite-journal",
           "ecolens.sqlite.migrate.lock", "ingest.lock", "index", "cache", "logs", "exports", "media", "artefacts",
           "generated", "fieldguide", "uploads", "hub", "models")


def served_folders(settings: Any) -> list[str]:
    """The only folder whose files the app may serve: the served copies (data_dir/served: thumbnails and
    views of catalog photos, generated pictures, made by ui.photos). Originals, the database, the index and
    the model files under assets/ are never among them."""
    return [str(served_files(settings).folder)]


def blocked_folders(settings: Any) -> list[str]:
    """The data directory's private files and folders, when the data directory lies inside a folder Gradio
    serves by itself (its upload folder, its examples cache); blocked paths win over everything Gradio allows.
    Anywhere else no file route reaches them anyway, and an empty list spares every served file the checks
    (each blocked path costs each file a path resolution, which slowed label key presses enough to reorder
    them)."""
    from gradio.utils import get_upload_folder

    data = settings.path().expanduser().resolve()
    own = [Path(get_upload_folder()).resolve(), (Path.cwd() / ".gradio").resolve()]
    if not any(data == f or data.is_relative_to(f) for f in own):
        return []
    return [str(data / name) for name in PRIVATE]


ANALYTICS_EVERY = 1000  # events between two rebuilds of Gradio's monitoring summary (its default: every event)


def launch_options(settings: Any, environ=os.environ, users: Any = None, grants: Any = None,
                   logins: LoginStore | None = None) -> dict[str, Any]:
    """Gradio's launch arguments. `users` (core.people.users.Users): each person logs in with their own password;
    `grants` (storage.served_files): the record of who was handed which file of the upload folder; `logins`: where
    the logins are kept (every web process and a restart know them; ui.login_tokens), with a password or users."""
    host = settings.host or ("0.0.0.0" if environ.get("SPACE_ID") else "127.0.0.1")
    opts: dict[str, Any] = dict(server_name=host, server_port=settings.port, allowed_paths=served_folders(settings),
                                blocked_paths=blocked_folders(settings),
                                max_file_size=int(settings.max_upload_mb * 1_000_000), css=CSS, head=HEAD,
                                theme=theme(),
                                footer_links=["api"],
                                show_error=False,  # our messages are gr.Error (always shown); nothing else leaks
                                run_history=False,  # queries stay out of browser storage; no bucket routes
                                # a thread for every search the search event admits, and the other events' own
                                max_threads=search_limit(settings) + 24)
    # one browser's uploads are served to that browser only (ui.upload_guard)
    opts["app_kwargs"] = {"middleware": [Middleware(UploadGuard, grants=grants)]}
    if users is not None:
        opts["auth"] = auth_function("", users)  # each person's own name and password; wrong ones rate-limited
        opts["auth_message"] = "EcoLens: your own name and password"
    elif settings.password:
        opts["auth"] = auth_function(settings.password)  # user ecolens; wrong passwords are rate-limited
        opts["auth_message"] = "EcoLens: user ecolens"
    if logins is not None and "auth" in opts:
        # with a users file, a person taken out of it is logged out at once (their login would last login_days)
        listed = (lambda name: users.person(name) is not None) if users is not None else None
        opts["app_kwargs"]["lifespan"] = kept_logins(logins, listed)
    return opts


def api_names(app: gr.Blocks, public_only: bool = False) -> list[str]:
    """The api_names of the app's events: every one (the page's own too), or those a script may call."""
    return sorted({str(fn.api_name) for fn in app.fns.values() if getattr(fn, "api_name", None)
                   and (not public_only or getattr(fn, "api_visibility", "public") == "public")})


def launch(engine: Any, session_log: SessionLog | None = None, banner: str | Callable[[], Any] = "",
           prepare=None, examples: Callable[[], list[str]] | None = None, camtrap: Any = None,
           users: Any = None, grants: Any = None, logins: LoginStore | None = None) -> int:
    """Serve the app until interrupted; returns the exit code. Without a session log the log lives in memory
    and the page says that nothing is saved. `users`, `grants`, `logins`: as launch_options takes them."""
    own_upload_folder(engine.settings)  # before the app is built: its components read the folder then
    identity = Identity(users, oauth_enabled())
    app = build_app(engine, session_log if session_log is not None else MemorySessionLog(), banner, prepare, examples,
                    camtrap, identity)
    # Gradio rebuilds its monitoring summary (a pandas table of up to its last 10,000 events) after every event
    # by default: CPU taken from every search and label; the page shows no monitoring, so rarely is plenty
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(ANALYTICS_EVERY))
    app.queue(default_concurrency_limit=8)
    opts = launch_options(engine.settings, users=users, grants=grants, logins=logins)
    serve_in_place(opts["allowed_paths"])  # the served copies: no per-file hashing and copying on the event loop
    # an unknown endpoint or a body that is no call: the API's error shape, not a bare 500 (ui.api_guard)
    opts["app_kwargs"]["middleware"].append(Middleware(ApiGuard, names=api_names(app),
                                                       public=api_names(app, public_only=True)))
    app.launch(**opts)
    return 0
