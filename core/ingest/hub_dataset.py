"""A photo collection given as a Hugging Face hub dataset: corpus = hf://datasets/OWNER/NAME[@REVISION][:SPLIT]
(e.g. hf://datasets/evendrow/INQUIRE-Rerank:validation). Its parquet files for the split are downloaded once
into data_dir/hub/datasets/OWNER/NAME/REVISION (resumable, size- and checksum-checked, within hub_max_gb:
core/backends/hub_download.py) and then ingested through the INQUIRE parquet source. A file `complete.json`
beside them records what was fetched: with it, a later start needs no network at all. With them come the
split's precomputed vectors, when the repository has them (`vectors/<split>.parquet`: used by the ingest when
their model is the embedder's, core/ingest/companion_vectors.py), and the dataset card (README.md, whose
licence the banner names: core/ingest/dataset_card.py). A deployer who cannot add files to the dataset's own
repository names their own in the setting `vectors_repo` (hf://datasets/OWNER/NAME): its `vectors/<split>.parquet`
(written by `python app.py export vectors`) is downloaded beside, into data_dir/hub/datasets/OWNER/NAME, and
recorded in the same marker; one named after the dataset was downloaded is fetched at the next start.

The dataset's benchmark queries (its `query` column) are offered as example searches; their relevance labels
are never read here (they belong to the evaluation)."""
from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from core.contracts.errors import InputError
from core.ingest import dataset_card

log = logging.getLogger(__name__)
PREFIX = "hf://datasets/"
_SPEC = re.compile(r"hf://datasets/(?P<owner>[A-Za-z0-9][\w.-]*)/(?P<name>[\w.-]+)"
                   r"(?:@(?P<revision>[\w./-]+?))?(?::(?P<split>[\w.-]+))?")
MARKER = "complete.json"
EXAMPLE = "hf://datasets/evendrow/INQUIRE-Rerank:validation"
MAX_EXAMPLES = 12
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class HubDataset:
    owner: str
    name: str
    revision: str | None = None
    split: str | None = None

    @property
    def repo_id(self) -> str:
        return f"{self.owner}/{self.name}"

    def folder(self, settings: Any) -> Path:
        return settings.path("hub", "datasets", self.owner, self.name, self.revision or "main")

    def label(self) -> str:
        return self.name + (f" ({self.split} split)" if self.split else "")


def is_hub(corpus: str) -> bool:
    return str(corpus or "").startswith("hf://")


def parse(spec: str) -> HubDataset:
    """The dataset named by `spec`; InputError with the expected form otherwise."""
    m = _SPEC.fullmatch(str(spec).strip())
    if not m:
        raise InputError(f"{spec!r} is not a hub dataset name",
                         f"write it as hf://datasets/OWNER/NAME[@REVISION][:SPLIT], e.g. {EXAMPLE}")
    return HubDataset(m["owner"], m["name"], m["revision"], m["split"])


def split_files(paths: list[str], split: str | None, vectors: bool = False) -> list[str]:
    """The parquet files of `split` ('data/validation-00000-of-00001.parquet', 'validation/0.parquet',
    'validation.parquet'); every parquet file when no split is named. `vectors`: the split's files of
    precomputed vectors instead ('vectors/validation.parquet': core.ingest.companion_vectors)."""
    from core.ingest.companion_vectors import is_vector_file

    parquet = sorted(p for p in paths if p.endswith(".parquet") and is_vector_file(p) == vectors)
    if split is None:
        return parquet
    pattern = re.compile(rf"(^|/){re.escape(split)}([-_./]|$)")
    return [p for p in parquet if pattern.search(p)]


def _splits(paths: list[str]) -> list[str]:
    from core.ingest.companion_vectors import is_vector_file

    found = set()
    for p in paths:
        if p.endswith(".parquet") and not is_vector_file(p):
            m = re.search(r"(?:^|/)([A-Za-z]+)[-_./]", p.split("/", 1)[-1] if p.startswith("data/") else p)
            if m:
                found.add(m.group(1))
    return sorted(found)


def local_files(settings: Any, spec: str) -> list[Path] | None:
    """The parquet files of a dataset downloaded before (its marker is there and every file is whole), or None."""
    ds = parse(spec)
    marker = ds.folder(settings) / MARKER
    try:
        record = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if record.get("split") != ds.split:
        return None
    files = [(ds.folder(settings) / f["path"], int(f["size"])) for f in record.get("files", [])]
    if not files or any(not p.is_file() or p.stat().st_size != size for p, size in files):
        return None
    return [p for p, _ in files]


def unreachable(settings: Any, spec: str) -> InputError | None:
    """The error for a dataset that is neither downloaded here nor downloadable now (None when it is either)."""
    from core.backends import hf_hub

    ds = parse(spec)
    if local_files(settings, spec) is not None or hf_hub.hub_reachable():
        return None
    why = hf_hub.why_offline()
    return InputError(f"The corpus {spec} is not downloaded yet ({ds.folder(settings)}) and {why}",
                      f"copy that folder from a machine where it was downloaded (python app.py ingest {spec}), "
                      "or set corpus to a local parquet file or folder")


def fetch(settings: Any, spec: str, progress: Progress | None = None) -> list[Path]:
    """The dataset's parquet files for its split, downloaded now if they are not here yet."""
    from core.backends import hub_download
    from core.contracts.errors import BackendError

    ds = parse(spec)
    own_vectors_repo(settings)  # a vectors_repo that names no repository is refused before any download
    have = local_files(settings, spec)
    if have is not None:
        _add_own_vectors(settings, ds, progress)
        return have
    error = unreachable(settings, spec)
    if error is not None:
        raise error
    try:
        files = hub_download.list_files(ds.repo_id, "dataset", ds.revision)
    except BackendError as exc:
        raise InputError(exc.message, exc.hint) from None
    chosen = set(split_files([f.path for f in files], ds.split))
    if not chosen:
        splits = _splits([f.path for f in files])
        raise InputError(f"The dataset {ds.repo_id} has no parquet files" + (f" for the split {ds.split!r}"
                                                                             if ds.split else ""),
                         ("name one of its splits: " + ", ".join(f"{PREFIX}{ds.repo_id}:{s}" for s in splits))
                         if splits else "choose a dataset published as parquet files")
    todo = [f for f in files if f.path in chosen]
    vectors = set(split_files([f.path for f in files], ds.split, vectors=True))
    extra = [f for f in files if f.path in vectors]  # precomputed vectors beside the split, and the card
    card = [f for f in files if f.path == dataset_card.FILE]
    if card and card[0].size > dataset_card.MAX_BYTES:
        log.warning("the dataset card of %s is %d bytes, over %d: not downloaded (the banner names the photos' "
                    "licences)", ds.repo_id, card[0].size, dataset_card.MAX_BYTES)
    extra += [f for f in card if f.size <= dataset_card.MAX_BYTES]
    what = f"downloading {ds.label()}"
    report = (lambda done, total: progress(what, done, total)) if progress is not None else None
    try:
        got = hub_download.download(ds.repo_id, todo + extra, repo_type="dataset", revision=ds.revision,
                                    local_dir=ds.folder(settings), max_bytes=int(settings.hub_max_gb * 1e9),
                                    progress=report, what=f"{PREFIX}{ds.repo_id}")
    except BackendError as exc:
        raise InputError(exc.message, exc.hint) from None
    record = {"repo_id": ds.repo_id, "revision": ds.revision, "split": ds.split,
              "files": [{"path": f.path, "size": f.size, "sha256": f.sha256 or f.git_oid} for f in todo],
              "vectors": [{"path": f.path, "size": f.size} for f in extra if f.path in vectors],
              "card": bool(card) and card[0] in extra}
    (ds.folder(settings) / MARKER).write_text(json.dumps(record, indent=1), encoding="utf-8")
    log.info("downloaded %s: %d parquet files, %d of precomputed vectors%s", spec, len(todo), len(vectors),
             ", the dataset card" if record["card"] else "")
    _add_own_vectors(settings, ds, progress)
    return [got[f.path] for f in todo]


def own_vectors_repo(settings: Any) -> HubDataset | None:
    """The repository the setting vectors_repo names (None when empty); InputError when it is not one."""
    text = str(settings.vectors_repo or "").strip()
    if not text:
        return None
    own = parse(text)
    if own.split:
        raise InputError(f"vectors_repo {text!r} names a split; it names a repository",
                         f"write it as hf://datasets/{own.repo_id} (the corpus's split picks vectors/SPLIT.parquet)")
    return own


def _add_own_vectors(settings: Any, ds: HubDataset, progress: Progress | None) -> None:
    """Download the split's vector file from vectors_repo (once) and record it in the dataset's marker, where
    core.ingest.companion_vectors looks. A repository without one, or out of reach, leaves a warning in the
    log: the photos are then embedded here, as without it."""
    from core.backends import hf_hub, hub_download
    from core.contracts.errors import BackendError

    own = own_vectors_repo(settings)
    marker = ds.folder(settings) / MARKER
    record = json.loads(marker.read_text(encoding="utf-8"))
    if own is None or record.get("vectors_repo") == f"{PREFIX}{own.repo_id}@{own.revision or 'main'}":
        return
    if not hf_hub.hub_reachable():
        log.warning("vectors_repo %s: the hub is out of reach, its vectors are fetched at a later start",
                    settings.vectors_repo)
        return
    try:
        files = hub_download.list_files(own.repo_id, "dataset", own.revision)
        chosen = set(split_files([f.path for f in files], ds.split, vectors=True))
        todo = [f for f in files if f.path in chosen]
        report = (lambda done, total: progress(f"downloading vectors from {own.name}", done, total)) \
            if progress is not None else None
        if todo:
            hub_download.download(own.repo_id, todo, repo_type="dataset", revision=own.revision,
                                  local_dir=own.folder(settings), max_bytes=int(settings.hub_max_gb * 1e9),
                                  progress=report, what=f"{PREFIX}{own.repo_id}")
    except BackendError as exc:
        log.warning("vectors_repo %s could not be read (%s); the photos are embedded here", settings.vectors_repo,
                    exc.message)
        return
    if not todo:
        log.warning("vectors_repo %s has no vectors/<split>.parquet for the split %r (its files: %s); the photos "
                    "are embedded here", settings.vectors_repo, ds.split, ", ".join(f.path for f in files[:10]))
    folder = ds.folder(settings)
    kept = [v for v in record.get("vectors", []) if not v.get("own")]
    record["vectors"] = [{"path": os.path.relpath(own.folder(settings) / f.path, folder), "size": f.size,
                          "own": True} for f in todo] + kept  # the deployer's own vectors are tried first
    record["vectors_repo"] = f"{PREFIX}{own.repo_id}@{own.revision or 'main'}"
    marker.write_text(json.dumps(record, indent=1), encoding="utf-8")
    log.info("vectors_repo %s: %d vector files recorded beside %s", settings.vectors_repo, len(todo), ds.repo_id)


def _values(files: list[Path], column: str):
    """The values of one column over the files, row group by row group (files without it are passed over)."""
    import pyarrow.parquet as pq

    for f in files:
        try:
            pf = pq.ParquetFile(f)
        except (OSError, ValueError):
            continue
        if column in pf.schema_arrow.names:
            for batch in pf.iter_batches(columns=[column], batch_size=4096):
                yield from batch.column(0).to_pylist()


def example_queries(files: list[Path], limit: int = MAX_EXAMPLES) -> list[str]:
    """The dataset's benchmark queries, in order of first appearance (its relevance labels are not read)."""
    seen: dict[str, None] = {}
    for q in _values(files, "query"):
        if isinstance(q, str) and q.strip():
            seen.setdefault(q.strip(), None)
            if len(seen) >= limit:
                break
    return list(seen)


def licences(files: list[Path]) -> list[str]:
    """The distinct licence values of the dataset's photos (for the banner)."""
    return list(dict.fromkeys(str(v) for v in _values(files, "license") if v))


def card_licence(settings: Any, spec: str) -> str:
    """The licence the dataset's card declares ('CC BY-NC 4.0'), '' when it was not downloaded or names none."""
    return dataset_card.licence(parse(spec).folder(settings))
