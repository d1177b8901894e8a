"""ui.served_in_place: the served copies go to the page where they lie (no hash, no copy into Gradio's cache),
recognised by a cheap check that accepts only regular files EcoLens wrote under the served folder; anything
else still takes Gradio's own path."""
from __future__ import annotations

import os

import gradio as gr
from gradio import processing_utils

from ui import served_in_place as sip


def _gallery_page(paths):
    """What Gradio sends the page for a gallery of `paths` (postprocess, then its file handling)."""
    gallery = gr.Gallery()
    data = gallery.postprocess([(p, "") for p in paths])
    return processing_utils.move_files_to_cache(data, gallery, postprocess=True)


def test_served_copies_are_sent_in_place_and_nothing_else_is(tmp_path):
    served = tmp_path / "data" / "served"
    (served / "thumb").mkdir(parents=True)
    photo = served / "thumb" / "a.jpg"
    photo.write_bytes(b"\xff\xd8 not really a jpeg")
    outside = tmp_path / "private.jpg"
    outside.write_bytes(b"x")
    link = served / "thumb" / "link.jpg"
    os.symlink(outside, link)
    sip.serve_in_place([str(served)])
    sip.serve_in_place([str(served)])  # idempotent
    assert sip.served_in_place(str(photo))
    assert not sip.served_in_place(str(outside))  # not under the folder
    assert not sip.served_in_place(str(link))  # a link, even under the folder
    assert not sip.served_in_place(str(served / "thumb" / ".." / ".." / ".." / "private.jpg"))
    assert not sip.served_in_place(str(served / "thumb" / "gone.jpg"))  # no such file
    page = _gallery_page([str(photo)])
    sent = page["root"][0]["image"] if isinstance(page, dict) and "root" in page else page[0]["image"]
    assert sent["path"] == str(photo)  # not copied into Gradio's cache
    assert sent["url"].endswith("file=" + str(photo))
