"""Where a model file downloaded by EcoLens itself goes: the huggingface_hub cache layout that transformers,
open_clip and diffusers read (cache_dir / HF_HOME / HF_HUB_CACHE, data_dir/models with a real profile):

    models--OWNER--NAME/blobs/ETAG              the content (ETAG: the sha256 of a large file, else its git hash)
    models--OWNER--NAME/blobs/ETAG.part         a download under way, continued from its end by the next start
    models--OWNER--NAME/snapshots/COMMIT/PATH   a link to the blob
    models--OWNER--NAME/refs/REVISION           the commit, written once every file is there

The reference is written last: until then the libraries (and core.backends.hf_hub.cached_snapshot) see no
snapshot, so a download killed half-way is resumed at the next start instead of taken for complete."""
from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

log = logging.getLogger(__name__)


def root() -> Path:
    """The cache folder huggingface_hub reads now (its constant follows HF_HUB_CACHE / HF_HOME, and
    core.search.space points it at data_dir/models for a real profile)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def repo_folder(repo_id: str, repo_type: str = "model") -> Path:
    return root() / f"{repo_type}s--{repo_id.replace('/', '--')}"


def blob(repo_id: str, etag: str, repo_type: str = "model") -> Path:
    return repo_folder(repo_id, repo_type) / "blobs" / etag


def commit_of(repo_id: str, first_file: str, revision: str | None, timeout: float, repo_type: str = "model") -> str:
    """The commit that `revision` (default: main) names, from the hub's answer to a HEAD of one file."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    meta = get_hf_file_metadata(hf_hub_url(repo_id, first_file, repo_type=repo_type, revision=revision),
                                timeout=timeout)
    if not meta.commit_hash:
        raise OSError(f"the hub named no commit for {repo_id}@{revision or 'main'}")
    return meta.commit_hash


def link(repo_id: str, commit: str, path: str, content: Path, repo_type: str = "model") -> Path:
    """Make snapshots/COMMIT/PATH point at the blob `content` (a relative link, as huggingface_hub makes; a
    copy where links cannot be made). Returns the snapshot path."""
    dest = repo_folder(repo_id, repo_type) / "snapshots" / commit / path
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_symlink() or dest.exists():
        dest.unlink()
    try:
        os.symlink(os.path.relpath(content, dest.parent), dest)
    except OSError:  # a file system without links
        log.info("links cannot be made in %s: copying %s", dest.parent, path)
        shutil.copyfile(content, dest)
    return dest


def set_ref(repo_id: str, revision: str | None, commit: str, repo_type: str = "model") -> None:
    """Record that `revision` is `commit` (written last: the model is then complete in the cache)."""
    ref = repo_folder(repo_id, repo_type) / "refs" / (revision or "main")
    ref.parent.mkdir(parents=True, exist_ok=True)
    if revision != commit:  # a commit asked for by its hash needs no reference
        ref.write_text(commit)
