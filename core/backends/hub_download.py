"""Downloading files of a Hugging Face hub repository (a model or a dataset) once, checked and bounded, with
progress in bytes: the listing of the repository (one API call: names, sizes, checksums) decides what is
fetched and how big it is, before anything is fetched. Each file, a model's as a dataset's, is written
through a `.part` file that the next start continues with an HTTP range request (huggingface_hub 2.4 starts
a model file again in each process), its size checked by huggingface_hub's http_get, and then checked against
the listing's checksum (sha256 for a large-file-storage file, the git blob hash for a small one). A file
whose checksum differs is deleted and refused with the fix. A model goes into the hub cache's own layout
(core/backends/hub_cache.py), where transformers and open_clip read it; a dataset into its own folder.

Bounds: the listing and each file's headers wait at most LIST_TIMEOUT_S; a download whose total is over the
`hub_max_gb` setting is refused before it starts; a stalled transfer is cut by huggingface_hub's read timeout
(HF_HUB_DOWNLOAD_TIMEOUT, 10 s unless set). Library code: progress goes to a callback, nothing is printed."""
from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from core.contracts.errors import BackendError

log = logging.getLogger(__name__)
LIST_TIMEOUT_S = 20.0
Bytes = Callable[[int, int], None]  # (bytes done, bytes in all)


@dataclass(frozen=True)
class RepoFile:
    path: str
    size: int
    sha256: str = ""  # large-file-storage files: the sha256 of the content
    git_oid: str = ""  # every file: the git blob hash (sha1 of "blob SIZE\0" + content)


def list_files(repo_id: str, repo_type: str = "model", revision: str | None = None) -> list[RepoFile]:
    """Every file of the repository at `revision`, with its size and checksums (BackendError when the hub
    does not answer, the repository does not exist or is private)."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    try:
        entries = HfApi().list_repo_tree(repo_id, repo_type=repo_type, revision=revision, recursive=True)
        out = []
        for e in entries:
            if getattr(e, "size", None) is None:  # a folder
                continue
            lfs = getattr(e, "lfs", None)
            out.append(RepoFile(e.path, int(e.size), str(getattr(lfs, "sha256", "") or "") if lfs else "",
                                str(getattr(e, "blob_id", "") or "")))
        return out
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        raise BackendError(f"The hub could not list {repo_type} {repo_id}"
                           + (f"@{revision}" if revision else "") + f" (HTTP {status})",
                           "check the name and revision (a private or gated repository needs HF_TOKEN)") from None
    except OSError as exc:
        raise BackendError(f"The hub could not be reached to list {repo_type} {repo_id} ({type(exc).__name__})",
                           "check the network, or set HF_HUB_OFFLINE=1 and use local copies") from None


def checksum_of(path: Path, file: RepoFile) -> tuple[str, str]:
    """(what was expected, what the file has): sha256 for large-file-storage files, else the git blob hash;
    ('', '') when the listing gave neither."""
    if file.sha256:
        h = hashlib.sha256()
        expected = file.sha256
    elif file.git_oid:
        h = hashlib.sha1()
        h.update(f"blob {path.stat().st_size}\0".encode())
        expected = file.git_oid
    else:
        return "", ""
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return expected, h.hexdigest()


class _Counter:
    """Bytes received over several files, for one progress callback."""

    def __init__(self, total: int, report: Bytes | None):
        self.total, self.done, self.report = total, 0, report
        self.lock = threading.Lock()

    def add(self, n: int) -> None:
        with self.lock:
            self.done += int(n)
            done = min(self.done, self.total)
        if self.report is not None:
            self.report(done, self.total)


def _bar_class(counter: _Counter):
    """A tqdm class for hf_hub_download that counts bytes into `counter` and prints nothing."""
    from tqdm.auto import tqdm

    class _Counted(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            if kwargs.get("initial"):  # the part of a resumed file that was already there
                counter.add(int(kwargs["initial"]))

        def update(self, n=1):
            counter.add(int(n or 0))
            return super().update(n)

    return _Counted


def download(repo_id: str, files: Sequence[RepoFile], *, repo_type: str = "model", revision: str | None = None,
             local_dir: Path | None = None, max_bytes: int | None = None, progress: Bytes | None = None,
             what: str = "") -> dict[str, Path]:
    """Fetch `files` of the repository (into the hub cache's layout, core.backends.hub_cache, or `local_dir`)
    and check each; returns path in the repository -> local file. Files already there and whole are checked
    and not fetched again; a file cut off before the end is continued from where it stopped (in either place)."""
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HfHubHTTPError

    total = sum(f.size for f in files)
    name = what or repo_id
    if max_bytes is not None and total > max_bytes:
        raise BackendError(f"{name} is {total / 1e9:.2f} GB, over the download limit of {max_bytes / 1e9:.2f} GB",
                           "raise hub_max_gb, or download it yourself and point the setting at the local copy")
    counter = _Counter(total, progress)
    out: dict[str, Path] = {}
    commit: list[str] = []  # the commit the cache's snapshot is filed under, asked once
    for f in files:
        cached = None if local_dir is not None else try_to_load_from_cache(repo_id, f.path, revision=revision,
                                                                           repo_type=repo_type)
        local = local_dir / f.path if local_dir is not None else None
        if (isinstance(cached, str) and Path(cached).stat().st_size == f.size) or (
                local is not None and local.is_file() and local.stat().st_size == f.size):
            path = Path(cached) if isinstance(cached, str) else local
            counter.add(f.size)
        else:
            log.info("downloading %s from %s (%d bytes)", f.path, repo_id, f.size)
            try:
                if local is not None:
                    path = _resumable(repo_id, f, repo_type, revision, local, counter)
                else:
                    path = _into_cache(repo_id, f, repo_type, revision, counter, commit)
            except HfHubHTTPError as exc:
                status = getattr(getattr(exc, "response", None), "status_code", None)
                raise BackendError(f"Downloading {f.path} of {name} failed (HTTP {status})",
                                   "try again later; a partial download resumes where it stopped") from None
            except Exception as exc:  # a dropped connection, a read that stalled, a full disk
                if not _transport_error(exc):
                    raise
                raise BackendError(f"Downloading {f.path} of {name} stopped ({type(exc).__name__}: {str(exc)[:160]})",
                                   "start EcoLens again when the network is back: the download resumes where it "
                                   "stopped") from None
        _check(path, f, name)
        out[f.path] = path
    if commit:  # every file is there: the snapshot is complete
        from core.backends import hub_cache

        hub_cache.set_ref(repo_id, revision, commit[0], repo_type)
    return out


def _transport_error(exc: Exception) -> bool:
    """An error of the network or the disk (OSError, or the HTTP client's own errors, which are not OSErrors)."""
    return isinstance(exc, OSError) or type(exc).__module__.split(".", 1)[0] in ("httpx", "httpx2", "httpcore",
                                                                                "requests", "urllib3")


def _check(path: Path, f: RepoFile, name: str) -> None:
    """Refuse (and delete) a file whose checksum is not the listing's."""
    expected, got = checksum_of(path, f)
    if expected and expected != got:
        _discard(path)
        raise BackendError(f"{f.path} of {name} does not match its checksum (expected {expected[:12]}..., got "
                           f"{got[:12]}...): it was deleted",
                           "start again to download it afresh; if it fails again, the copy on the server or a "
                           "proxy on the way is damaged")


def _into_cache(repo_id: str, f: RepoFile, repo_type: str, revision: str | None, counter: "_Counter",
                commit: list[str]) -> Path:
    """Fetch one file into the hub cache's blobs (resumable, as _resumable) and link it into the snapshot.
    Without a checksum in the listing (no name for its blob), huggingface_hub fetches it instead."""
    from core.backends import hub_cache

    etag = f.sha256 or f.git_oid
    if not etag:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(repo_id, f.path, repo_type=repo_type, revision=revision,
                                    etag_timeout=LIST_TIMEOUT_S, tqdm_class=_bar_class(counter)))
    if not commit:
        commit.append(hub_cache.commit_of(repo_id, f.path, revision, LIST_TIMEOUT_S, repo_type))
    content = hub_cache.blob(repo_id, etag, repo_type)
    if content.is_file() and content.stat().st_size == f.size:  # fetched by a run that stopped before the end
        counter.add(f.size)
    else:
        _resumable(repo_id, f, repo_type, revision, content, counter)
    return hub_cache.link(repo_id, commit[0], f.path, content, repo_type)


def _resumable(repo_id: str, f: RepoFile, repo_type: str, revision: str | None, dest: Path,
               counter: _Counter) -> Path:
    """Fetch one file to `dest` through `dest`.part, which a later call continues from where it stopped (an
    HTTP range request; huggingface_hub's own downloads start a file again in each process). The part is
    written every DOWNLOAD_CHUNK_SIZE bytes (10 MB), so a kill loses at most that much."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils import build_hf_headers

    part = dest.with_name(dest.name + ".part")
    part.parent.mkdir(parents=True, exist_ok=True)
    if part.exists() and part.stat().st_size > f.size:
        part.unlink()  # longer than the file: not a part of it
    with part.open("ab") as fh:
        have = fh.tell()
        if have:
            log.info("resuming %s of %s at byte %d of %d", f.path, repo_id, have, f.size)
        http_get(hf_hub_url(repo_id, f.path, repo_type=repo_type, revision=revision), fh, resume_size=have,
                 headers=build_hf_headers(), expected_size=f.size, tqdm_class=_bar_class(counter))
    part.replace(dest)
    return dest


def _discard(path: Path) -> None:
    """Delete a refused file (in the hub cache: the link and the content it points to)."""
    try:
        target = path.resolve()
        path.unlink(missing_ok=True)
        if target != path:
            target.unlink(missing_ok=True)
    except OSError:
        log.warning("could not delete the refused file %s", path, exc_info=True)
