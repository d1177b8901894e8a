"""The world plug-ins known to this process, by name (register_world adds them). Searches never ask this
registry which rules to read: the composition root chooses them and hands them in (core.contracts.world.RuleBooks);
it is read to find a world by name, the world that draws the demo collection, and the species any world knows."""
from __future__ import annotations

import threading

from core.contracts.world import World

_WORLDS: dict[str, World] = {}
_LOCK = threading.Lock()


def register_world(world: World) -> None:
    """Make `world` known by its name (idempotent: registering the same name again replaces it)."""
    with _LOCK:
        _WORLDS[world.name] = world


def worlds() -> dict[str, World]:
    with _LOCK:
        return dict(_WORLDS)


def get_world(name: str) -> World | None:
    with _LOCK:
        return _WORLDS.get(name)


def demo_world() -> World | None:
    """The registered world that can draw a demo collection (the first one registered), if any."""
    with _LOCK:
        return next((w for w in _WORLDS.values() if w.build_demo is not None), None)
