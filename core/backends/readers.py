"""Which photo reader answers questions from photos (setting answer_reader): create_reader."""
from __future__ import annotations

from typing import Any

from core.backends.resolution import resolve
from core.contracts.errors import ConfigError
from core.plugins import registry as plugins

READERS = ["auto", "captions", "openai"]
# reader name -> "module:factory" (factory(settings, embedder)); a plug-in's reader comes with its registration
FACTORIES: dict[str, str] = {"openai": "core.backends.openai_reader:OpenAIReader.from_settings"}


def reader_names() -> list[str]:
    """The values answer_reader accepts: EcoLens's own, then the registered plug-ins' readers."""
    return READERS + [name for name in plugins.readers() if name not in READERS]


def _auto(settings: Any, world: Any = None) -> str:
    """'auto' follows the judge: the OpenAI judge's model reads photos; a world's judge and encoder, when the
    collection is that world (`world`, a core.contracts.world.World the composition root hands in), come with
    the world's reader; anything else: captions."""
    judge = settings.judge
    if judge == "openai":
        return "openai"
    if (world is not None and world.reader and judge in world.backends.get("judge", {})
            and any(str(settings.embedder).startswith(e) for e in world.backends.get("embedder", {}))):
        return world.name
    return "captions"


def create_reader(settings: Any, embedder: Any = None, world: Any = None):
    """The PhotoReader named by settings.answer_reader, or None for 'captions' (photo notes read by the text
    LLM), or a reader a world plug-in registered; 'auto' is decided by _auto (`world`: the world the collection
    is, if it is one)."""
    name = settings.answer_reader or "auto"
    if name == "auto":
        name = _auto(settings, world)
    if name == "captions":
        return None
    factories = {**FACTORIES, **plugins.readers()}
    if name not in factories:
        raise ConfigError(f"Unknown answer_reader {name!r}",
                          f"set answer_reader to one of: {', '.join(reader_names())}")
    factory, _ = resolve(factories, "answer_reader", name)
    return factory(settings, embedder)
