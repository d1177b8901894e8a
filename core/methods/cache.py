"""Disk cache of backend outputs keyed by a hash of the inputs and the model id (issue 4, costs).

Wrappers with the backends' own methods sit in front of each backend, so a repeated query with unchanged
settings makes no backend call. The store is a diskcache.Cache (SQLite, values over 32 KiB in files beside it):
writes are atomic, it is safe across threads and processes, and it holds at most `cache_size_mb` megabytes,
evicting the least recently used entries first. A damaged or unreadable entry is logged and treated as a miss;
a cache that cannot be opened at all is logged and every lookup is a miss."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import logging
import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import diskcache
import numpy as np
from PIL import Image

from core.backends.base import GeneratedImage, JudgeAnswer, JudgeRequest
from core.prompts import judge as judge_prompts

log = logging.getLogger(__name__)

CULL_LIMIT = 10  # entries evicted at most per write once the cache is over its bound (diskcache's default)
TIMEOUT_S = 10.0  # seconds a lookup or write waits for another writer before it counts as a miss / is skipped
JOURNAL_LIMIT = 4 << 20  # bytes the SQLite write-ahead log is truncated to after a checkpoint
DB_FILES = (diskcache.core.DBNAME, diskcache.core.DBNAME + "-wal", diskcache.core.DBNAME + "-shm")
# the hand-written format used before diskcache: root/<kind>/<key[:2]>/<key>.<json|npy> (and its temporary files)
OLD_KINDS = ("embed", "llm", "judge", "generated", "caption", "reader")
_OLD_FILE = re.compile(r"^\.?[0-9a-f]{64}\.(json|npy)(\.\d+\.\d+\.tmp)?$")
_OLD_DIR = re.compile(r"^[0-9a-f]{2}$")
_old_checked: set[str] = set()
_old_lock = threading.Lock()


def key_of(*parts: Any) -> str:
    """sha256 of the JSON of the parts (images and arrays hashed by content)."""
    def enc(x: Any) -> Any:
        if isinstance(x, Image.Image):
            return "img:" + image_hash(x)
        if isinstance(x, np.ndarray):
            return "arr:" + hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()
        return x
    text = json.dumps([enc(p) for p in parts], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def image_hash(image: Image.Image) -> str:
    h = hashlib.sha256(f"{image.mode}{image.size}".encode())
    h.update(image.tobytes())
    return h.hexdigest()


def photo_key(photo) -> str:
    """A photo's identity for cache keys: its content hash when known, else path and size on disk."""
    if photo.sha256:
        return "sha:" + photo.sha256
    try:
        st = os.stat(photo.path)
        return f"path:{photo.path}:{st.st_size}:{int(st.st_mtime)}"
    except OSError:
        return f"path:{photo.path}"


class DamagedEntry(Exception):
    """An entry whose stored bytes cannot be read back as what was written."""


class _BytesDisk(diskcache.Disk):
    """diskcache's Disk for our values, which are always bytes: a stored pickle (never written by us) is damage,
    not something to unpickle, and a value file that has gone is logged before diskcache calls it a miss."""

    def store(self, value, read, key=diskcache.core.UNKNOWN):
        if type(value) is not bytes:
            raise TypeError("the disk cache stores bytes only")
        return super().store(value, read, key=key)

    def fetch(self, mode, filename, value, read):
        if mode not in (diskcache.core.MODE_RAW, diskcache.core.MODE_BINARY):
            raise DamagedEntry(f"stored with mode {mode}, not as bytes")
        try:
            return super().fetch(mode, filename, value, read)
        except OSError as exc:
            log.warning("disk cache: the value file %s of an entry cannot be read (%s); a miss", filename, exc)
            raise


def drop_old_format(root: Path) -> int:
    """Remove the entries of the hand-written format used before diskcache (root/<kind>/<xx>/<sha256>.json or
    .npy): nothing reads them any more, and they would sit outside the size bound. Only files of exactly that
    shape go, then the folders they leave empty; anything else stays. Says so in one log line per folder and
    process. Returns the number of files removed."""
    root = Path(root)
    with _old_lock:
        if str(root) in _old_checked:
            return 0
        _old_checked.add(str(root))
    kinds = [root / k for k in OLD_KINDS if (root / k).is_dir()]
    if not kinds:
        return 0
    removed = 0
    for kind in kinds:
        for sub in sorted(kind.iterdir()):
            if not (_OLD_DIR.match(sub.name) and sub.is_dir() and not sub.is_symlink()):
                continue
            for f in sub.iterdir():
                if _OLD_FILE.match(f.name) and f.is_file() and not f.is_symlink():
                    try:
                        f.unlink()
                        removed += 1
                    except FileNotFoundError:  # another process removed it first
                        pass
                    except OSError as exc:
                        log.warning("disk cache: could not remove the old-format entry %s: %s", f, exc)
            _rmdir_if_empty(sub)
        _rmdir_if_empty(kind)
    log.info("disk cache: %s held %d entries in the format used before diskcache; they are never read (every "
             "one would be a miss) and were removed", root, removed)
    return removed


def _rmdir_if_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:  # not empty (something that is not an old entry), or gone already
        pass


class DiskCache:
    """Entries under "<kind>:<key>" in a diskcache.Cache at `root`, at most `size_mb` megabytes (None:
    diskcache's own bound), least recently used evicted first; hit/miss counters per kind (this object's).

    diskcache measures its size as the SQLite file's pages plus the value files; the write-ahead log
    (cache.db-wal, truncated to JOURNAL_LIMIT after each checkpoint, about 4 MiB before one) and cache.db-shm
    come on top. An entry's write culls at most CULL_LIMIT old entries, so the cache may pass its bound by
    about one entry between writes; opening a cache over its bound (its bound was lowered) culls it at once.
    Culling takes whole batches, so a bound that holds fewer than CULL_LIMIT entries can lose the entry just
    written (the smallest bound, 1 MB, holds hundreds of embeddings or answers)."""

    def __init__(self, root: Path, size_mb: float | None = None):
        self.root = Path(root)
        self.size_limit = None if size_mb is None else max(1, int(float(size_mb) * (1 << 20)))
        self.hits: dict[str, int] = {}
        self.misses: dict[str, int] = {}
        self._lock = threading.Lock()
        self._put_failed = False
        self.store: diskcache.Cache | None = self._open()
        if self.store is not None:
            self.shrink()
        try:
            drop_old_format(self.root)
        except OSError as exc:
            log.warning("disk cache: could not look for old-format entries under %s: %s", self.root, exc)

    # ---- opening --------------------------------------------------------------------------------------
    def _open(self) -> diskcache.Cache | None:
        settings: dict[str, Any] = dict(eviction_policy="least-recently-used", cull_limit=CULL_LIMIT,
                                        sqlite_journal_size_limit=JOURNAL_LIMIT)
        if self.size_limit is not None:
            settings["size_limit"] = self.size_limit
        for attempt in (1, 2):
            try:
                return diskcache.Cache(str(self.root), timeout=TIMEOUT_S, disk=_BytesDisk, **settings)
            except sqlite3.DatabaseError as exc:  # a damaged database file: set it aside once and start afresh
                if _disk_trouble(exc):  # a full or failing disk, not a damaged file: nothing to set aside
                    log.error("disk cache: %s could not be opened (%s: the disk may be full); running without a "
                              "cache (every lookup is a miss) until there is room", self.root, exc)
                    return None
                if attempt == 1 and "locked" not in str(exc) and self._set_aside(exc):
                    continue
                failure: BaseException = exc
            except (OSError, diskcache.Timeout) as exc:
                failure = exc
            log.error("disk cache: %s could not be opened; running without a cache (every lookup is a miss)",
                      self.root, exc_info=failure)
            return None
        return None

    def _set_aside(self, exc: BaseException) -> bool:
        """A damaged database: move its files aside (cache.db.damaged-<time>) so a fresh one can be made."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        try:
            for name in DB_FILES:
                src = self.root / name
                if src.exists():
                    os.replace(src, self.root / f"{name}.damaged-{stamp}")
        except OSError:
            log.exception("disk cache: could not move the damaged database under %s aside", self.root)
            return False
        log.warning("disk cache: the database under %s is damaged (%s); moved it aside as *.damaged-%s and "
                    "started an empty cache (its entries are misses)", self.root, exc, stamp)
        return True

    def shrink(self) -> int:
        """Evict least recently used entries until the cache is inside its bound; returns how many went."""
        if self.store is None:
            return 0
        try:
            if self.store.volume() <= self.store.size_limit:
                return 0
            before = self.store.volume()
            gone = self.store.cull(retry=True)
        except (sqlite3.Error, OSError, diskcache.Timeout):
            log.exception("disk cache: could not shrink %s to its bound", self.root)
            return 0
        log.info("disk cache: %s was over its bound of %.1f MB (%.1f MB); evicted %d least recently used entries",
                 self.root, self.store.size_limit / (1 << 20), before / (1 << 20), gone)
        return gone

    def volume(self) -> int:
        """diskcache's measure of the cache's size in bytes (database pages plus value files); 0 without one."""
        if self.store is None:
            return 0
        try:
            return int(self.store.volume())
        except (sqlite3.Error, OSError):
            return 0

    def close(self) -> None:
        if self.store is not None:
            self.store.close()

    # ---- entries --------------------------------------------------------------------------------------
    def _count(self, table: dict[str, int], kind: str) -> None:
        with self._lock:
            table[kind] = table.get(kind, 0) + 1

    def _get(self, kind: str, key: str, decode: Callable[[bytes], Any], count_miss: bool) -> Any:
        data = None
        if self.store is not None:
            try:
                data = self.store.get(f"{kind}:{key}")
            except DamagedEntry as exc:
                log.warning("disk cache: the %s entry %s is damaged (%s); a miss", kind, key, exc)
            except (sqlite3.Error, OSError, diskcache.Timeout) as exc:
                log.warning("disk cache: reading the %s entry %s failed (%s: %s); a miss", kind, key,
                            type(exc).__name__, exc)
        value = None
        if data is not None:
            try:
                value = decode(data)
            except Exception as exc:  # any undecodable value is a damaged entry: a miss, written anew
                log.warning("disk cache: the %s entry %s is damaged (%s: %s); a miss", kind, key,
                            type(exc).__name__, exc)
        if value is None:
            if count_miss:
                self._count(self.misses, kind)
            return None
        self._count(self.hits, kind)
        return value

    def _put(self, kind: str, key: str, data: bytes) -> None:
        if self.store is None:
            return
        try:
            self.store.set(f"{kind}:{key}", data)
        except (sqlite3.Error, OSError, diskcache.Timeout) as exc:  # a cache that cannot write only costs time
            if not self._put_failed:
                log.warning("disk cache: writing to %s failed (%s: %s); answers are not cached until it works "
                            "again (further failures are logged at debug level)", self.root, type(exc).__name__,
                            exc)
                self._put_failed = True
            else:
                log.debug("disk cache: writing the %s entry %s failed: %s", kind, key, exc)

    def get_json(self, kind: str, key: str, count_miss: bool = True) -> Any:
        return self._get(kind, key, lambda b: json.loads(b.decode("utf-8")), count_miss)

    def put_json(self, kind: str, key: str, value: Any) -> None:
        self._put(kind, key, json.dumps(value, ensure_ascii=False).encode("utf-8"))

    def get_array(self, kind: str, key: str) -> np.ndarray | None:
        return self._get(kind, key, lambda b: np.load(io.BytesIO(b), allow_pickle=False), True)

    def put_array(self, kind: str, key: str, value: np.ndarray) -> None:
        buf = io.BytesIO()
        np.save(buf, np.asarray(value), allow_pickle=False)
        self._put(kind, key, buf.getvalue())

    def stats(self) -> dict[str, Any]:
        return {"hits": dict(self.hits), "misses": dict(self.misses),
                "hit_total": sum(self.hits.values()), "miss_total": sum(self.misses.values())}


class CachedEmbedder:
    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        for name in ("model_id", "dim", "is_standin", "max_text_tokens"):
            setattr(self, name, getattr(inner, name, None))

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def _cached(self, kind: str, items: Sequence[Any], compute: Callable[[list], np.ndarray]) -> np.ndarray:
        keys = [key_of(self.model_id, kind, it) for it in items]
        rows: list[np.ndarray | None] = [self.cache.get_array("embed", k) for k in keys]
        todo = [i for i, r in enumerate(rows) if r is None]
        if todo:
            fresh = np.asarray(compute([items[i] for i in todo]), dtype=np.float32)
            for i, vec in zip(todo, fresh):
                rows[i] = vec
                self.cache.put_array("embed", keys[i], vec)
        if not rows:
            return np.zeros((0, self.dim or 0), np.float32)
        return np.stack(rows).astype(np.float32)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        # an embedder that changes how it reads words (not its weights) says so in `text_version`: its cached
        # text vectors from before are then misses, while its picture vectors stay valid
        version = getattr(self.inner, "text_version", "")
        return self._cached(f"text:{version}" if version else "text", list(texts), self.inner.embed_texts)

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        return self._cached("image", list(images), self.inner.embed_images)


def _plain(x: Any) -> bool:
    """True for JSON data (what a key can hold exactly): strings, numbers, booleans, None, lists and dicts."""
    if x is None or isinstance(x, (str, int, float, bool)):
        return True
    if isinstance(x, (list, tuple)):
        return all(_plain(v) for v in x)
    if isinstance(x, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in x.items())
    return False


class CachedLLM:
    """Caches chat answers by the model, the messages and every keyword argument of the call. Each keyword
    (json_schema with its request-words patterns, and any other a backend takes) reaches the inner LLM as given;
    a call with an argument that is not plain JSON data goes to the LLM uncached. What the cache does not
    define (own_words, is_tiny, ...) is the inner LLM's, so callers that ask the model's facts see them."""

    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        self.model_id, self.is_standin = inner.model_id, inner.is_standin
        self.notice = getattr(inner, "notice", "")  # the model's caveat (tiny SmolLM2), shown with its answers

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "cache"):  # not yet set (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def chat(self, messages, *, temperature: float = 0.0, seed: int = 0, max_tokens: int = 256,
             json_schema: dict | None = None, **options: Any) -> str:
        def call() -> str:
            return self.inner.chat(messages, temperature=temperature, seed=seed, max_tokens=max_tokens,
                                   json_schema=json_schema, **options)

        if not _plain(options):
            log.debug("LLM call with arguments that are not plain data (%s): not cached", sorted(options))
            return call()
        parts: list[Any] = [self.model_id, [(m.role, m.content) for m in messages], temperature, seed, max_tokens,
                            json_schema]
        if options:  # a call without extra arguments keeps the key it always had
            parts.append(options)
        key = key_of(*parts)
        hit = self.cache.get_json("llm", key)
        if hit is not None:
            return hit["text"]
        text = call()
        self.cache.put_json("llm", key, {"text": text})
        return text


_SAMPLE = JudgeRequest(image=None, question="Q?", query="q", context="c", history=(("a?", "yes"),))


def judge_prompt_version(judge) -> str:
    """A hash of what the judge's prompt template makes of a fixed sample request, plus the backend's own
    prompt version: part of every key that caches judge answers, so editing a prompt is a cache miss."""
    return key_of(getattr(judge, "prompt_id", ""), judge_prompts.SYSTEM, judge_prompts.user_text(_SAMPLE))


class CacheMiss(Exception):
    """Raised by a cache-only lookup that found nothing."""


class CachedJudge:
    """Caches answers by (model, photo or image, question, query, context, history, vote). `ask` accepts a
    request whose image is None together with a `load` callable: the photo is then only read on a miss."""

    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        self.model_id, self.is_standin = inner.model_id, inner.is_standin

    @property
    def prompt_id(self) -> str:
        return getattr(self.inner, "prompt_id", "")

    def ask(self, request: JudgeRequest, load: Callable[[], Image.Image] | None = None, vote: int | None = None,
            cache_only: bool = False) -> JudgeAnswer:
        """`vote`, when given, overrides request.vote; the inner judge receives the vote in the request."""
        if vote is not None and vote != request.vote:
            request = dataclasses.replace(request, vote=int(vote))
        who = photo_key(request.photo) if request.photo is not None else request.image
        # the key holds everything that decides the answer: model, photo, the rendered prompt (so an edited
        # prompt template is a miss), the backend's own prompt version if it has one, and the vote
        key = key_of(self.model_id, getattr(self.inner, "prompt_id", ""), who, judge_prompts.SYSTEM,
                     judge_prompts.user_text(request), request.vote)
        hit = self.cache.get_json("judge", key, count_miss=not cache_only)
        if hit is not None:
            return JudgeAnswer(hit["answer"], hit["top_logprobs"], hit.get("reason", ""),
                               bool(hit.get("abstained", False)), tuple(hit.get("unchecked") or ()))
        if cache_only:
            raise CacheMiss(key)
        if request.image is None:
            if load is None:
                raise ValueError("a judge request needs an image or a loader")
            request = dataclasses.replace(request, image=load())
        ans = self.inner.ask(request)
        self.cache.put_json("judge", key, {"answer": ans.answer, "top_logprobs": ans.top_logprobs,
                                           "reason": ans.reason, "abstained": bool(getattr(ans, "abstained", False)),
                                           "unchecked": list(getattr(ans, "unchecked", ()) or ())})
        return ans

    def unseen(self, text: str) -> list[str]:
        """The phrases of `text` the judge says it cannot check (none when it does not say)."""
        found = getattr(self.inner, "unseen", None)
        return list(found(text)) if callable(found) else []


class CachedGenerator:
    """Keeps each picture as a PNG keyed by (prompt, model, seed, size); `last_path` tells where it is."""

    def __init__(self, inner, cache: DiskCache, out_dir: Path):
        self.inner, self.cache, self.out_dir = inner, cache, Path(out_dir)
        self.model_id, self.is_standin = inner.model_id, inner.is_standin

    def generate_to_file(self, prompt: str, *, seed: int, size: int = 224) -> tuple[GeneratedImage, Path]:
        key = key_of(self.model_id, prompt, seed, size)
        png = self.out_dir / f"{key[:24]}.png"
        meta = self.cache.get_json("generated", key)
        if meta is not None and png.is_file():
            with Image.open(png) as im:
                image = im.convert("RGB")
            return GeneratedImage(image, prompt, seed, meta["model_id"], meta.get("ignored_words", [])), png
        out = self.inner.generate(prompt, seed=seed, size=size)
        png.parent.mkdir(parents=True, exist_ok=True)
        tmp = png.with_name(f".{png.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        out.image.convert("RGB").save(tmp, format="PNG")
        os.replace(tmp, png)
        self.cache.put_json("generated", key, {"model_id": out.model_id, "ignored_words": list(out.ignored_words)})
        return out, png

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage:
        return self.generate_to_file(prompt, seed=seed, size=size)[0]

    @property
    def supports_references(self) -> bool:
        inner = self.inner
        if hasattr(inner, "supports_references"):
            return bool(inner.supports_references)
        return callable(getattr(inner, "generate_from_references", None))

    def generate_from_references_to_file(self, prompt: str, references, *, seed: int,
                                         size: int = 224) -> tuple[GeneratedImage, Path]:
        """Like generate_to_file, composing from reference pictures; keyed also by each reference's pixels and
        instruction."""
        refs = [(image_hash(r.image), r.instruction, r.photo_id) for r in references]
        key = key_of(self.model_id, "references", prompt, refs, seed, size)
        return self._stored(key, lambda: self.inner.generate_from_references(prompt, list(references), seed=seed,
                                                                              size=size))

    def _stored(self, key: str, make) -> tuple[GeneratedImage, Path]:
        png = self.out_dir / f"{key[:24]}.png"
        meta = self.cache.get_json("generated", key)
        if meta is not None and png.is_file():
            with Image.open(png) as im:
                image = im.convert("RGB")
            return GeneratedImage(image, meta.get("prompt", ""), meta.get("seed", 0), meta["model_id"],
                                  meta.get("ignored_words", [])), png
        out = make()
        png.parent.mkdir(parents=True, exist_ok=True)
        tmp = png.with_name(f".{png.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        out.image.convert("RGB").save(tmp, format="PNG")
        os.replace(tmp, png)
        self.cache.put_json("generated", key, {"model_id": out.model_id, "ignored_words": list(out.ignored_words),
                                               "prompt": out.prompt, "seed": out.seed})
        return out, png


class CachedCaptioner:
    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        self.model_id, self.is_standin = inner.model_id, inner.is_standin

    def caption(self, image: Image.Image | None, photo=None, load: Callable[[], Image.Image] | None = None) -> str:
        who = [photo_key(photo), photo.caption, photo.scientific_name, photo.common_name] if photo is not None \
            else image
        hint = " / ".join(n for n in (photo.common_name, photo.scientific_name) if n) if photo is not None else ""
        key = key_of(self.model_id, getattr(self.inner, "prompt_id", ""), who, judge_prompts.CAPTION_SYSTEM,
                     judge_prompts.caption_text(hint))
        hit = self.cache.get_json("caption", key)
        if hit is not None:
            return hit["text"]
        if image is None:
            image = load() if load is not None else None
        text = self.inner.caption(image, photo)
        self.cache.put_json("caption", key, {"text": text})
        return text


class CachedReader:
    """Caches a photo reader's answers by (model, question, the photos' identities); `read` takes photos with
    loaders, so cached answers never read a picture."""

    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        self.model_id, self.is_standin = inner.model_id, inner.is_standin

    def read(self, question: str, photos: Sequence[tuple[Any, Callable[[], Image.Image]]]) -> str:
        """`photos`: (photo, load) pairs in the order the reader should see them."""
        from core.prompts import answer as answer_prompts

        key = key_of(self.model_id, answer_prompts.READER_SYSTEM, answer_prompts.reader_intro(question),
                     [(int(p.id), photo_key(p)) for p, _ in photos])
        hit = self.cache.get_json("reader", key)
        if hit is not None:
            return hit["text"]
        text = self.inner.read(question, [(int(p.id), load()) for p, load in photos])
        self.cache.put_json("reader", key, {"text": text})
        return text


def _disk_trouble(exc: BaseException) -> bool:
    """SQLite's words for a disk that is full or failing (the file itself may be fine)."""
    text = str(exc).lower()
    return "disk i/o" in text or "database or disk is full" in text
