"""ui.schemas: a component's API description is worked out once per data model, not at every gr.skip/gr.update
of it (each builds a new component), and it is the description Gradio itself gives."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import gradio as gr
from gradio.state_holder import SessionState

from ui import schemas


def test_a_new_gallery_reuses_the_description_gradio_gives():
    schemas.remember_schemas()
    schemas.remember_schemas()  # idempotent
    first, second = gr.Gallery(), gr.Gallery(columns=3)
    assert first.api_info() is second.api_info()  # the second one did not build its own
    fresh = gr.Gallery()
    fresh._api_info_cache = None
    assert schemas._ORIGINAL(fresh) == first.api_info()  # what Gradio alone says for a gallery
    assert gr.Gallery.api_info is schemas._api_info and schemas.schemas_remembered() >= 1


def test_components_with_their_own_description_keep_it():
    schemas.remember_schemas()
    a = gr.Dropdown(choices=["x", "y"])
    b = gr.Dropdown(choices=["z"])
    assert a.api_info() != b.api_info()  # per component (its choices), as Gradio has it


def test_skipping_a_gallery_output_keeps_its_page_config():
    """The page config Gradio keeps for a session after a handler skipped a gallery equals the one built by
    Gradio alone (the description of a new gallery comes from the memo)."""
    schemas.remember_schemas()
    with gr.Blocks() as demo:
        gallery, text = gr.Gallery(columns=5), gr.Markdown()
        gr.Button().click(lambda: None, None, [gallery, text])
    fn = list(demo.fns.values())[0]
    state = SessionState(demo)
    # a thread of its own: in the full suite the browser tests' Playwright leaves an event loop running here
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, demo.postprocess_data(fn, [gr.skip(), "status"], state)).result()
    config = state.config_values[gallery._id]
    assert config["api_info"] == schemas._ORIGINAL(gr.Gallery(columns=5)) and config["props"]["columns"] == 5
