"""Draws one planned camera-trap frame (fieldguide.camtrap_plan.Frame): the deployment's landscape (tree line,
ground, grass that leans in the wind), the world's invented animals drawn small by its own renderer, a person's
silhouette, then the light: daylight, dim dusk, or the grey of an infrared flash at night, pixel noise and the
camera's data bar. Each individual is drawn on its own transparent layer, so its box is exactly where its
pixels are."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from fieldguide.camtrap_plan import BAR, HEIGHT, HORIZON, PERSON, WIDTH, Frame, Individual, Site
from fieldguide.render import draw_organism

GROUND = {"grass": (96, 132, 58), "pond": (88, 120, 60), "sand": (196, 176, 132), "scrub": (132, 112, 78)}
BLADES = {"grass": 520, "pond": 360, "sand": 90, "scrub": 220}
BLADE = (58, 98, 36)


@dataclass(frozen=True)
class Drawn:
    """What a frame shows where: the category ('animal' | 'person'), the species (None for a person) and the box
    [x, y, w, h], normalised to the frame, top left origin."""

    category: str
    species: str | None
    bbox: tuple[float, float, float, float]


def _site_seed(site: Site) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate(site.key))


def _landscape(site: Site, wind: float) -> Image.Image:
    """The deployment's view without animals: the same for every frame of a site except the grass's lean."""
    rng = np.random.default_rng(_site_seed(site))
    img = Image.new("RGB", (WIDTH, HEIGHT))
    d = ImageDraw.Draw(img)
    for y in range(HORIZON + 10):  # sky, paler towards the horizon
        t = y / HORIZON
        d.line([(0, y), (WIDTH, y)], fill=(int(150 + 60 * t), int(180 + 40 * t), int(215 + 15 * t)))
    crowns = [(float(x), HORIZON - float(rng.uniform(20, 80))) for x in range(-20, WIDTH + 40, 28)]
    d.polygon([(-20, HORIZON + 5), *crowns, (WIDTH + 40, HORIZON + 5)], fill=(44, 70, 40))
    for x, top in crowns[::3]:
        d.ellipse([x - 26, top - 14, x + 26, top + 22], fill=(36, 60, 34))
    base = GROUND[site.ground]
    for y in range(HORIZON, HEIGHT):
        f = 0.8 + 0.25 * (y - HORIZON) / (HEIGHT - HORIZON)
        d.line([(0, y), (WIDTH, y)], fill=tuple(min(255, int(c * f)) for c in base))
    if site.ground == "pond":
        d.ellipse([int(rng.uniform(260, 380)), HORIZON + 8, WIDTH + 120, HORIZON + 70], fill=(60, 96, 128))
    if site.ground == "scrub":  # a dirt trail running away from the camera
        d.polygon([(250, HEIGHT), (470, HEIGHT), (340, HORIZON), (320, HORIZON)], fill=(150, 126, 92))
    for _ in range(3):  # stones
        x, y = float(rng.uniform(0, WIDTH)), float(rng.uniform(HORIZON + 30, HEIGHT - BAR))
        r = 4 + 14 * (y - HORIZON) / (HEIGHT - HORIZON)
        d.ellipse([x - 1.6 * r, y - r, x + 1.6 * r, y + r * 0.6], fill=(118, 114, 106))
    x = float(rng.choice((rng.uniform(-40, 10), rng.uniform(WIDTH - 40, WIDTH + 10))))  # a trunk at one side
    d.polygon([(x, 0), (x + 70, 0), (x + 78, HEIGHT), (x - 6, HEIGHT)], fill=(74, 56, 40))
    for _ in range(BLADES[site.ground]):  # grass, longer near the camera, leaning with the wind
        x, y = float(rng.uniform(-10, WIDTH + 10)), float(rng.uniform(HORIZON + 4, HEIGHT))
        depth = (y - HORIZON) / (HEIGHT - HORIZON)
        length = (6 + 40 * depth) * float(rng.uniform(0.6, 1.2))
        lean = float(rng.uniform(-3, 3)) + wind * depth * 3
        d.line([(x, y), (x + lean, y - length)], fill=BLADE, width=max(1, int(1 + 2 * depth)))
    return img


def _person(draw: ImageDraw.ImageDraw, x: float, y: float, s: float) -> None:
    """A walker's silhouette standing at (x, y) (its middle), about 170 * s pixels tall."""
    def p(u: float, v: float) -> tuple[float, float]:
        return (x + s * u, y + s * v)
    coat, trousers, skin = (62, 72, 64), (40, 42, 48), (196, 160, 130)
    draw.line([p(-8, 20), p(-16, 85)], fill=trousers, width=max(1, int(12 * s)))
    draw.line([p(8, 20), p(14, 85)], fill=trousers, width=max(1, int(12 * s)))
    draw.polygon([p(-18, -50), p(18, -50), p(22, 25), p(-22, 25)], fill=coat)
    draw.line([p(-18, -45), p(-30, 10)], fill=coat, width=max(1, int(9 * s)))
    draw.line([p(18, -45), p(28, 8)], fill=coat, width=max(1, int(9 * s)))
    draw.ellipse([*p(-11, -78), *p(11, -52)], fill=skin)
    draw.chord([*p(-12, -80), *p(12, -60)], 180, 360, fill=(120, 40, 30))  # a cap


def _layer(ind: Individual) -> Image.Image:
    layer = Image.new("RGBA", (WIDTH, HEIGHT), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    if ind.what == PERSON:
        _person(draw, ind.x, ind.y, ind.scale)
    else:
        draw_organism(draw, ind.scene, ind.x, ind.y, ind.scale)
    return layer


def _box(layer: Image.Image) -> tuple[float, float, float, float] | None:
    found = layer.getchannel("A").getbbox()
    if found is None:
        return None
    x0, y0, x1, y1 = found
    return (x0 / WIDTH, y0 / HEIGHT, (x1 - x0) / WIDTH, (y1 - y0) / HEIGHT)


def _light(arr: np.ndarray, light: str, rng: np.random.Generator) -> np.ndarray:
    """Daylight as drawn, dusk dim and blue, night the grey of an infrared flash (vegetation bright in near
    infrared, the flash fading with distance and towards the corners); then sensor noise."""
    if light == "dusk":
        arr = arr * np.array([0.42, 0.46, 0.6], dtype=np.float32)
    elif light == "night":
        r, g, b = arr[..., 0], arr[..., 1], arr[..., 2]
        ir = 0.35 * r + 0.45 * g + 0.2 * b + 0.9 * np.clip(g - np.maximum(r, b), 0, None)
        yy, xx = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float32)
        near = np.clip((yy - HORIZON + 30) / (HEIGHT - HORIZON), 0.05, 1.0) ** 0.8
        corner = 1.0 - 0.45 * (((xx - WIDTH / 2) / (WIDTH / 2)) ** 2 + ((yy - HEIGHT / 2) / (HEIGHT / 2)) ** 2) / 2
        grey = ir * (0.12 + 1.1 * near) * corner
        arr = np.repeat(grey[..., None], 3, axis=2)
    noise = rng.normal(0.0, 7.0 if light == "night" else 3.0, arr.shape[:2]).astype(np.float32)
    if light == "night":
        return arr + noise[..., None]  # the same on every channel: the frame stays grey
    return arr + rng.normal(0.0, 1.5, arr.shape).astype(np.float32) + noise[..., None]


_FONT: list = []


def _data_bar(img: Image.Image, frame: Frame, index: int, of: int) -> None:
    if not _FONT:
        _FONT.append(ImageFont.load_default(size=14))
    d = ImageDraw.Draw(img)
    d.rectangle([0, HEIGHT - BAR, WIDTH, HEIGHT], fill=(0, 0, 0))
    temp = 6 + frame.seed % 9 if frame.light != "day" else 14 + frame.seed % 9
    text = (f"{frame.site.camera_model}   {temp}C   {frame.recorded:%Y-%m-%d %H:%M:%S}   "
            f"{frame.site.key.upper()}   {index}/{of}")
    d.text((10, HEIGHT - BAR + 4), text, fill=(235, 235, 235), font=_FONT[0])


def draw_frame(frame: Frame, index: int = 1, of: int = 1, with_individuals: bool = True) -> tuple[Image.Image,
                                                                                                   list[Drawn]]:
    """The frame's picture (RGB, WIDTH x HEIGHT) and what it shows. `index`/`of`: the frame's place in its burst,
    printed in the data bar. `with_individuals=False` draws the same frame empty (the tests' reference)."""
    img = _landscape(frame.site, frame.wind).convert("RGBA")
    shown: list[Drawn] = []
    for ind in frame.individuals if with_individuals else []:
        layer = _layer(ind)
        box = _box(layer)
        if box is not None:
            img.alpha_composite(layer)
            shown.append(Drawn("person" if ind.what == PERSON else "animal",
                               None if ind.what == PERSON else ind.what, box))
    rng = np.random.default_rng(frame.seed)
    arr = _light(np.asarray(img.convert("RGB"), dtype=np.float32), frame.light, rng)
    out = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB")
    _data_bar(out, frame, index, of)
    return out, shown
