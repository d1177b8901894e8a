"""Fakes shared by the UI handler tests: an engine with a tiny corpus, a scripted pipeline and dialogue."""
from __future__ import annotations

from dataclasses import replace
from datetime import date
from types import SimpleNamespace

import numpy as np
from PIL import Image

from core.records import Hit, Photo
from core.search import SearchResult
from core.settings import Settings

N_PHOTOS = 12


def make_photos(folder) -> list[Photo]:
    photos = []
    for i in range(1, N_PHOTOS + 1):
        path = folder / f"p{i}.png"
        Image.new("RGB", (8, 8), (i * 20 % 255, 80, 120)).save(path)
        photos.append(Photo(path=str(path), id=i, scientific_name=f"Rana {i}", common_name=f"frog {i}",
                            observed_on=date(2024, 5, i), latitude=45.0, longitude=6.0, license="cc-by",
                            rights_holder="someone", caption=f"<script>alert({i})</script> a frog"))
    return photos


class FakeSearchService:
    def __init__(self, photos, settings):
        self.by_id = {p.id: p for p in photos}
        self.settings = settings
        self.startup_notices: list[str] = []
        rng = np.random.default_rng(0)
        self._vecs = {p.id: v / np.linalg.norm(v) for p, v in zip(photos, rng.normal(size=(len(photos), 8)))}
        self.calls: list[dict] = []

    def photos(self, ids):
        return [self.by_id[int(i)] for i in ids if int(i) in self.by_id]

    def hits(self, ranked):
        return [Hit(rank=r, photo_id=i, score=s, photo=self.by_id.get(i)) for r, (i, s) in enumerate(ranked, 1)]

    def vectors(self, ids):
        return np.stack([self._vecs[int(i)] for i in ids])

    def pool(self, filters):
        return None if filters is None or filters.is_empty() else np.array(sorted(self.by_id))

    def embed_query(self, text, notices=None):
        return self._vecs[1]

    def rank_vector(self, vec, k, pool):
        scores = sorted(((float(vec @ v), i) for i, v in self._vecs.items()), reverse=True)[:k]
        return [(i, s) for s, i in scores]

    def load_image(self, photo):
        return Image.open(photo.path).convert("RGB")

    def search(self, query="", *, k=None, filters=None, image=None):
        self.calls.append({"query": query, "k": k, "filters": filters, "image": image is not None})
        ranked = [(i, 1.0 - i / 100) for i in sorted(self.by_id)][: k or 20]
        return SearchResult(query=query or "(example photo)", method="baseline", hits=self.hits(ranked),
                            timings_ms={"total": 1.0}, backends={"embedder": {"model_id": "fake", "standin": True}},
                            notices=["a notice"], filters={})


class FakeEngine:
    def __init__(self, tmp_path, **settings):
        self.settings = Settings(data_dir=str(tmp_path / "data"), **settings)
        self.search = FakeSearchService(make_photos(tmp_path), self.settings)
        self.backends = SimpleNamespace(describe=lambda: {"embedder": {"model_id": "fake", "standin": True}})

    def ensure_corpus(self):
        return ["BANNER"]

    def standin_in_use(self):
        return True


def rerank_stage(ids):
    return {"subquestions": ["Is there a frog?", "Is it calling?"],
            "photos": [{"id": i, "score": 1.0, "answers": [
                {"question": "Is there a frog?", "answer": "yes", "p_yes": 0.9, "reason": "<b>green</b> body"},
                {"question": "Is it calling?", "answer": "no", "p_yes": 0.2, "reason": "mouth closed"}]}
                       for i in ids]}


class FakeMethods:
    """Scripted pipeline: events for two stages, then a result (reversed order, with rerank artefacts)."""

    def __init__(self, engine, fail: Exception | None = None):
        self.engine, self.fail = engine, fail
        self.requests: list = []
        self.pipeline = SimpleNamespace(backends=engine.backends)

    def _result(self, request):
        base = self.engine.search.search(request.query, k=request.k)
        hits = [replace(h, rank=r) for r, h in enumerate(reversed(base.hits), 1)]
        return replace(base, method=request.method + ("+rerank:" + request.rerank if request.rerank != "none" else ""),
                       hits=hits, stages={"rerank": rerank_stage([h.photo_id for h in hits]),
                                          "visret": {"visualizations": [{"path": hits[0].photo.path, "seed": 0}]}})

    def run(self, request, on_event=None):
        self.requests.append(request)
        return self._result(request)

    def stream(self, request):
        self.requests.append(request)
        yield {"type": "stage", "stage": "generate", "status": "done", "ms": 5.0}
        yield {"type": "visualization", "ok": True, "path": "/x.png", "seed": 0}
        if self.fail is not None:
            yield {"type": "error", "error": self.fail}
            return
        yield {"type": "stage", "stage": "rerank", "status": "done", "ms": 7.0}
        yield {"type": "result", "result": self._result(request)}

    def dialogue(self, description, filters=None, k=None):
        return FakeDialogue(self.engine, description)


class FakeDialogue:
    def __init__(self, engine, description):
        self.engine, self.description, self.caption = engine, description, description
        self.turns: list[tuple[str, str]] = []
        self.notices: list[str] = []
        self.pending = None
        self.marked: list[int] = []

    def hits(self, k=None):
        ids = sorted(self.engine.search.by_id)[len(self.turns):][:5]
        return self.engine.search.hits([(i, 0.5) for i in ids])

    def next_question(self):
        self.pending = SimpleNamespace(text=f"Question {len(self.turns) + 1}?", candidates=[])
        return self.pending

    def answer(self, text="", marked=(), not_relevant=(), question=None):
        self.marked += list(marked)
        self.turns.append((self.pending.text, text))
        self.caption = f"{self.description}, {text}"
        return self.hits()
