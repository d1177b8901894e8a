"""A photo matched through a detection: the box is drawn on its served copies (gallery and photo view) and the
page says so; other photos are served as before."""
from PIL import Image

from core.contracts.records import Photo
from core.served import ServedFiles
from ui import present

BOX = {"bbox": [0.5, 0.25, 0.25, 0.5], "category": "animal", "conf": 0.93, "model": "MDV5A"}


def served(tmp_path):
    src = tmp_path / "frame.jpg"
    Image.new("RGB", (400, 200), (20, 20, 20)).save(src, quality=95)
    return ServedFiles(tmp_path / "served", [], 10**8), Photo(path=str(src), id=1, width=400, height=200)


def test_box_drawn_on_its_own_copy(tmp_path):
    files, photo = served(tmp_path)
    bare = files.photo(photo, "view")
    boxed = files.photo(photo, "view", BOX)
    assert bare.path != boxed.path and not boxed.missing
    plain, drawn = Image.open(bare.path).convert("RGB"), Image.open(boxed.path).convert("RGB")
    # the box's left edge at x = 200, between y = 50 and 150
    assert max(abs(a - b) for a, b in zip(plain.getpixel((201, 100)), drawn.getpixel((201, 100)))) > 100
    assert max(abs(a - b) for a, b in zip(plain.getpixel((100, 100)), drawn.getpixel((100, 100)))) < 12
    assert files.photo(photo, "view", BOX).path == boxed.path  # served from the copy made before
    assert files.photo(photo, "view", {**BOX, "bbox": [0.1, 0.1, 0.2, 0.2]}).path != boxed.path


def test_page_words():
    hit = {"id": 1, "rank": 1, "score": 0.3, "similarity": 0.3, "common_name": "Red fox", "matched_detection": BOX}
    (path, caption), = present.gallery_items([hit], {}, ["x.jpg"])
    assert "matched in the animal's box" in caption
    html = present.explanation_html(hit, {})
    assert "Matched inside the box of an animal (93% detector confidence)" in html
    plain = {**hit, "matched_detection": None}
    assert "box" not in present.gallery_items([plain], {}, ["x.jpg"])[0][1]
    assert "ecolens-in-box" not in present.explanation_html(plain, {})
