"""What the UI handler tests run on: the real SearchEngine over an in-memory corpus of 12 photo files and
fake backends (tests/fakes.py), remembering each request; dialogues are scripted."""
from __future__ import annotations

import contextlib
from datetime import date
from types import SimpleNamespace

import numpy as np
from PIL import Image

from core.config import Settings
from core.contracts.records import Photo
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeEmbedder, FakeSearch

N_PHOTOS = 12
DIM = 8


def make_photos(folder) -> list[Photo]:
    photos = []
    for i in range(1, N_PHOTOS + 1):
        path = folder / f"p{i}.png"
        Image.new("RGB", (8, 8), (i * 20 % 255, 80, 120)).save(path)
        photos.append(Photo(path=str(path), id=i, scientific_name=f"Rana {i}", common_name=f"frog {i}",
                            observed_on=date(2024, 5, i), latitude=45.0, longitude=6.0, license="cc-by",
                            rights_holder="someone", caption=f"<script>alert({i})</script> a frog"))
    return photos


class FakeEngine(SearchEngine):
    """The real engine on a FakeSearch corpus; `requests` lists every request it ran."""

    def __init__(self, tmp_path, backends=None, **settings):
        # the fake embedder is named as none of the stand-ins (not the default 'fieldguide', the demo world's
        # encoder, whose similarities on photos not of its world are stand-in scores)
        settings.setdefault("embedder", "fake")
        s = Settings(data_dir=str(tmp_path / "data"), **settings)
        rng = np.random.default_rng(0)
        corpus = FakeSearch(make_photos(tmp_path), rng.normal(size=(N_PHOTOS, DIM)).astype(np.float32), s,
                            backends=backends or FakeBackends(embedder=FakeEmbedder(DIM)))
        super().__init__(corpus, corpus.backends, s)
        self.requests: list = []

    def search(self, request, on_event=None, cancel=None):
        self.requests.append(request)
        return super().search(request, on_event=on_event, cancel=cancel)

    def dialogue(self, description, filters=None, k=None):
        return FakeDialogue(self, description)


class FakeDialogue:
    def __init__(self, engine, description):
        self.engine, self.description, self.caption = engine, description, description
        self.turns: list[tuple[str, str]] = []
        self.notices: list[str] = []
        self.pending = None
        self.relevant: list[int] = []  # photos marked as looking right, as DialogueSession keeps them
        self.fallback = ""  # set by a test: the next question is the rule book's, asked because of this

    def turn_deadline(self):
        return contextlib.nullcontext()

    def hits(self, k=None):
        ids = list(range(1, N_PHOTOS + 1))[len(self.turns):][:5]
        return self.engine.corpus.hits([(i, 0.5) for i in ids])

    def next_question(self):
        self.pending = SimpleNamespace(text=f"Question {len(self.turns) + 1}?", candidates=[], fallback=self.fallback)
        return self.pending

    def answer(self, text="", marked=(), not_relevant=(), question=None):
        self.relevant += [i for i in marked if i not in self.relevant]
        self.turns.append((self.pending.text, text))
        self.caption = f"{self.description}, {text}"
        return self.hits()
