"""Gradio's API description of a component, worked out once per data model instead of at every page update.

Every time a handler leaves an output as it is (gr.skip()) or changes one of its properties (gr.update), Gradio
6 builds a new component and its page config, and with it the component's API description: three pydantic JSON
schemas of its data model (api_info, as input, as output). For a gallery that is some 25 ms of the web server's
event loop (measured with bench/load.py and py-spy: a fifth of the loop's busy time under 20 sessions), the
same loop that takes in and answers every other search. The description depends only on the data model (a
class attribute) for every component that keeps Gradio's own `Component.api_info`, so it is remembered per data
model, and each new component starts with it, as Gradio's own per-component memo would after the first call."""
from __future__ import annotations

import logging
import threading
from typing import Any

from gradio.components.base import Component

log = logging.getLogger(__name__)
_ORIGINAL = Component.api_info
_SCHEMAS: dict[type, dict[str, Any]] = {}
_LOCK = threading.Lock()


def _api_info(self: Component) -> dict[str, Any]:
    model = getattr(self, "data_model", None)
    if getattr(self, "_api_info_cache", None) is None and isinstance(model, type):
        known = _SCHEMAS.get(model)
        if known is None:
            known = _ORIGINAL(self)  # Gradio's own: the schema, kept on this component too
            with _LOCK:
                _SCHEMAS.setdefault(model, known)
        self._api_info_cache = known
    return _ORIGINAL(self)


def remember_schemas() -> None:
    """Install the memo (idempotent). Components that define their own api_info are not affected."""
    if Component.api_info is not _api_info:
        Component.api_info = _api_info
        log.debug("component API descriptions are remembered per data model")


def schemas_remembered() -> int:
    """How many data models' descriptions are remembered (for tests and the log)."""
    return len(_SCHEMAS)
