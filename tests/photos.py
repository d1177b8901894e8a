"""Generated test photos: plain colour pictures with varied sizes and modes, plus broken files of each kind."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

BROKEN_KINDS = ("empty", "truncated", "not_image", "huge", "garbage")


def colour_image(i: int, size: int = 64) -> Image.Image:
    rng = np.random.default_rng(i)
    base = rng.integers(0, 256, size=3)
    arr = np.clip(base + rng.normal(0, 20, size=(size, size, 3)), 0, 255).astype(np.uint8)
    return Image.fromarray(arr, "RGB")


def write_broken(path: Path, kind: str) -> Path:
    if kind == "empty":
        path = path.with_suffix(".jpg")
        path.write_bytes(b"")
    elif kind == "truncated":
        path = path.with_suffix(".jpg")
        buf = io.BytesIO()
        colour_image(999, 128).save(buf, "JPEG")
        path.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 3])
    elif kind == "not_image":
        path = path.with_suffix(".png")
        path.write_text("this is a text file with an image suffix")
    elif kind == "huge":
        path = path.with_suffix(".png")
        Image.new("L", (3000, 3000)).save(path)  # 9 MP, over the pixel limit the tests set
    else:
        path = path.with_suffix(".jpg")
        path.write_bytes(bytes(np.random.default_rng(5).integers(0, 256, 4096, dtype=np.uint8)))
    return path


def make_photo_folder(root: Path, good: int, broken: int, start: int = 0) -> Path:
    """`good` distinct readable photos (mixed formats and modes) and `broken` unusable files."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(start, start + good):
        img = colour_image(i)
        mode = i % 5
        if mode == 0:
            img.save(root / f"p{i:04d}.jpg", quality=90)
        elif mode == 1:
            img.convert("CMYK").save(root / f"p{i:04d}.jpg")
        elif mode == 2:
            img.convert("P").save(root / f"p{i:04d}.png")
        elif mode == 3:
            arr = (np.asarray(img.convert("L"), dtype=np.uint16) * 257)
            Image.fromarray(arr).save(root / f"p{i:04d}.png")  # 16-bit greyscale
        else:
            frames = [img, colour_image(i + 10_000)]
            frames[0].save(root / f"p{i:04d}.gif", save_all=True, append_images=frames[1:])
    for j in range(broken):
        write_broken(root / f"broken{j:03d}", BROKEN_KINDS[j % len(BROKEN_KINDS)])
    return root


def write_corpus(root: Path, n: int, row) -> Path:
    """n colour photos under root/img and their iNaturalist-style CSV; row(i) gives photo i's metadata."""
    (root / "img").mkdir(parents=True, exist_ok=True)
    for i in range(n):
        colour_image(i).save(root / "img" / f"{i}.png")
    return write_observations(root, [{"path": f"img/{i}.png", **row(i)} for i in range(n)])


def write_observations(root: Path, rows: list[dict]) -> Path:
    """An iNaturalist-style CSV at root/obs.csv with `rows` (each row's keys are the columns)."""
    import csv

    path = root / "obs.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def shaded_photos(folder: Path, n: int, shade: int) -> Path:
    """`n` small PNGs of one shade (a user's own photos, unlike the demo world's) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        Image.new("RGB", (64, 48), (shade, 20 * i % 255, 90)).save(folder / f"p{i}.png")
    return folder


def world_books():
    """The rule books of a collection that is nothing but the field-guide world (as app.py hands them to the
    engine): the world's book reads the request and every photo."""
    from core.contracts.world import RuleBooks
    from fieldguide.plugin import register

    return RuleBooks.whole(register())


def world_book():
    """The field-guide world's rule book (what a search on the world's collection reads its request with)."""
    return world_books().request
