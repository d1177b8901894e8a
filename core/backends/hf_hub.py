"""Access to the Hugging Face hub for real backends: is the model already in the local cache, can the hub
be reached at all, and the one error (with the fix) when neither is true.

Without this, a model that is not cached on a machine without network makes huggingface_hub retry for
30-50 s and print two dozen warnings before it fails. Here the hub is probed once per process with a short
TCP connect (a few seconds at most); when it cannot be reached, the process switches huggingface_hub to
offline mode (as HF_HUB_OFFLINE=1 would), so cached models load at once and missing ones fail at once."""
from __future__ import annotations

import logging
import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

from core.contracts.errors import BackendError

log = logging.getLogger(__name__)
PROBE_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}
_state: dict[str, bool] = {}
_lock = threading.Lock()


def offline_requested() -> bool:
    """HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set."""
    return any(os.environ.get(v, "").strip().lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _probe_target() -> tuple[str, int]:
    """Host and port a download would connect to first: the HTTPS proxy if one is set, else the endpoint."""
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    url = urlsplit(proxy or os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    return url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)


def _connects(host: str, port: int, timeout: float) -> bool:
    """A TCP connect within `timeout`, name lookup included (run in a thread: lookups ignore socket timeouts)."""
    result: list[bool] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result.append(True)
        except OSError:
            result.append(False)

    worker = threading.Thread(target=attempt, daemon=True, name="hf-hub-probe")
    worker.start()
    worker.join(timeout + 0.5)
    return bool(result and result[0])


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether downloads from the hub can work, probed once per process. False when offline mode is asked for.
    When the hub cannot be reached, huggingface_hub is switched to offline mode for this process."""
    if offline_requested():
        return False
    with _lock:
        if "reachable" not in _state:
            host, port = _probe_target()
            _state["reachable"] = _connects(host, port, timeout)
            if not _state["reachable"]:
                log.warning("the Hugging Face hub (%s:%d) cannot be reached; models load from the local cache only "
                            "(set HF_HUB_OFFLINE=1 to skip this check)", host, port)
                go_offline()
        return _state["reachable"]


def go_offline() -> None:
    """Make huggingface_hub (and the libraries built on it) use the local cache only, in this process."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        from huggingface_hub import constants
    except ImportError:
        return
    constants.HF_HUB_OFFLINE = True


DEFAULT_HOME = "~/.cache/huggingface"  # HF_HOME when it is not set
DEFAULT_CACHE = DEFAULT_HOME + "/hub"  # as messages name it (written unexpanded: it is another machine's)


def cache_folder() -> str:
    """Where downloaded models are kept (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or str(Path(DEFAULT_HOME).expanduser())
    return str(Path(home) / "hub")


def cached_snapshot(repo_id: str) -> Path | None:
    """The local folder of `repo_id` in the cache (its newest snapshot), or None if it was never downloaded."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        return None
    try:
        return Path(snapshot_download(repo_id, local_files_only=True))
    except Exception:  # not cached (LocalEntryNotFoundError), or an unreadable cache entry
        return None


def why_offline() -> str:
    """Why nothing can be downloaded: the probe failed (this process then set HF_HUB_OFFLINE itself), or the
    user set HF_HUB_OFFLINE."""
    return "the Hugging Face hub cannot be reached" if _state.get("reachable") is False else "HF_HUB_OFFLINE is set"


def missing_model_error(repo_id: str, setting: str, example: str) -> BackendError:
    """The error for a model that is neither cached nor downloadable here."""
    why = why_offline()
    return BackendError(
        f"The model {repo_id} is not in the local Hugging Face cache ({cache_folder()}) and {why}",
        f"download it once where there is network (`hf download {repo_id}`) and copy its folder "
        f"{repo_folder(repo_id)} from that machine's Hugging Face cache ({DEFAULT_CACHE} unless HF_HOME says "
        f"otherwise) into {cache_folder()} here, or point {setting} at a local copy ({example}); with no network, "
        "set HF_HUB_OFFLINE=1")


def repo_folder(repo_id: str) -> str:
    """The folder a model repository takes in a Hugging Face cache (models--OWNER--NAME)."""
    return "models--" + repo_id.replace("/", "--")


def require(repo_id: str, setting: str, example: str) -> Path | None:
    """The cached snapshot of `repo_id` when there is one; None when it is not cached but can be downloaded;
    a BackendError within seconds when it is neither."""
    local = cached_snapshot(repo_id)
    if local is not None:
        if not offline_requested():
            hub_reachable()  # decides, once, whether libraries may try the network at all
        return local
    if hub_reachable():
        return None
    raise missing_model_error(repo_id, setting, example)
