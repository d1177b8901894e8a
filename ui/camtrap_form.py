"""The search form's camera-trap filters (deployment, time of day, empty frames, one result per event,
detection category, species identified, identified by whom), shown only when the catalog has camera-trap
data; they reach the search as the API's /search parameters (comma-separated text, read by
core.camtrap.filters as the command line's flags are).

CamtrapPage wraps the page's one door to camera-trap data (core.camtrap.desk.CamtrapDesk, handed in by
app.py): which deployments there are, a frame's facts, the boxes the photo view draws. A catalog
without camera-trap data (or no store) answers with nothing, so its page stays as it was."""
from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any, Sequence

import gradio as gr

from core.contracts.camtrap import CATEGORIES, CLASSIFIED, TIMES_OF_DAY
from ui import camtrap_present
from ui import strings_camtrap as SC

log = logging.getLogger(__name__)


def logged_in(request: Any) -> bool:
    """Whether the person on the page is logged in: the app's password (Gradio's username), or Hugging Face on a
    Space (the OAuth session Gradio keeps; a server without sessions has none)."""
    if getattr(request, "username", None):
        return True
    try:
        session = getattr(request, "session", None)  # a dict, or Gradio's Obj standing for one
        return session is not None and "oauth_info" in session and bool(session["oauth_info"])
    except Exception:  # no session middleware: nobody logged in through Hugging Face
        return False


class CamtrapPage:
    def __init__(self, desk: Any | None):
        """`desk`: core.camtrap.desk.CamtrapDesk (app.py hands it in) or None (no camera-trap data model)."""
        self.desk = desk

    def deployment_keys(self) -> list[str]:
        if self.desk is None:
            return []
        try:
            return self.desk.deployment_keys()
        except Exception:  # the catalog is being built or upgraded: no camera-trap filters this time
            log.exception("the deployments could not be read from the catalog")
            return []

    def offer(self):
        """(filters box, deployments box) on page load: shown with the catalog's deployments, hidden without;
        each deployment offered by its key and its place's name, chosen by its key."""
        if self.desk is None:
            return gr.update(visible=False), gr.update(choices=[])
        try:
            choices = self.desk.deployment_choices()
        except Exception:  # the catalog is being built or upgraded: no camera-trap filters this time
            log.exception("the deployments could not be read from the catalog")
            choices = []
        return gr.update(visible=bool(choices)), gr.update(choices=choices)

    def facts(self, photo_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        if self.desk is None or not photo_ids:
            return {}
        try:
            return self.desk.facts([int(i) for i in photo_ids])
        except Exception:  # the photo is still shown, without its camera-trap lines
            log.exception("camera-trap facts could not be read")
            return {}

    def enrich(self, hits: list[dict[str, Any]], by_event: bool = False) -> list[dict[str, Any]]:
        """The hits with the camera-trap fields the search JSON names (deployment_id, event_id, timestamp,
        detections, and with `by_event` event_frames / event_frame_ids) where the engine did not give them,
        and, for a frame the catalog names no species for, `identified`: the species someone identified on it
        or its event (the page's caption leads with it: ui.present.name_of). Read once per search: a hit that
        has `identified` (even empty) is not read again."""
        wanted = ("deployment_id", "event_frames") if by_event else ("deployment_id",)
        unnamed = [h for h in hits if "identified" not in h and not (h.get("common_name") or h.get("taxon"))
                   and camtrap_present.is_camtrap(h)]
        missing = [h for h in hits if any(k not in h for k in wanted)]
        if self.desk is None or not (unnamed or missing):
            return hits  # the engine gave the fields (core.camtrap.hit_facts) and every frame is named
        known = self.facts(sorted({int(h["id"]) for h in unnamed + missing}))
        out = []
        for h in hits:
            f = known.get(int(h["id"]))
            if f is None:
                out.append(h)
                continue
            more = {k: f[k] for k in ("deployment_id", "event_id", "timestamp", "detections") if k not in h}
            if by_event:
                more.update({k: f[k] for k in ("event_frames", "event_frame_ids") if k not in h})
            if "identified" not in h and not (h.get("common_name") or h.get("taxon")):
                more["identified"] = camtrap_present.species_shown(f)
            out.append({**h, **more})
        return out

    def view_edit(self, facts: dict[str, Any] | None) -> Any:
        """What the photo view draws on a frame: every detection at or above the threshold, labelled
        ('animal 98%'); None for a plain photo or a frame without boxes."""
        if self.desk is None or not facts or not camtrap_present.is_camtrap(facts):
            return None
        shown = self.desk.boxes_worth_showing(facts)
        try:
            return self.desk.picture_edit(shown, [camtrap_present.box_label(d) for d in shown])
        except Exception:
            log.exception("the boxes of a camera-trap frame could not be drawn")
            return None


# a visible choice writes its values into the API's text parameter in the browser (no round trip, so a search
# pressed at once already sends them)
JOIN_JS = "(v) => Array.isArray(v) ? v.join(',') : (v || '')"


def build() -> SimpleNamespace:
    """The camera-trap filter fields (inside the Filters box; hidden until page load finds deployments).
    Returns the box, the deployments menu (filled on page load) and the search's inputs in the API's order:
    deployment, time_of_day, include_empty, by_event, category, species, classified. The lists and the
    "identified by" choice reach the API as text (comma-separated, as the command line takes them): hidden
    text boxes that the visible choices fill."""
    with gr.Group(visible=False, elem_id="filter-camtrap") as box:
        gr.Markdown(f"**{SC.CT_FILTERS}**", elem_id="filter-camtrap-title")
        with gr.Row():
            deployments = gr.Dropdown([], value=[], multiselect=True, label=SC.CT_DEPLOYMENTS,
                                      elem_id="filter-deployments", scale=2)
            times = gr.CheckboxGroup([(SC.CT_TIME_NAMES[t], t) for t in TIMES_OF_DAY], label=SC.CT_TIMES,
                                     elem_id="filter-times", scale=2)
        with gr.Row():
            categories = gr.CheckboxGroup([(SC.CT_CATEGORY_NAMES[c], c) for c in CATEGORIES], label=SC.CT_CATEGORIES,
                                          elem_id="filter-categories")
            species = gr.Textbox(label=SC.CT_SPECIES, elem_id="filter-species")
            classified = gr.Radio([(SC.CT_CLASSIFIED_NAMES[c], c) for c in CLASSIFIED], value="",
                                  label=SC.CT_CLASSIFIED, elem_id="filter-classified")
        with gr.Row():
            include_empty = gr.Checkbox(False, label=SC.CT_INCLUDE_EMPTY, elem_id="filter-include-empty")
            by_event = gr.Checkbox(False, label=SC.CT_BY_EVENT, elem_id="filter-by-event")
    texts = {name: gr.Textbox("", visible=False, label=label, elem_id=f"filter-{name}-text")
             for name, label in (("deployment", SC.CT_DEPLOYMENTS), ("time-of-day", SC.CT_TIMES),
                                 ("category", SC.CT_CATEGORIES), ("classified", SC.CT_CLASSIFIED))}
    for shown, text in ((deployments, "deployment"), (times, "time-of-day"), (categories, "category"),
                        (classified, "classified")):
        shown.change(None, shown, texts[text], js=JOIN_JS, api_visibility="private", queue=False)
    fields = [texts["deployment"], texts["time-of-day"], include_empty, by_event, texts["category"], species,
              texts["classified"]]
    return SimpleNamespace(box=box, deployments=deployments, fields=fields)
