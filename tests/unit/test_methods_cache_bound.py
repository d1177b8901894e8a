"""The disk cache on diskcache: a size bound with least-recently-used eviction, damage of every kind is a logged
miss, old-format entries are dropped, threads and processes share one cache; CachedLLM passes every keyword
of a chat call through (the request's own words reach a small model) and keys on all of them."""
from __future__ import annotations

import logging
import multiprocessing
import re
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from core.backends.base import ChatMessage
from core.config import load_settings
from core.methods import llm_tasks
from core.methods.cache import CachedLLM
from core.methods.cache_keys import key_of
from core.methods.cached_backends import CachedBackends
from core.methods.disk_cache import DiskCache
from tests.fakes import FakeEmbedder, FakeLLM

KIB = 1 << 10
# diskcache counts the SQLite file's pages and the value files; a write culls only after it lands, so the
# cache may pass its bound by about one entry and the pages of one transaction before the next write
SLACK = 64 * KIB


def _row(i: int, n: int = 512) -> np.ndarray:
    return np.full(n, i, np.float32)  # 2 KiB + the .npy header: stored inside the SQLite file


def _files_bytes(root: Path, names=None) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and (names is None or names(p)))


def _db_and_values(p: Path) -> bool:
    return p.name == "cache.db" or p.suffix == ".val"


def test_filling_past_the_bound_evicts_the_least_recently_used(tmp_path):
    bound = 256 * KIB
    cache = DiskCache(tmp_path, size_mb=bound / (1 << 20))
    for i in range(400):  # about 870 KiB written into a 256 KiB cache
        cache.put_array("embed", f"k{i}", _row(i))
        if i % 10 == 0:
            assert cache.get_array("embed", "k0") is not None  # used all along: never evicted
        assert cache.volume() <= bound + SLACK
    on_disk = _files_bytes(tmp_path, _db_and_values)
    assert on_disk <= bound + SLACK, on_disk
    # the write-ahead log and shared-memory file come on top: the log is truncated to 4 MiB after a checkpoint
    assert _files_bytes(tmp_path) - on_disk <= 5 << 20
    assert np.array_equal(cache.get_array("embed", "k0"), _row(0))
    assert all(np.array_equal(cache.get_array("embed", f"k{i}"), _row(i)) for i in range(390, 400))
    assert cache.get_array("embed", "k1") is None  # written early and never read again: evicted
    assert cache.hits["embed"] >= 11 and cache.misses["embed"] == 1


def test_values_kept_in_files_are_evicted_with_their_files(tmp_path):
    # a write over the bound evicts up to CULL_LIMIT (10) entries, so a bound that holds fewer than ten values
    # would lose the value just written: 2 MiB holds about 32 of these 64 KiB values
    bound = 2048 * KIB
    cache = DiskCache(tmp_path, size_mb=bound / (1 << 20))
    for i in range(100):  # diskcache keeps values of 32 KiB and more in files
        cache.put_array("embed", f"big{i}", _row(i, 16 * KIB))
        assert cache.get_array("embed", f"big{i}") is not None
    files = list(tmp_path.rglob("*.val"))
    assert 10 < len(files) <= bound // (64 * KIB) + 1
    assert _files_bytes(tmp_path, _db_and_values) <= bound + 64 * KIB + SLACK
    assert np.array_equal(cache.get_array("embed", "big99"), _row(99, 16 * KIB))
    assert cache.get_array("embed", "big0") is None


def test_a_cache_over_a_lowered_bound_shrinks_when_opened(tmp_path, caplog):
    big = DiskCache(tmp_path, size_mb=4)
    for i in range(300):
        big.put_array("embed", f"k{i}", _row(i))
    assert big.volume() > 512 * KIB
    big.close()
    with caplog.at_level(logging.INFO, logger="core.methods.disk_cache"):
        small = DiskCache(tmp_path, size_mb=0.25)
    assert small.volume() <= 256 * KIB + SLACK
    assert any("over its bound" in r.getMessage() for r in caplog.records)
    assert np.array_equal(small.get_array("embed", "k299"), _row(299))  # the most recent stay
    assert small.get_array("embed", "k0") is None


def test_the_bound_comes_from_the_setting(tmp_path):
    assert load_settings(environ={}).cache_size_mb == 1024
    settings = load_settings(environ={"ECOLENS_CACHE_SIZE_MB": "3"}, data_dir=str(tmp_path))
    cb = CachedBackends(object(), settings.path("cache"), settings.path("generated"), settings.cache_size_mb)
    assert cb.cache.store.size_limit == 3 << 20 and cb.cache.store.eviction_policy == "least-recently-used"
    from core.contracts.errors import ConfigError

    with pytest.raises(ConfigError):
        load_settings(environ={"ECOLENS_CACHE_SIZE_MB": "0"})


def test_a_damaged_value_file_is_a_logged_miss_and_is_written_anew(tmp_path, caplog):
    cache = DiskCache(tmp_path)
    cache.put_array("embed", "big", _row(1, 16 * KIB))
    (value_file,) = tmp_path.rglob("*.val")
    value_file.write_bytes(value_file.read_bytes()[:100])  # cut short
    with caplog.at_level(logging.WARNING, logger="core.methods.disk_cache"):
        assert cache.get_array("embed", "big") is None
    assert cache.misses["embed"] == 1 and any("damaged" in r.getMessage() for r in caplog.records)
    value_file.unlink()  # gone altogether: a miss as well
    assert cache.get_array("embed", "big") is None and cache.misses["embed"] == 2
    cache.put_array("embed", "big", _row(2, 16 * KIB))
    assert np.array_equal(cache.get_array("embed", "big"), _row(2, 16 * KIB))


def test_a_damaged_json_entry_is_a_logged_miss(tmp_path, caplog):
    from tests.unit.test_methods_cache import _damage

    cache = DiskCache(tmp_path)
    cache.put_json("judge", "k", {"answer": "yes"})
    _damage(tmp_path, "judge:k", b"\xff\xfe not json")
    with caplog.at_level(logging.WARNING, logger="core.methods.disk_cache"):
        assert cache.get_json("judge", "k") is None
    assert any("damaged" in r.getMessage() for r in caplog.records)
    with closing(sqlite3.connect(tmp_path / "cache.db")) as con, con:  # a row claiming a pickle: never unpickled
        con.execute("UPDATE Cache SET mode = 4, value = ? WHERE key = ?", (b"\x80\x04K\x01.", "judge:k"))
    assert cache.get_json("judge", "k") is None and cache.misses["judge"] == 2


def test_a_damaged_database_is_set_aside_and_a_fresh_cache_starts(tmp_path, caplog):
    DiskCache(tmp_path).put_json("llm", "k", {"text": "x"})
    (tmp_path / "cache.db").write_bytes(b"this is not a database" * 200)
    for name in ("cache.db-wal", "cache.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    with caplog.at_level(logging.WARNING, logger="core.methods.disk_cache"):
        cache = DiskCache(tmp_path)
    assert cache.store is not None and list(tmp_path.glob("cache.db.damaged-*"))
    assert any("damaged" in r.getMessage() for r in caplog.records)
    assert cache.get_json("llm", "k") is None
    cache.put_json("llm", "k", {"text": "y"})
    assert cache.get_json("llm", "k") == {"text": "y"}


def test_a_cache_that_cannot_be_opened_is_all_misses(tmp_path, caplog):
    root = tmp_path / "not-a-folder"
    root.write_text("a file where the cache folder should be")
    with caplog.at_level(logging.ERROR, logger="core.methods.disk_cache"):
        cache = DiskCache(root)
    assert cache.store is None and any("could not be opened" in r.getMessage() for r in caplog.records)
    cache.put_json("llm", "k", {"text": "x"})
    assert cache.get_json("llm", "k") is None and cache.misses == {"llm": 1} and cache.volume() == 0


def test_old_format_entries_are_removed_once_and_nothing_else(tmp_path, caplog):
    old_json = tmp_path / "llm" / "ab" / ("ab" * 32 + ".json")
    old_npy = tmp_path / "embed" / "cd" / ("cd" * 32 + ".npy")
    old_tmp = tmp_path / "judge" / "ef" / (".%s.json.12.34.tmp" % ("ef" * 32))
    for f in (old_json, old_npy, old_tmp):
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("{}")
    keep = [tmp_path / "llm" / "notes.txt", tmp_path / "llm" / "ab" / "mine.json", tmp_path / "other" / "x.json"]
    for f in keep:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("keep me")
    with caplog.at_level(logging.INFO, logger="core.methods.disk_cache"):
        cache = DiskCache(tmp_path)
        DiskCache(tmp_path)
    assert not old_json.exists() and not old_npy.exists() and not old_tmp.exists()
    assert not (tmp_path / "embed").exists() and not (tmp_path / "judge").exists()
    assert all(f.read_text() == "keep me" for f in keep)
    lines = [r.getMessage() for r in caplog.records if "format used before diskcache" in r.getMessage()]
    assert len(lines) == 1 and "3 entries" in lines[0]
    assert cache.get_json("llm", "ab" * 32) is None  # an old entry is a miss


def _write_many(root: str, start: int) -> None:
    cache = DiskCache(Path(root), size_mb=64)
    for i in range(start, start + 60):
        cache.put_json("llm", f"k{i}", {"text": str(i)})


def test_threads_and_processes_share_one_cache(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_write_many, args=(str(tmp_path), s)) for s in (0, 60)]
    for p in procs:
        p.start()
    cache = DiskCache(tmp_path, size_mb=64)
    threads = [threading.Thread(target=lambda s=s: [cache.put_json("llm", f"k{i}", {"text": str(i)})
                                                    for i in range(s, s + 60)]) for s in (120, 180)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert all(cache.get_json("llm", f"k{i}") == {"text": str(i)} for i in range(240))


class KwargsLLM(FakeLLM):
    """A fake LLM that records every keyword argument of every call."""

    def __init__(self, *args, own_words: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.own_words = own_words
        self.kwargs: list[dict] = []

    def chat(self, messages, **kwargs):
        self.kwargs.append(kwargs)
        known = {k: kwargs[k] for k in ("temperature", "seed", "max_tokens", "json_schema") if k in kwargs}
        return super().chat(messages, **known)


def test_cached_llm_passes_every_keyword_through_and_keys_on_it(tmp_path):
    inner = KwargsLLM(default="answer")
    llm = CachedLLM(inner, DiskCache(tmp_path))
    msgs = [ChatMessage("user", "x")]
    schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": "^Is (the|heron)\\?$"}}}
    assert llm.chat(msgs, json_schema=schema, grammar='root ::= "yes"', pattern="^Is .*\\?$") == "answer"
    assert inner.kwargs[-1] == dict(temperature=0.0, seed=0, max_tokens=256, json_schema=schema,
                                    grammar='root ::= "yes"', pattern="^Is .*\\?$")
    llm.chat(msgs, json_schema=schema, grammar='root ::= "yes"', pattern="^Is .*\\?$")
    assert len(inner.kwargs) == 1  # the same call: a hit
    llm.chat(msgs, json_schema=schema, grammar='root ::= "no"', pattern="^Is .*\\?$")
    llm.chat(msgs, json_schema=schema)
    assert len(inner.kwargs) == 3 and "grammar" not in inner.kwargs[-1]  # each difference is a miss
    llm.chat(msgs, json_schema=schema, grammar=object())  # not plain data: passed through, never cached
    llm.chat(msgs, json_schema=schema, grammar=object())
    assert len(inner.kwargs) == 5
    # a call without extra arguments keeps the key it had before extra arguments were passed through
    plain = key_of(inner.model_id, [("user", "x")], 0.0, 0, 256, schema)
    assert llm.cache.get_json("llm", plain) == {"text": "answer"}


def test_the_requests_own_words_reach_a_small_model_through_the_cache(tmp_path):
    class Raw:
        embedder = FakeEmbedder(4)
        llm = KwargsLLM(own_words=True)

    cached = CachedBackends(Raw(), tmp_path / "c", tmp_path / "g").llm
    assert cached.own_words is True
    llm_tasks.subquestions(cached, "a heron eating a fish", "", 2, [])
    pattern = Raw.llm.kwargs[0]["json_schema"]["properties"]["questions"]["items"]["pattern"]
    assert re.fullmatch(pattern, "Is the heron eating a fish?")
    assert not re.fullmatch(pattern, "Is the heron nesting in the Pacific Northwest?")  # not the request's words
