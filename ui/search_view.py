"""Search view layout and event wiring: query, presets, advanced knobs, filters (taxon names from the catalog,
calendar dates, months, place, licence), results gallery (a click opens the photo view), the pictures searched
with (the user's own example photo first), explanation panel, more like this, refine with labels, answer with
evidence, and the JSON the API returns."""
from __future__ import annotations

import json
from types import SimpleNamespace

import gradio as gr

from core.contracts import limits
from core.search.presets import PRESET_NAMES
from ui import camtrap_form
from ui import strings as S
from ui.forms import example_photo_input
from ui.search_handlers import SearchHandlers, new_state

# Gradio's dropdown has no placeholder of its own: the page writes one into the taxon box's input (again
# whenever Gradio draws the box anew)
TAXON_PLACEHOLDER_JS = """
<script>
(() => {
  const text = %s;
  const put = () => { const i = document.querySelector('#filter-taxon input');
    if (i && i.placeholder !== text) i.placeholder = text; };
  new MutationObserver(put).observe(document.documentElement, {childList: true, subtree: true});
  document.addEventListener('DOMContentLoaded', put);
})();
</script>
""" % json.dumps(S.TAXON_PLACEHOLDER)


PLAIN_SEARCHES = 16  # places of the search event that costly searches can never take


def search_limit(settings) -> int:
    """Searches the search event runs at once: every costly search the engine admits (running or waiting for a
    slot; one more is refused there) plus PLAIN_SEARCHES, so a burst of costly searches never queues a plain
    one behind them in the web server."""
    return settings.max_heavy_searches + settings.max_waiting_heavy + PLAIN_SEARCHES


# a citation in the answer ([#3]) opens that photo of the results, as a click on its tile does
CITE_JS = """
<script>
document.addEventListener('click', (ev) => {
  const a = ev.target && ev.target.closest && ev.target.closest('a.ecolens-cite');
  if (!a) return;
  ev.preventDefault();
  const tiles = document.querySelectorAll('#search-gallery .thumbnail-item');
  const rank = parseInt((a.getAttribute('href') || '').replace('#photo-', ''), 10);
  const tile = tiles[rank - 1];
  if (tile) { tile.scrollIntoView({block: 'nearest'}); tile.click(); }
}, true);
</script>
"""


def drawn_buttons(state: dict | None):
    """'Draw new pictures' and 'Drop the selected picture' only for a search that drew pictures."""
    vis = ((state or {}).get("stages") or {}).get("visret") or {}
    return gr.update(visible=bool(vis.get("visualizations")))


def _picked(evt: gr.SelectData):
    """The example search picked in the menu, for the query box."""
    return evt.value or gr.update()


def build(h: SearchHandlers, lightbox) -> SimpleNamespace:
    """Lay out the search tab inside the current Blocks. Returns its state (shared with Label), the taxon box
    (its choices come from the catalog on page load) and the outputs a search writes."""
    s = h.settings
    state = gr.State(new_state())
    with gr.Row():
        query = gr.Textbox(label=S.QUERY, placeholder=S.QUERY_PLACEHOLDER, elem_id="search-query", scale=5,
                           max_lines=3)
        preset = gr.Radio(list(PRESET_NAMES), value="Fast", label=S.PRESET_LABEL, elem_id="search-preset",
                          info=" · ".join(S.PRESETS.values()), scale=4)
        with gr.Column(scale=1, min_width=120):
            go = gr.Button(S.SEARCH, variant="primary", elem_id="search-button")
            stop = gr.Button(S.STOP, variant="stop", elem_id="search-stop", size="sm")
    with gr.Row():
        suggestion = gr.Button("", visible=False, elem_id="search-taxon-suggestion", size="sm", scale=0)
        suggested = gr.State("")
        # offered beside the query while it is a question (SearchForm.offer_answer); the same input as the
        # Advanced settings' box, so scripts still send it in its place
        answer = gr.Checkbox(False, label=S.ASK_ANSWER, elem_id="search-answer", visible=False, scale=0,
                             min_width=320)
        # a hub corpus's benchmark queries (filled when the page loads and once the collection is ready)
        examples = gr.Dropdown(choices=[], value=None, label=S.EXAMPLE_SEARCHES, elem_id="search-examples",
                               visible=False, interactive=True, scale=2)
    with gr.Accordion(S.ADVANCED, open=False, elem_id="search-advanced"):
        with gr.Row():
            k = gr.Slider(1, limits.MAX_K, value=s.k, step=1, label=S.K, elem_id="search-k")
            m = gr.Slider(1, limits.MAX_M, value=s.visret_m, step=1, label=S.VISRET_M, elem_id="search-m")
            rerank_k = gr.Slider(limits.MIN_RERANK_K, limits.MAX_RERANK_K, value=s.rerank_k, step=1, label=S.RERANK_K,
                                 elem_id="search-rerank-k")
            rerank_mode = gr.Dropdown(S.RERANK_MODES, value="full", label=S.RERANK_MODE, elem_id="search-rerank-mode",
                                      scale=2)
        # the upload reaches the handler unopened; core.contracts.bounds checks it
        example = example_photo_input(label=S.EXAMPLE_PHOTO, elem_id="search-example", height=160,
                                      sources=["upload", "clipboard"])
    with gr.Accordion(S.FILTERS, open=False, elem_id="search-filters"):
        with gr.Row():
            # empty means any taxon: the box starts empty, with a placeholder (TAXON_PLACEHOLDER_JS) saying so
            taxon = gr.Dropdown([], value=None, label=S.TAXON, elem_id="filter-taxon",
                                allow_custom_value=True, filterable=True, scale=2)
            date_from = gr.DateTime(None, include_time=False, type="string", label=S.DATE_FROM,
                                    elem_id="filter-date-from")
            date_to = gr.DateTime(None, include_time=False, type="string", label=S.DATE_TO, elem_id="filter-date-to")
        with gr.Row():
            months = gr.CheckboxGroup(S.MONTH_NAMES, label=S.MONTHS, elem_id="filter-months")
            bbox = gr.Textbox(label=S.BBOX, elem_id="filter-bbox")
            license_ = gr.Textbox(label=S.LICENSE, elem_id="filter-license")
        # where the photos are, and the place box drawn on it (ui.place_map; filled on page load)
        place_map = gr.HTML("", elem_id="filter-map", label=S.MAP_LABEL)
        # shown on page load when the catalog has camera-trap deployments (ui.camtrap_form)
        camtrap = camtrap_form.build()
    status = gr.Markdown(S.STATUS_IDLE, elem_id="search-status", label=S.STATUS)  # labels name the API outputs
    with gr.Accordion(S.DETAILS, open=False, elem_id="search-details", visible=False) as details_box:
        details = gr.Markdown("", elem_id="search-timings", label=S.DETAILS)
    notices = gr.Markdown("", elem_id="search-notices", label=S.NOTICES)
    with gr.Row(elem_id="search-results-row"):
        with gr.Column(scale=3, min_width=300):
            scale = gr.Markdown("", elem_id="search-scale", label=S.SCALE)
            gallery = gr.Gallery(label=S.RESULTS, elem_id="search-gallery", columns=5, height=560,
                                 allow_preview=False, object_fit="cover", buttons=["download_all"])
            with gr.Row():
                more = gr.Button(S.MORE_LIKE_THIS, elem_id="search-more-like-this", size="sm")
                refine = gr.Button(S.USE_LABELS, elem_id="search-refine", size="sm")
        with gr.Column(scale=2, min_width=280):
            explanation = gr.HTML(S.SELECT_HINT, label=S.EXPLANATION, elem_id="search-explanation")
            evidence = gr.Markdown("", label=S.EVIDENCE, elem_id="search-evidence")
    with gr.Row(elem_id="search-pictures-row"):  # hidden by the page's CSS while it holds no picture
        visualizations = gr.Gallery(label=S.VISUALIZATIONS, elem_id="search-visualizations", columns=6,
                                    height=260, allow_preview=False, object_fit="contain", scale=5,
                                    buttons=["download"])
        # shown only when the search drew pictures (an example photo alone cannot be redrawn or dropped)
        with gr.Column(scale=1, min_width=160, visible=False, elem_id="search-picture-buttons") as picture_buttons:
            regenerate = gr.Button(S.REGENERATE, elem_id="search-regenerate", size="sm")
            drop = gr.Button(S.DROP_VIS, elem_id="search-drop-visualization", size="sm")
    result = gr.JSON(visible=False, elem_id="search-json", label=S.RESULT_JSON)
    selected = gr.Number(None, visible=False, elem_id="search-selected-id", precision=0, label="photo id")
    outputs = [gallery, status, notices, scale, visualizations, evidence, explanation, details, result, state]
    inputs = [query, preset, k, m, rerank_k, rerank_mode, answer, taxon, date_from, date_to, months, bbox,
              license_, example, state, *camtrap.fields]
    # every search may run while another one from this page is still running: the handler cancels the older
    # one (trigger_mode "multiple"); expensive stages wait for engine slots, so the group limit is generous
    run = dict(concurrency_id="search", concurrency_limit=search_limit(s), trigger_mode="multiple",
               show_progress="minimal")
    searches = [go.click(h.search, inputs, outputs, api_name="search", **run),
                query.submit(h.search, inputs, outputs, api_visibility="private", **run),
                regenerate.click(h.regenerate, inputs, outputs, api_visibility="private", **run),
                drop.click(h.drop_visualization, inputs, outputs, api_visibility="private", **run)]
    searches.append(suggestion.click(h.form.take_taxon, [suggested], [taxon, suggestion], api_visibility="private")
                    .then(h.search, inputs, outputs, api_visibility="private", **run))
    # picking an example search puts it in the query box and runs it (on select: Gradio 6's Dropdown sends its
    # input event twice for one pick, and the second search would stop the first)
    searches.append(examples.select(_picked, None, query, api_visibility="private")
                    .then(h.search, inputs, outputs, api_visibility="private", **run))
    more.click(h.more_like_this, [selected, state], outputs, api_name="more_like_this")
    refine.click(h.refine_with_labels, [state], outputs, api_name="refine_with_labels")
    stop.click(h.stop, None, status, cancels=searches, api_name="stop", concurrency_limit=None)
    query.change(h.form.suggest_taxon, [query, taxon], [suggestion, suggested], api_visibility="private",
                 trigger_mode="always_last", show_progress="hidden", concurrency_limit=None)
    query.change(h.form.offer_answer, query, answer, api_visibility="private", trigger_mode="always_last",
                 show_progress="hidden", concurrency_limit=None)
    visualizations.select(h.select_visualization, [state], [state], api_visibility="private")
    gallery.select(h.select, [state], [explanation, selected], api_visibility="private", show_progress="hidden")
    lightbox.opens_from(gallery, state)
    # "Details" is offered once there are details to show (an event of its own: chained after a search, its
    # output would show the search's progress timer)
    status.change(lambda text: gr.update(visible=bool(text)), details, details_box, api_visibility="private",
                  show_progress="hidden", trigger_mode="always_last", concurrency_limit=None)
    visualizations.change(drawn_buttons, state, picture_buttons, api_visibility="private", show_progress="hidden",
                          trigger_mode="always_last", concurrency_limit=None)
    return SimpleNamespace(state=state, taxon=taxon, outputs=outputs, status=status, place_map=place_map,
                           examples=examples, camtrap=camtrap)
