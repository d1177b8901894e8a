"""Which photo reader answers questions from photos (setting answer_reader): create_reader."""
from __future__ import annotations

from typing import Any

from core.errors import ConfigError

READERS = ("auto", "captions", "openai", "fieldguide")


def create_reader(settings: Any, embedder: Any = None):
    """The PhotoReader named by settings.answer_reader, or None for 'captions' (photo notes read by the text
    LLM). 'auto' follows the judge: the OpenAI judge's model reads photos; the field-guide judge with the
    field-guide embedder (the synthetic world) has the field-guide reader; anything else means captions."""
    name = settings.answer_reader
    if name == "auto":
        judge = settings.judge
        world = judge == "fieldguide" and settings.embedder.startswith("fieldguide")
        name = "openai" if judge == "openai" else ("fieldguide" if world else "captions")
    if name == "captions":
        return None
    if name == "openai":
        from core.backends.openai_reader import OpenAIReader

        return OpenAIReader.from_settings(settings)
    if name == "fieldguide":
        from core.backends.fieldguide_reader import FieldGuideReader

        return FieldGuideReader.from_settings(settings, embedder)
    raise ConfigError(f"Unknown answer_reader {name!r}", f"set answer_reader to one of: {', '.join(READERS)}")
