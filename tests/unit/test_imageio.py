import io

import numpy as np
import pytest
from PIL import Image

from core.contracts.errors import InputError
from core.imageio import decode_image, to_rgb
from tests.photos import colour_image, write_broken


def _bytes(img: Image.Image, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


@pytest.mark.parametrize("mode", ["CMYK", "P", "L", "RGBA", "LA"])
def test_modes_become_rgb(mode):
    img = colour_image(1).convert(mode)
    fmt = "JPEG" if mode == "CMYK" else "PNG"
    out = decode_image(_bytes(img, fmt))
    assert out.mode == "RGB" and out.size == (64, 64)


def test_sixteen_bit_is_scaled_not_clipped():
    arr = np.full((8, 8), 40000, dtype=np.uint16)
    out = decode_image(_bytes(Image.fromarray(arr), "PNG"))
    value = np.asarray(out)[0, 0, 0]
    assert 150 < value < 160  # 40000/65535*255 = 155.6, not saturated at 255


def test_exif_orientation_is_applied():
    img = Image.new("RGB", (40, 20), (200, 10, 10))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees when displayed
    out = decode_image(_bytes(img, "JPEG", exif=exif.tobytes()))
    assert out.size == (20, 40)


def test_animated_gif_gives_first_frame():
    frames = [Image.new("RGB", (10, 10), (255, 0, 0)), Image.new("RGB", (10, 10), (0, 0, 255))]
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:])
    out = to_rgb(Image.open(io.BytesIO(buf.getvalue())))
    r, g, b = np.asarray(out)[5, 5]
    assert r > 200 and b < 50


@pytest.mark.parametrize("kind,words", [("empty", "empty"), ("truncated", "damaged or truncated"),
                                        ("not_image", "not a readable image"), ("huge", "over the limit"),
                                        ("garbage", "not a readable image")])
def test_broken_files_explain_themselves(tmp_path, kind, words):
    path = write_broken(tmp_path / "bad", kind)
    with pytest.raises(InputError) as err:
        decode_image(path.read_bytes(), name=str(path), max_pixels=4_000_000)
    assert words in err.value.message and str(path) in err.value.message
