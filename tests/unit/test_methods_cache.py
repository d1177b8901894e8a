"""Disk cache, budgets and unavailable backends."""
from __future__ import annotations

import sqlite3
from contextlib import closing

import numpy as np
import pytest
from PIL import Image

from core.backends.base import JudgeRequest
from core.contracts.errors import BackendError, BudgetExceeded, ConfigError
from core.contracts.records import Photo
from core.methods.budget import Budget, BudgetedJudge
from core.methods.cache import CachedEmbedder, CachedGenerator, CachedJudge, CachedLLM
from core.methods.cache_keys import key_of
from core.methods.cached_backends import CachedBackends
from core.methods.disk_cache import DiskCache
from tests.fakes import FakeEmbedder, FakeGenerator, FakeJudge, FakeLLM


def test_key_depends_on_every_input_and_hashes_images():
    a = Image.new("RGB", (4, 4), (1, 2, 3))
    b = Image.new("RGB", (4, 4), (1, 2, 4))
    assert key_of("m", a, "q") == key_of("m", a.copy(), "q")
    assert len({key_of("m", a, "q"), key_of("m", b, "q"), key_of("m2", a, "q"), key_of("m", a, "q2")}) == 4


def test_cached_wrappers_call_the_backend_once(tmp_path):
    cache = DiskCache(tmp_path)
    emb = FakeEmbedder(4)
    ce = CachedEmbedder(emb, cache)
    v1 = ce.embed_texts(["a frog", "a bird"])
    v2 = ce.embed_texts(["a bird", "a frog", "a newt"])
    assert np.allclose(v1[0], v2[1]) and emb.calls == [("texts", 2), ("texts", 1)]
    llm = FakeLLM(default="hello")
    cl = CachedLLM(llm, DiskCache(tmp_path))  # a new object on the same folder sees the entry
    from core.backends.base import ChatMessage

    assert cl.chat([ChatMessage("user", "x")]) == "hello" == cl.chat([ChatMessage("user", "x")])
    assert len(llm.calls) == 1
    gen = FakeGenerator(colours={0: (9, 9, 9)})
    cg = CachedGenerator(gen, cache, tmp_path / "generated")
    out, path = cg.generate_to_file("p", seed=0, size=8)
    again, path2 = cg.generate_to_file("p", seed=0, size=8)
    assert path == path2 and path.is_file() and len(gen.calls) == 1 and again.image.getpixel((0, 0)) == (9, 9, 9)


def _damage(root, name: str, data: bytes) -> None:
    """Overwrite the stored bytes of the entry `name` in the cache's SQLite file, as damage on disk would."""
    with closing(sqlite3.connect(root / "cache.db")) as con, con:
        assert con.execute("UPDATE Cache SET value = ? WHERE key = ?", (data, name)).rowcount == 1


def test_damaged_entry_is_a_miss(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put_json("llm", "ab" * 32, {"text": "x"})
    _damage(tmp_path, "llm:" + "ab" * 32, b"{broken")
    assert cache.get_json("llm", "ab" * 32) is None and cache.misses["llm"] == 1


def test_judge_cache_reads_the_photo_only_on_a_miss(tmp_path):
    judge = FakeJudge(lambda r: 0.9)
    cj = CachedJudge(judge, DiskCache(tmp_path))
    loads = []

    def load():
        loads.append(1)
        return Image.new("RGB", (4, 4))

    req = JudgeRequest(image=None, question="Is there a frog?", photo=Photo(path="x.png", id=1, sha256="abc"))
    first = cj.ask(req, load=load)
    second = cj.ask(req, load=load)
    assert first.top_logprobs == second.top_logprobs and len(judge.calls) == 1 and len(loads) == 1
    assert judge.calls[0].image is not None


def test_budget_stops_calls_and_reports(tmp_path):
    budget = Budget(max_generated=1, max_judge_calls=2)
    bj = BudgetedJudge(FakeJudge(), budget)
    req = JudgeRequest(image=Image.new("RGB", (2, 2)), question="q")
    bj.ask(req), bj.ask(req)
    with pytest.raises(BudgetExceeded):
        bj.ask(req)
    assert budget.used["judge"] == 2 and "max_judge_calls" in budget.notices()[0]


class BrokenBackends:
    embedder = FakeEmbedder(4)

    @property
    def judge(self):
        raise ConfigError("no such judge", "fix it")

    def describe(self):
        return {}


def test_unavailable_backend_raises_backend_error_on_use(tmp_path):
    cb = CachedBackends(BrokenBackends(), tmp_path / "c", tmp_path / "g")
    judge = cb.judge
    with pytest.raises(BackendError):
        judge.ask(JudgeRequest(image=Image.new("RGB", (2, 2)), question="q"))
    assert cb.describe()["judge"]["error"] == "no such judge (fix it)"
    assert cb.calls == {"judge": 1}
