"""The plug-ins known to this process, by name: one registration each (`register`), which makes everything a
plug-in brings known at once: its rule book, its backends, its photo reader, its demo and its benchmark. The
backend registry, the answer readers and the benchmarks read their plug-in entries from here.

Searches never ask this registry which rules to read: the composition root chooses them and hands them in
(core.contracts.world.RuleBooks); it is read to find a world by name, the world that draws the demo collection,
and the species any world knows."""
from __future__ import annotations

import threading

from core.contracts.world import World

_PLUGINS: dict[str, World] = {}
_MODULES: list[str] = []  # the plug-in modules loaded in this process, in order (for the processes it starts)
_LOCK = threading.Lock()


def load_modules(modules: tuple[str, ...] | list[str]) -> None:
    """Import each plug-in module and call its register(), remembering its name so that processes started
    later (worker processes, Ray actors) load the same ones: `loaded_modules()`."""
    import importlib

    for module in modules:
        importlib.import_module(module).register()
        with _LOCK:
            if module not in _MODULES:
                _MODULES.append(module)


def loaded_modules() -> tuple[str, ...]:
    with _LOCK:
        return tuple(_MODULES)


def register(plugin: World) -> World:
    """Make `plugin` and all it brings known by its name (idempotent: the same name again replaces it)."""
    with _LOCK:
        _PLUGINS[plugin.name] = plugin
    return plugin


def worlds() -> dict[str, World]:
    with _LOCK:
        return dict(_PLUGINS)


def get_world(name: str) -> World | None:
    with _LOCK:
        return _PLUGINS.get(name)


def demo_world() -> World | None:
    """The registered world that can draw a demo collection (the first one registered), if any."""
    return next((w for w in worlds().values() if w.build_demo is not None), None)


def backend_targets(kind: str) -> dict[str, str]:
    """The plug-ins' backends of `kind` ("embedder", "judge", ...): name -> "module:factory"."""
    return {name: target for w in worlds().values() for name, target in w.backends.get(kind, {}).items()}


def model_backends() -> set[tuple[str, str]]:
    """(kind, name) of the plug-ins' backends that run a model in the process."""
    return {(kind, name) for w in worlds().values() if w.runs_model for kind, table in w.backends.items()
            for name in table}


def embedder_judges() -> set[str]:
    """The plug-ins' judges built on the embedder."""
    return {name for w in worlds().values() if w.judge_reads_embedder for name in w.backends.get("judge", {})}


def readers() -> dict[str, str]:
    """The plug-ins' photo readers: name (the plug-in's) -> "module:factory"."""
    return {w.name: w.reader for w in worlds().values() if w.reader}


def benchmarks() -> dict[str, World]:
    """The plug-ins that bring a benchmark, by its name (the plug-in's)."""
    return {w.name: w for w in worlds().values() if w.benchmark is not None}
