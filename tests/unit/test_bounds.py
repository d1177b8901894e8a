"""core.contracts.bounds: example photos checked before decoding and decoded reduced, backend replies bounded, numbers
and free text checked with one message for the CLI and the web app, label ids checked against the catalog."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from core.backends import openai_common as oc
from core.contracts import bounds
from core.contracts.errors import BackendError, InputError, NotFoundError
from core.contracts.search_request import SearchRequest
from core.imageio import example_photo
from core.sessions.memory_log import MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine
from ui.label_handlers import LabelHandlers

ROOT = Path(__file__).resolve().parents[2]


def test_a_huge_png_is_refused_from_its_header_before_any_pixel_is_decoded(tmp_path):
    path = tmp_path / "wide.png"
    Image.new("L", (6000, 5000)).save(path)  # 30 Mpx, a few kB on disk
    with pytest.raises(InputError) as err:
        example_photo(path, max_mb=20)
    assert "wide.png has 6000x5000 pixels" in err.value.message and str(tmp_path) not in str(err.value)
    assert "megapixels" in err.value.hint


def test_a_79_megapixel_jpeg_is_decoded_reduced_in_little_memory(tmp_path):
    """Measured in a fresh process (its own peak resident memory, VmHWM): reading the 1 MB, 79-megapixel
    example stays far below the 900 MB a full decode to RGB takes (the issue saw 800 MB per upload)."""
    path = tmp_path / "big.jpg"
    Image.new("L", (9000, 8800), 90).save(path, quality=80)
    probe = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from core.imageio import example_photo
        image = example_photo({str(path)!r}, max_mb=20)
        peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
        print(max(image.size), peak // 1024)
        """)
    side, peak_mb = map(int, subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                                            text=True).stdout.split())
    assert side == bounds.EXAMPLE_SIDE and peak_mb < 150, peak_mb


@pytest.mark.parametrize("name,content,words", [
    ("notes.txt", b"hello", "not a photo EcoLens can read"),
    ("fake.jpg", b"\x00" * 100, "not a readable image"),
    ("half.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 30, "The photo half.png"),
])
def test_example_photo_messages_name_the_file_only(tmp_path, name, content, words):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as err:
        example_photo(path, max_mb=20)
    assert words in err.value.message and str(tmp_path) not in str(err.value)


def test_example_photo_size_limit_and_count(tmp_path):
    path = tmp_path / "p.jpg"
    Image.new("RGB", (600, 400), (9, 9, 9)).save(path, quality=100)
    with pytest.raises(InputError, match="MB allowed"):
        example_photo(path, max_mb=0.001)
    assert example_photo(path, max_mb=1).size == (600, 400)
    with pytest.raises(InputError, match="more than the 8"):
        SearchRequest("x", example_ids=list(range(1, 10))).validate()


def test_a_reply_longer_than_the_bound_is_not_an_answer():
    reply = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="Yes " + "x" * 300_000))])
    with pytest.raises(BackendError, match="300,004 characters"):
        oc.message_text(reply)
    ok = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=" Yes - red "))])
    assert oc.message_text(ok) == "Yes - red"


@pytest.mark.parametrize("value,words", [(1e9, "outside 1 to 1000"), ("1e9", "outside"), (float("nan"), "whole"),
                                         (2.9, "whole"), (True, "whole"), ("abc", "whole"), (10**30, "outside")])
def test_numbers_get_one_message_whoever_sends_them(value, words):
    with pytest.raises(InputError, match=words):
        SearchRequest("frogs", k=value).validate()


def test_free_text_with_broken_characters_is_refused():
    with pytest.raises(InputError, match="broken text"):
        bounds.text("taxon", "Rana\udcff")
    with pytest.raises(InputError, match="not valid UTF-8"):
        bounds.text("taxon", b"\xff\xfe")
    assert bounds.text("taxon", "Ränä") == "Ränä"


@pytest.mark.parametrize("photo_id,error", [(10**30, InputError), ("abc", InputError), (0, InputError),
                                            (999, NotFoundError), (float("nan"), InputError)])
def test_the_label_endpoint_rejects_photo_ids_outside_the_catalog(tmp_path, photo_id, error):
    import gradio as gr

    log = MemorySessionLog()
    h = LabelHandlers(FakeEngine(tmp_path), log)
    with pytest.raises(gr.Error):
        h.label_photo("frogs", photo_id, 1, "ada", 1.0)
    with pytest.raises(error):
        h._known_photo(photo_id)
    assert log.labels() == [] and log.sessions() == []
    assert h.label_photo("frogs", 3, 1, "ada", 1.0) > 0
    for bad in ({"label": 7}, {"seconds": float("nan")}, {"annotator": "\udc80"}):
        args = {"label": 1, "seconds": 1.0, "annotator": "ada", **bad}
        with pytest.raises(gr.Error):
            h.label_photo("frogs", 3, args["label"], args["annotator"], args["seconds"])
    assert len(log.labels()) == 1
