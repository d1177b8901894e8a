"""How the search view shows a search's results: the whole page (gallery, notices, score scale, pictures,
evidence, explanation, result JSON), the lighter progress updates while it runs, and the photo each page selected,
highlighted where it moved to. A mixin of ui.search_handlers.SearchHandlers, using its `photos` (ui.photos),
`camtrap` (ui.camtrap_form.CamtrapPage), `selected` and `highlighted`."""
from __future__ import annotations

from typing import Any

import gradio as gr

from ui import evidence, present
from ui import strings as S
from ui.camtrap_form import CamtrapPage
from ui.forms import web_notices
from ui.photos import PhotoFiles


class SearchOutputs:
    photos: PhotoFiles
    camtrap: CamtrapPage
    selected: dict[str, dict[str, Any]]
    highlighted: set[str]

    def explanation(self, state: dict[str, Any], key: str) -> str:
        """The explanation of the photo this page selected: as it is in the results on screen now (a later
        stage may have added its badges), or, if a later stage dropped it, as it was when clicked."""
        picked = self.selected.get(key)
        if picked is None:
            return S.SELECT_HINT
        stages = state.get("stages") or {}
        at = self._picked_at(state, key)
        hit = None if at is None else state["hits"][at]
        scale = state.get("scale")
        if hit is None:
            return f"<p class='ecolens-gone'>{S.SELECTED_GONE}</p>" + present.explanation_html(
                picked, stages, scale=scale, picture_url=self.photos.picture_url)
        return present.explanation_html(hit, stages, scale=scale, picture_url=self.photos.picture_url)

    def outputs(self, state: dict[str, Any], status: str, key: str = "api", details: str = ""):
        """(gallery, status, notices, score scale, pictures, evidence, explanation, details, result JSON, state):
        the view's outputs, plain values (so scripts get files and text, not page updates). `status` is the one
        short line (ui.status), `details` the time each step took. Photos and pictures are served copies
        (ui.photos); photos that cannot be shown are named in the notices; the explanation stays on the photo
        this page selected (`key`)."""
        stages = state.get("stages") or {}
        scale = state.get("scale") or present.scale_of(stages)
        if state.get("camtrap"):  # the camera-trap fields the engine did not give (place, time, event, boxes)
            state["hits"] = self.camtrap.enrich(state["hits"], bool(state.get("by_event")))
        gallery, missing = self.photos.gallery(state["hits"], stages, scale, bool(state.get("logged_in")))
        notices = web_notices(list(state.get("notices") or []) + list(missing))
        pictures = self._pictures(state)
        scale_md = present.scale_line(scale, stages) if state["hits"] else ""
        header = present.cover_header(state["hits"], stages)
        scale_md = "\n\n".join(t for t in (scale_md, header) if t)
        return (self._highlight(gallery, state, key), status, present.notices_md(notices), scale_md, pictures,
                evidence.evidence_md(stages, state["hits"]), self.explanation(state, key), details,
                present.results_json(state, notices, status), state)

    def _picked_at(self, state: dict[str, Any], key: str) -> int | None:
        """Where the photo this page picked is in the results on screen now (None: none picked, or gone)."""
        picked = self.selected.get(key)
        if picked is None:
            return None
        return next((i for i, h in enumerate(state.get("hits") or []) if int(h["id"]) == int(picked["id"])), None)

    def _highlight(self, gallery: list, state: dict[str, Any], key: str) -> Any:
        """The gallery as sent to a page with a photo highlighted: the highlight follows that photo to its place
        in the new ranking, or goes when the photo has left it or a new search began (a plain value
        otherwise)."""
        if key not in self.highlighted:
            return gallery
        at = self._picked_at(state, key)
        if at is None:
            self.highlighted.discard(key)
        # a component, not gr.update(): Gradio drops an update's None, which is what clears a highlight
        return gr.Gallery(value=gallery, selected_index=at)

    def progress(self, state: dict[str, Any], status: str, details: str, pictures: bool = False):
        """A progress update while a search runs: the status line, the details and the notices (with
        `pictures`, the pictures searched with too); everything else is left as it is on the page (gr.skip),
        which spares the web server the photos' files (each one's path checked and copied) at every step."""
        skip = gr.skip()
        notices = present.notices_md(web_notices(list(state.get("notices") or [])))
        shown = self._pictures(state) if pictures else skip
        return (skip, status, notices, skip, shown, skip, skip, details, skip, state)

    def _pictures(self, state: dict[str, Any]) -> list[tuple[str, str]]:
        """The pictures strip: the example photo searched with (if any), then the stages' pictures (served
        copies)."""
        shown = self.photos.pictures(present.visualization_items(state.get("stages") or {}))
        return [(state["example"], S.YOUR_EXAMPLE)] + shown if state.get("example") else shown
