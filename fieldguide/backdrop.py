"""Habitat backgrounds of the field-guide pictures."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw


def background(habitat: str, rng: np.random.Generator, size: int = 224) -> Image.Image:
    """The habitat behind the organism: water, grass, sky, bark or sand, with seeded texture."""
    img = Image.new("RGB", (size, size))
    d = ImageDraw.Draw(img)
    if habitat == "sky":
        for y in range(size):
            t = y / size
            d.line([(0, y), (size, y)], fill=(int(120 + 80 * t), int(175 + 50 * t), 245))
        for _ in range(3):
            x, y = rng.integers(0, size, 2)
            d.ellipse([x - 30, y - 10, x + 30, y + 10], fill=(250, 250, 252))
    elif habitat == "water":
        d.rectangle([0, 0, size, size], fill=(45, 95, 150))
        for y in range(8, size, 18):
            off = int(rng.integers(0, 30))
            for x in range(-30 + off, size, 40):
                d.arc([x, y, x + 30, y + 10], 200, 340, fill=(110, 160, 210), width=2)
    elif habitat == "grass":
        d.rectangle([0, 0, size, size], fill=(95, 140, 55))
        for _ in range(70):
            x, y = rng.integers(0, size, 2)
            d.line([(x, y), (x + rng.integers(-6, 7), y - rng.integers(10, 25))], fill=(60, 105, 35), width=2)
    elif habitat == "bark":
        d.rectangle([0, 0, size, size], fill=(95, 70, 50))
        for _ in range(25):
            x = int(rng.integers(0, size))
            d.line([(x, 0), (x + rng.integers(-10, 11), size)], fill=(65, 45, 30), width=int(rng.integers(2, 5)))
    else:  # sand
        d.rectangle([0, 0, size, size], fill=(215, 190, 140))
        for _ in range(160):
            x, y = rng.integers(0, size, 2)
            d.point((int(x), int(y)), fill=(170, 145, 100))
    return img
