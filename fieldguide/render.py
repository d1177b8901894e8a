"""Draws a Scene as a 224 x 224 RGB picture with PIL: background habitat, one or two organisms, props, then
lighting and pixel noise. Deterministic for a scene (its seed drives the noise). On request it also returns
where the carried or eaten item was drawn (item_mask), which the judge's training uses as a target."""
from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from fieldguide.backdrop import background
from fieldguide.scene import Scene
from fieldguide.species import COLOURS

SIZE = 224


def _c(name: str, f: float = 1.0) -> tuple[int, int, int]:
    r, g, b = COLOURS.get(name, COLOURS["grey"])
    return (min(255, int(r * f)), min(255, int(g * f)), min(255, int(b * f)))


class _Pen:
    """Local drawing coordinates: (0, 0) is the organism's centre, one unit is one pixel at scale 1. `marks`
    (optional) is a second drawing on which the item is drawn again, where it shows."""

    def __init__(self, draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float,
                 marks: ImageDraw.ImageDraw | None = None):
        self.d, self.cx, self.cy, self.s, self.marks = draw, cx, cy, s, marks

    def p(self, x: float, y: float) -> tuple[float, float]:
        return (self.cx + self.s * x, self.cy + self.s * y)

    def ell(self, x0, y0, x1, y1, fill, outline=None):
        a, b = self.p(x0, y0), self.p(x1, y1)
        self.d.ellipse([a[0], a[1], b[0], b[1]], fill=fill, outline=outline)

    def circ(self, x, y, r, fill):
        self.ell(x - r, y - r, x + r, y + r, fill)

    def poly(self, pts, fill):
        self.d.polygon([self.p(x, y) for x, y in pts], fill=fill)

    def line(self, pts, fill, w=2):
        self.d.line([self.p(x, y) for x, y in pts], fill=fill, width=max(1, int(w * self.s)))


def _marks(pen: _Pen, s: Scene, box, colour) -> None:
    """Markings on a main surface: spots, stripes or bands inside box (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    if s.marking == "spots":
        for fx, fy in ((0.3, 0.3), (0.65, 0.35), (0.45, 0.6), (0.25, 0.7), (0.7, 0.72)):
            pen.circ(x0 + fx * (x1 - x0), y0 + fy * (y1 - y0), 4, colour)
    elif s.marking in ("stripes", "bands"):
        for f in (0.33, 0.55, 0.77):
            if s.marking == "stripes":
                pen.line([(x0 + f * (x1 - x0), y0 + 6), (x0 + f * (x1 - x0), y1 - 6)], colour, 3)
            else:
                pen.line([(x0 + 6, y0 + f * (y1 - y0)), (x1 - 6, y0 + f * (y1 - y0))], colour, 3)


def _item(pen: _Pen, item: str, x: float, y: float) -> None:
    _draw_item(pen, item, x, y)
    if pen.marks is not None:  # the same shapes on the item mask
        _draw_item(_Pen(pen.marks, pen.cx, pen.cy, pen.s), item, x, y)


def _draw_item(pen: _Pen, item: str, x: float, y: float) -> None:
    if item == "twig":
        pen.line([(x - 14, y + 4), (x + 22, y - 6)], _c("brown", 0.8), 4)
        pen.line([(x + 6, y - 2), (x + 14, y - 12)], _c("brown", 0.8), 2)
    elif item == "berry":
        pen.circ(x + 6, y, 7, (190, 20, 60))
    elif item == "leaf":
        pen.ell(x - 2, y - 6, x + 24, y + 6, (70, 170, 60))
    elif item == "seed":
        pen.ell(x, y - 5, x + 14, y + 5, (230, 215, 170))
    elif item == "fly":
        pen.circ(x + 8, y, 4, (20, 20, 20))
        pen.ell(x + 4, y - 9, x + 12, y - 3, (200, 200, 210))
    elif item == "nectar":
        for a in range(5):
            t = a * 2 * math.pi / 5
            pen.circ(x + 10 + 7 * math.cos(t), y + 7 * math.sin(t), 5, _c("pink"))
        pen.circ(x + 10, y, 3, _c("yellow"))


def _perch(pen: _Pen, s: Scene, y: float) -> None:
    if s.behaviour in ("perched", "feeding", "carrying") and s.plan in ("bird", "moth", "beetle"):
        pen.line([(-80, y + 6), (80, y - 2)], (85, 55, 30), 8)
    elif s.plan == "frog" and s.behaviour != "swimming":
        pen.ell(-55, y - 4, 55, y + 18, (120, 120, 115))


def _bird(pen: _Pen, s: Scene) -> None:
    c = {k: _c(v) for k, v in s.colours.items()}
    if s.view == "side":
        _perch(pen, s, 24)
        if s.behaviour != "flying":
            pen.line([(-5, 18), (-8, 28)], (60, 40, 20), 3)
            pen.line([(8, 18), (8, 28)], (60, 40, 20), 3)
        pen.poly([(-38, 0), (-70, -12), (-70, 10)], c["back"])
        pen.ell(-42, -22, 34, 22, c["back"])
        if s.marking == "stripes":
            _marks(pen, s, (-30, -18, 20, 18), _c("black"))
        if s.pose == "spread":
            pen.poly([(-20, -10), (-45, -72), (18, -62), (12, -8)], c["wings"])
        else:
            pen.ell(-32, -12, 18, 10, c["wings"])
        pen.poly([(24, -44), (28, -62), (33, -42), (38, -60), (42, -40), (30, -34)], c["crest"])
        pen.circ(34, -24, 16, c["back"])
        pen.circ(40, -28, 3, (10, 10, 10))
        pen.poly([(48, -30), (68, -22), (48, -16)], c["beak"])
        if s.item:
            _item(pen, s.item, 62, -18)
    else:
        under = s.view == "underside"
        body = c["belly"] if under else c["back"]
        if s.pose == "spread" or under:
            pen.poly([(-12, -20), (-85, -40), (-78, 0), (-12, 10)], c["wings"])
            pen.poly([(12, -20), (85, -40), (78, 0), (12, 10)], c["wings"])
        else:
            pen.ell(-26, -24, -6, 34, c["wings"])
            pen.ell(6, -24, 26, 34, c["wings"])
        pen.poly([(-10, 34), (10, 34), (14, 62), (-14, 62)], c["back"])
        pen.ell(-18, -36, 18, 40, body)
        if s.marking == "stripes" and not under:
            _marks(pen, s, (-14, -30, 14, 34), _c("black"))
        pen.circ(0, -44, 13, c["belly"] if under else c["back"])
        pen.poly([(-5, -55), (0, -70), (5, -55)], c["beak"])
        if s.item:
            _item(pen, s.item, -4, -72)


def _moth(pen: _Pen, s: Scene) -> None:
    c = {k: _c(v) for k, v in s.colours.items()}
    if s.stage == "larva":
        _perch(pen, s, 16)
        body, stripe = _c(s.larva["body"]), _c(s.larva["stripes"])
        for i in range(9):
            t = i / 8
            x, y = (-60 + 120 * t, 4 * math.sin(6 * t)) if s.pose == "stretched" else \
                (40 * math.cos(math.pi * (0.2 + 1.4 * t)), -30 + 40 * math.sin(math.pi * (0.2 + 1.4 * t)))
            pen.circ(x, y, 13, body)
            pen.circ(x, y, 5, stripe)
        if s.item:
            _item(pen, s.item, 70, 0)
        return
    if s.view == "side":
        _perch(pen, s, 22)
        pen.poly([(-30, 4), (-14, -68), (34, -60), (26, 4)], c["underside"])
        pen.ell(-40, -4, 40, 14, c["body"])
        pen.line([(36, 0), (56, -26)], (30, 30, 30), 2)
    else:
        under = s.view == "underside"
        wing = c["underside"] if under else c["wings"]
        if s.pose == "spread":
            pen.poly([(0, -8), (-82, -52), (-70, 8)], wing)
            pen.poly([(0, -8), (82, -52), (70, 8)], wing)
            pen.poly([(0, 4), (-52, 14), (-34, 46)], wing)
            pen.poly([(0, 4), (52, 14), (34, 46)], wing)
            if not under:
                _marks(pen, s, (-70, -40, -10, 6), _c("black"))
                _marks(pen, s, (10, -40, 70, 6), _c("black"))
        else:
            pen.poly([(0, -34), (-34, 44), (34, 44)], wing)
            if not under:
                _marks(pen, s, (-20, -10, 20, 40), _c("black"))
        pen.ell(-7, -34, 7, 40, c["body"])
        pen.line([(-3, -34), (-16, -58)], (30, 30, 30), 2)
        pen.line([(3, -34), (16, -58)], (30, 30, 30), 2)
    if s.item:
        _item(pen, s.item, 40 if s.view == "side" else -5, -70 if s.view != "side" else 0)


def _frog(pen: _Pen, s: Scene) -> None:
    c = {k: _c(v) for k, v in s.colours.items()}
    if s.stage == "tadpole":
        tone = _c(s.colours["back"], 0.45)
        pen.ell(-20, -14, 20, 14, tone)
        pen.poly([(-16, -4), (-62, -14), (-70, 4), (-16, 6)], tone)
        pen.circ(10, -4, 3, (240, 240, 240))
        return
    leap = s.pose == "leaping"
    if s.view == "side":
        _perch(pen, s, 24)
        pen.poly([(-30, 10), (-70 if leap else -40, 30 if leap else 22), (-10, 22)], c["back"])
        pen.ell(-40, -24, 30, 24, c["back"])
        pen.circ(28, -16, 15, c["back"])
        pen.circ(32, -28, 6, (240, 220, 80))
        pen.circ(33, -28, 3, (10, 10, 10))
        _marks(pen, s, (-34, -20, 20, 18), c["markings"])
    else:
        under = s.view == "underside"
        skin = c["belly"] if under else c["back"]
        if not under:
            _perch(pen, s, 34)
        for sx in (-1, 1):
            pen.poly([(sx * 20, 10), (sx * (70 if leap else 44), 48 if leap else 30), (sx * 24, 34)], skin)
            pen.poly([(sx * 16, -16), (sx * 44, -30), (sx * 22, -4)], skin)
        pen.ell(-30, -30, 30, 38, skin)
        pen.ell(-22, -52, 22, -18, skin)
        if not under:
            pen.circ(-13, -46, 6, (240, 220, 80))
            pen.circ(13, -46, 6, (240, 220, 80))
            _marks(pen, s, (-26, -26, 26, 34), c["markings"])
    if s.item:
        _item(pen, s.item, 40, -20)


def _beetle(pen: _Pen, s: Scene) -> None:
    c = {k: _c(v) for k, v in s.colours.items()}
    if s.view == "side":
        _perch(pen, s, 20)
        for x in (-24, 0, 22):
            pen.line([(x, 4), (x - 6, 20)], c["legs"], 4)
        pen.d.chord([*pen.p(-44, -36), *pen.p(36, 20)], 180, 360, fill=c["elytra"])
        pen.ell(-44, -6, 36, 10, c["legs"])
        pen.circ(42, -2, 10, (25, 25, 25))
    elif s.view == "top":
        for y in (-10, 8, 24):
            pen.line([(-44, y - 8), (44, y + 8)], c["legs"], 4)
            pen.line([(44, y - 8), (-44, y + 8)], c["legs"], 4)
        if s.pose == "spread":
            pen.ell(-70, -20, -10, 30, (200, 205, 215))
            pen.ell(10, -20, 70, 30, (200, 205, 215))
            pen.ell(-38, -34, -8, 20, c["elytra"])
            pen.ell(8, -34, 38, 20, c["elytra"])
        else:
            pen.ell(-26, -24, 26, 46, c["elytra"])
            _marks(pen, s, (-22, -18, 22, 42), c["markings"])
            pen.line([(0, -22), (0, 46)], (20, 20, 20), 2)
        pen.ell(-16, -42, 16, -20, (30, 30, 30))
        pen.circ(0, -48, 9, (20, 20, 20))
    else:
        for y in (-10, 8, 24):
            pen.line([(-50, y - 10), (50, y + 10)], c["legs"], 7)
            pen.line([(50, y - 10), (-50, y + 10)], c["legs"], 7)
        pen.ell(-24, -30, 24, 44, (30, 30, 30))
        pen.circ(0, -38, 9, (20, 20, 20))
    if s.item:
        _item(pen, s.item, 10, -70)


def _flower(pen: _Pen, s: Scene) -> None:
    c = {k: _c(v) for k, v in s.colours.items()}
    if s.view == "top":
        pen.ell(-80, 20, -20, 50, c["leaves"])
        pen.ell(20, -50, 80, -20, c["leaves"])
        if s.pose == "bud":
            pen.circ(0, 0, 20, (60, 130, 50))
            return
        for a in range(7):
            t = a * 2 * math.pi / 7
            pen.circ(30 * math.cos(t), 30 * math.sin(t), 17, c["petals"])
        pen.circ(0, 0, 13, c["centre"])
    else:
        pen.line([(0, -20), (0, 90)], (50, 110, 40), 5)
        pen.ell(-46, 30, 0, 46, c["leaves"])
        pen.ell(0, 50, 46, 66, c["leaves"])
        if s.pose == "bud":
            pen.ell(-12, -50, 12, -10, (60, 130, 50))
            return
        for x in (-30, -15, 0, 15, 30):
            pen.ell(x - 12, -60, x + 12, -18, c["petals"])


_DRAW = {"bird": _bird, "moth": _moth, "frog": _frog, "beetle": _beetle, "flower": _flower}


def render(s: Scene) -> Image.Image:
    """The picture of scene `s` (224 x 224 RGB)."""
    return _render(s, None)


def render_with_item_mask(s: Scene) -> tuple[Image.Image, np.ndarray]:
    """The picture of scene `s` and a boolean 224 x 224 mask of the pixels where its carried or eaten item shows
    (all False without an item). The picture is the one render() draws."""
    marks = Image.new("RGB", (SIZE, SIZE), (0, 0, 0))  # the item drawn in its own colours, none pure black
    img = _render(s, ImageDraw.Draw(marks))
    return img, np.asarray(marks).any(axis=-1)


def draw_organism(draw: ImageDraw.ImageDraw, s: Scene, cx: float, cy: float, scale: float) -> None:
    """Draw scene `s`'s organism once (its count and background ignored) centred at (cx, cy) at `scale` on
    `draw`, for pictures other than the world's own 224 px ones (the camera-trap frames)."""
    _DRAW[s.plan](_Pen(draw, cx, cy, scale), s)


def _render(s: Scene, marks: ImageDraw.ImageDraw | None) -> Image.Image:
    rng = np.random.default_rng(s.seed)
    img = background(s.habitat, rng, SIZE)
    draw = ImageDraw.Draw(img)
    centres = [(0.0, 0.0, 1.0)] if s.count == 1 else [(-42.0, -30.0, 0.62), (42.0, 34.0, 0.62)]
    for ox, oy, f in centres:
        pen = _Pen(draw, SIZE / 2 + s.dx + ox, SIZE / 2 + s.dy + oy, s.scale * f, marks)
        _DRAW[s.plan](pen, s)
    arr = np.asarray(img, dtype=np.float32) * s.light
    if s.noise > 0:
        arr += rng.normal(0.0, s.noise, arr.shape).astype(np.float32)
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB")
