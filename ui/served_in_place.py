"""The served copies (data_dir/served) go to the page where they lie, with one cheap check per file.

Before a page update is sent, Gradio 6 looks at every file in it on the web server's one event loop: is it in
a static folder (the file's path and each static folder resolved, link by link, for each of Gradio's own icon
folders first), and if not, is it in an allowed folder (more resolutions), then a SHA-256 of the whole file
and a copy into Gradio's cache. A result page has 20 photos: with bench/load.py and py-spy that was 42% of the
loop's busy time under 20 sessions, and still 44% of a Fast search's loop time with the served folder made
static, because every static folder is resolved again for every file.

The served folder holds only copies made for the page (core.served: thumbnails, views, generated pictures;
never originals, uploads or the database), and it is already the one folder the file route may serve
(ui.server.served_folders). So it is made a static folder, and a path that EcoLens wrote there (absolute,
under the folder, no '..', a regular file and no link) is recognised as such by a string test and two
stat calls. Anything else goes through Gradio's own check unchanged, and the file route still checks every
request for a file against the allowed and blocked folders. Gradio keeps one list of static folders per
interpreter: call `serve_in_place` from the process that serves (ui.server.launch), not from build_app."""
from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path
from typing import Any

import gradio as gr
from gradio import utils as gradio_utils
from gradio.data_classes import FileData

log = logging.getLogger(__name__)
_ORIGINAL = gradio_utils.is_static_file
_ROOTS: tuple[str, ...] = ()
_LOCK = threading.Lock()


def _is_ours(path: str) -> bool:
    if ".." in path or not path.startswith(_ROOTS):
        return False
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode)


def _is_static_file(file_path: Any) -> bool:
    path = file_path.path if isinstance(file_path, FileData) else file_path
    if isinstance(path, (str, Path)) and _ROOTS and _is_ours(str(path)):
        return True
    return _ORIGINAL(file_path)


def serve_in_place(folders: list[str]) -> None:
    """Make `folders` (absolute) static for Gradio, with the cheap check for files under them (idempotent)."""
    global _ROOTS
    # as written by core.served (absolute) and resolved: a link on the way to the folder maps the whole folder
    roots = sorted({str(Path(f).absolute()) for f in folders} | {str(Path(f).resolve()) for f in folders})
    with _LOCK:
        new = [r for r in roots if r + os.sep not in _ROOTS]
        if new:
            gr.set_static_paths(new)
            _ROOTS = _ROOTS + tuple(r + os.sep for r in new)
        gradio_utils.is_static_file = _is_static_file
    log.info("served copies go to the page in place from %s", ", ".join(roots))


def served_in_place(path: str) -> bool:
    """Whether a file would go to the page in place (for tests and the log)."""
    return _is_static_file(path)
