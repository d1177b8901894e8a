"""The camera-trap side of the field-guide world as data, before anything is drawn: four invented deployments
(place, UTC offset, camera, one with a clock that runs slow), their events (bursts of frames seconds apart) and
what each frame shows. Frame times are chosen with the sun's elevation at the deployment's place (astral), so a
frame said to be at night was taken at night there. Deterministic from its own seed: the world's other pictures
draw nothing from it."""
from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone

from astral import Observer
from astral.sun import elevation

from fieldguide.scene import Scene, scene_for
from fieldguide.species import by_name

WIDTH, HEIGHT = 640, 480
HORIZON = 150  # pixel row where the ground meets the tree line
BAR = 24  # the camera's data bar at the bottom of every frame
PERSON = "person"
# the sun's elevation (degrees) a frame of each light must have: day well above the horizon, night past civil
# twilight (-6) with a margin, dusk inside civil twilight (-6 to 0) with a margin, in the evening
LIGHTS = {"day": (15.0, 91.0), "night": (-91.0, -12.0), "dusk": (-5.0, -1.0)}


@dataclass(frozen=True)
class EventRecipe:
    light: str  # day | night | dusk
    who: tuple[str, ...]  # per individual: a species' scientific name or PERSON; () for a frame of nothing
    frames: int
    first_alone: bool = False  # the first frame shows only the first individual (MaxN still len(who))


@dataclass(frozen=True)
class Site:
    """One deployment: a camera at a place for a stretch of days."""

    key: str
    name: str
    latitude: float
    longitude: float
    utc_offset: str  # '+05:30'
    ground: str  # grass | pond | sand | scrub: how the landscape is drawn
    habitat: str
    feature: str  # Camtrap DP featureType
    camera_model: str
    serial: str
    height: float
    heading: int
    tilt: int
    start: date
    days: int
    events: tuple[EventRecipe, ...]
    subfolder: str = ""  # a card folder under the deployment's (e.g. '100FGCAM')
    clock_offset_s: int = 0  # added to the camera's recorded time gives the true time

    @property
    def tz(self) -> timezone:
        sign = -1 if self.utc_offset.startswith("-") else 1
        hours, minutes = self.utc_offset[1:].split(":")
        return timezone(sign * timedelta(hours=int(hours), minutes=int(minutes)))


MAKE = "Fieldguide Optics"  # invented, like the world's species
SITES: tuple[Site, ...] = (
    Site("fg-pond-edge", "Pond edge, west island", -45.40, -127.60, "-08:00", "pond", "pond margin with short grass",
         "waterSource", "FG-TrailCam 2", "FG2-000117", 0.6, 210, -5, date(2025, 3, 3), 40,
         (EventRecipe("day", ("Pondisalta cobaltina",), 3), EventRecipe("night", ("Mossisalta striolata",), 3),
          EventRecipe("day", ("Reedipipa ardesiaca", "Reedipipa ardesiaca"), 4, first_alone=True),
          EventRecipe("day", (), 3))),
    Site("fg-reed-bank", "Reed bank, north island", -44.80, -126.40, "-08:00", "grass", "tall grass by a reed bed",
         "trailGame", "FG-TrailCam 2", "FG2-000342", 0.8, 95, 0, date(2025, 3, 10), 30,
         (EventRecipe("day", ("Tuftilla rubrifrons",), 3), EventRecipe("night", ("Veilumbra cinnabarina",), 3),
          EventRecipe("day", (), 2), EventRecipe("day", (PERSON,), 2)),
         clock_offset_s=3725),
    Site("fg-scrub-trail", "Scrub trail, east islet", -40.00, -112.00, "-07:00", "scrub", "low scrub on a dirt trail",
         "trailHiking", "FG-TrailCam 3 IR", "FG3-001904", 0.5, 330, -10, date(2025, 4, 2), 35,
         (EventRecipe("day", ("Shieldicora ignea",), 3), EventRecipe("dusk", ("Tuftilla aurifrons",), 3),
          EventRecipe("night", ("Rindicora smaragdina",), 3), EventRecipe("night", (), 3))),
    Site("fg-dune-east", "Dune hollow, far atoll", -36.50, -100.00, "-06:00", "sand", "dune hollow with sparse grass",
         "burrow", "FG-TrailCam 3 IR", "FG3-002210", 0.4, 15, -15, date(2025, 2, 20), 30,
         (EventRecipe("day", ("Sailivola fulva",), 3), EventRecipe("night", ("Veilumbra jadeata",), 3),
          EventRecipe("day", ("Rindicora smaragdina", "Rindicora smaragdina"), 3), EventRecipe("day", (), 2),
          EventRecipe("day", ("Reedipipa ardesiaca",), 1)),
         subfolder="100FGCAM"),
)


@dataclass
class Individual:
    """One animal (or the person) in one frame: what it is, where its centre is drawn and how large."""

    what: str  # scientific name or PERSON
    scene: Scene | None  # None for the person
    x: float
    y: float
    scale: float


@dataclass
class Frame:
    path: str  # relative to the card folder
    site: Site
    event: int  # 1-based within the deployment, in time order
    when: datetime  # true local time, aware (the site's offset)
    light: str
    individuals: list[Individual]
    wind: float  # how far the grass leans (pixels at the tip of a near blade)
    seed: int  # the frame's pixel noise
    false_alarm: bool = False  # an empty frame the stand-in detector fires on weakly

    @property
    def recorded(self) -> datetime:
        """The time the camera wrote (its clock off by the site's clock offset), naive local wall time."""
        return (self.when - timedelta(seconds=self.site.clock_offset_s)).replace(tzinfo=None)


def sun_elevation(site: Site, when: datetime) -> float:
    """The sun's elevation in degrees at the site's place at the aware time `when` (refraction included)."""
    return elevation(Observer(site.latitude, site.longitude), when.astimezone(UTC))


def _start_time(site: Site, day: date, light: str, span_s: int, rng: random.Random) -> datetime:
    """A local time on `day` whose whole burst (and, for a camera with a wrong clock, the hours around it) lies in
    `light` at the site; every 10 minutes of the day are tried."""
    lo, hi = LIGHTS[light]
    margin = abs(site.clock_offset_s) + 3600 if site.clock_offset_s else 0
    ok = []
    for minute in range(12 * 60 if light == "dusk" else 0, 24 * 60, 10):
        t = datetime.combine(day, time(), site.tz) + timedelta(minutes=minute, seconds=rng.randrange(600))
        checks = (t, t + timedelta(seconds=span_s)) if not margin else \
            (t - timedelta(seconds=margin), t, t + timedelta(seconds=span_s + margin))
        if all(lo <= sun_elevation(site, c) <= hi for c in checks):
            ok.append(t)
    if not ok:
        raise ValueError(f"no {light} time on {day} at {site.key}")
    return rng.choice(ok)


def _pose(what: str, light: str, rng: random.Random) -> Scene | None:
    """A scene of the species as a camera trap sees it: on the ground or flying, never on a drawn perch (so that
    its box holds the animal only)."""
    if what == PERSON:
        return None
    sp = by_name(what)
    s = scene_for(sp, sp.plan)
    s.view, s.behaviour, s.pose = "side", "none", "folded"
    if sp.plan == "bird" and rng.random() < 0.3:
        s.behaviour, s.pose = "flying", "spread"
    elif sp.plan == "moth":
        if light == "day":
            s.stage, s.pose = "larva", "stretched"  # the caterpillar crawls by day
        else:
            s.view, s.behaviour, s.pose = "top", "flying", "spread"  # a moth at the camera's light
    elif sp.plan == "frog":
        s.view, s.pose = rng.choice(("side", "top")), rng.choice(("sitting", "sitting", "leaping"))
        s.behaviour = "swimming"  # the renderer puts a stone under any other frog
    elif sp.plan == "beetle":
        s.view = rng.choice(("side", "top"))
    s.seed = rng.randrange(1 << 30)
    return s


def _individuals(recipe: EventRecipe, rng: random.Random) -> list[tuple[str, Scene | None, float, float, float, float]]:
    """(what, scene, x, y, step per frame, scale) of each individual of the event at its first frame."""
    out = []
    x0, y0 = rng.uniform(140, 500), rng.uniform(230, 390)
    for i, what in enumerate(recipe.who):
        x, y = x0, y0
        if i:  # the second animal beside the first
            x, y = x0 + rng.choice((-1, 1)) * rng.uniform(80, 130), min(395.0, max(225.0, y0 + rng.uniform(-30, 30)))
        if what == PERSON:  # further off, so that the whole walker stays above the data bar
            y = rng.uniform(240, 320)
        depth = (y - HORIZON) / (HEIGHT - BAR - HORIZON)  # 0 at the horizon, 1 at the bottom
        if what == PERSON:
            scale = rng.uniform(1.9, 2.1) * depth
        else:
            scale = (0.28 + 0.6 * depth) * rng.uniform(0.85, 1.1)
        step = rng.choice((-1, 1)) * (rng.uniform(40, 70) if what == PERSON else rng.uniform(4, 18))
        out.append((what, _pose(what, recipe.light, rng), min(560.0, max(80.0, x)), y, step, scale))
    return out


def plan_card(seed: int = 0) -> list[Frame]:
    """Every frame of the demo card, each deployment's in time order (file numbers follow it)."""
    rng = random.Random(f"fieldguide-camtrap:{seed}")
    frames: list[Frame] = []
    for site in SITES:
        days = rng.sample(range(1, site.days - 1), len(site.events))
        planned = []
        for recipe, day in zip(site.events, days):
            gaps = [rng.choice((1, 1, 2, 2, 3)) for _ in range(recipe.frames - 1)]
            start = _start_time(site, site.start + timedelta(days=day), recipe.light, sum(gaps), rng)
            planned.append((start, recipe, gaps, _individuals(recipe, rng), rng.uniform(2, 5) if not recipe.who
                            else rng.uniform(0, 2), rng.random() < 0.5))
        planned.sort(key=lambda p: p[0])
        number = 0
        for event, (start, recipe, gaps, who, wind, alarm) in enumerate(planned, start=1):
            when = start
            for k in range(recipe.frames):
                number += 1
                shown = who[:1] if recipe.first_alone and k == 0 else who
                folder = f"{site.key}/{site.subfolder}/" if site.subfolder else f"{site.key}/"
                frames.append(Frame(
                    path=f"{folder}IMG_{number:04d}.jpg", site=site, event=event, when=when, light=recipe.light,
                    individuals=[Individual(w, sc, x + k * step, y, scale) for w, sc, x, y, step, scale in shown],
                    wind=wind * (1 if k % 2 == 0 else -0.6), seed=rng.randrange(1 << 30),
                    false_alarm=not recipe.who and alarm and k == recipe.frames - 1))
                if k < len(gaps):
                    when = when + timedelta(seconds=gaps[k])
    return frames
