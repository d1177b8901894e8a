"""Every hostile or careless input the issue found, fed to the running web app through its API (gradio_client)
as a table: each is refused with a readable message in the app's own words (no traceback, no temporary or
internal path, no Gradio or SQL text, no command-line flag names); the server keeps answering, the database
passes its integrity check and its row counts do not change. A burst of wrong passwords is slowed and then
refused."""
from __future__ import annotations

import concurrent.futures
import json
import resource
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest
from PIL import Image

from core.contracts import limits
from tests.live_server import LiveServer, app_env, cli, counts, integrity_ok

gradio_client = pytest.importorskip("gradio_client")
FORM = dict(query="a heron", preset="Fast", k=5, m=1, rerank_k=10, rerank_mode="full", answer=False, taxon="",
            date_from="", date_to="", months=[], bbox="", license="", example=None)
SLIDER = ("outside 1 to", "greater than maximum value")  # core's bound, or the slider's own range first
LEAKS = ("Traceback", "/tmp/", "gradio", "sqlite", "SELECT", "INSERT", "--k", "--rerank", "--ids", "File \"")


@dataclass
class Call:
    name: str
    api: str
    args: Callable[[Path], list]  # root folder -> positional arguments
    words: tuple[str, ...] | str  # the message says one of these
    raw: bool = False  # sent as JSON written here: gradio_client cannot send NaN or broken characters
    extra: dict[str, Any] = field(default_factory=dict)


def raw_call(server, api: str, body: bytes) -> tuple[int, str]:
    """(HTTP status, message) of one call through /gradio_api/call: the error event's message, 'COMPLETE'
    when the call succeeded, or the refusal body."""
    status, reply = server.get(f"/gradio_api/call{api}", "POST", body, {"Content-Type": "application/json"})
    if status != 200:
        return status, reply.decode("utf-8", "replace")
    event = json.loads(reply)["event_id"]
    _, stream = server.get(f"/gradio_api/call{api}/{event}")
    text = stream.decode("utf-8", "replace")
    if "event: complete" in text:
        return 200, "COMPLETE"
    data = text.split("event: error", 1)[-1].split("data:", 1)[-1].strip()
    return 200, str(json.loads(data)) if data else ""


def search(**changes) -> Callable[[Path], list]:
    def make(root: Path) -> list:
        form = {**FORM, **changes}
        if callable(form["example"]):
            form["example"] = form["example"](root)
        return list(form.values())
    return make


def upload(name: str, make: Callable[[Path], None]) -> Callable[[Path], Any]:
    def build(root: Path):
        path = root / "uploads" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            make(path)
        return gradio_client.handle_file(str(path))
    return build


CALLS = [
    Call("invalid UTF-8 in the query", "/search", search(query="heron \udcff\udcfe"), "broken text", raw=True),
    Call("invalid UTF-8 in the taxon", "/search", search(taxon="Ardea \udcc3"), "broken text", raw=True),
    Call("k = NaN", "/search", search(k=float("nan")), ("not a whole number", "is not a number"), raw=True),
    Call("k = 1e9", "/search", search(k=1e9), SLIDER),
    Call("k = 2.9", "/search", search(k=2.9), "not a whole number"),
    Call("rerank_k = 1e9", "/search", search(preset="Verify", rerank_k=1e9), SLIDER),
    Call("m = 100", "/search", search(preset="Visualize", m=100), SLIDER),
    Call("a query of 5000 characters", "/search", search(query="heron " * 1000), "more than 2000"),
    Call("a bounding box of words", "/search", search(bbox="north of here"), "is not four numbers"),
    Call("a date that is not one", "/search", search(date_from="31/12/2024"), "is not a date"),
    Call("an unknown taxon", "/search", search(taxon="Nonexistus imaginarius"), "No photo in the catalog"),
    Call("a text file as example photo", "/search",
         search(query="", example=upload("notes.png", lambda p: p.write_text("not a photo"))),
         "not a readable image"),
    Call("a 30 megapixel PNG as example photo", "/search",
         search(query="", example=upload("wide.png", lambda p: Image.new("L", (6000, 5000)).save(p))),
         "megapixels"),
    Call("/label with photo id 10**30", "/label", lambda r: ["a heron", 10**30, 1, "ada", 1.0], "is outside"),
    Call("/label with photo id 'abc'", "/label", lambda r: ["a heron", "abc", 1, "ada", 1.0], "not a whole number"),
    Call("/label with an unknown photo id", "/label", lambda r: ["a heron", 987654, 1, "ada", 1.0],
         "No photo 987654"),
    Call("/label with label 7", "/label", lambda r: ["a heron", 1, 7, "ada", 1.0], "outside -1 to 1"),
    Call("/label with seconds NaN", "/label", lambda r: ["a heron", 1, 1, "ada", float("nan")], "seconds",
         raw=True),
    Call("/label with a broken annotator name", "/label", lambda r: ["a heron", 1, 1, "ad\udcffa", 1.0],
         "broken text", raw=True),
    Call("invalid UTF-8 in a dialogue start", "/dialogue_start", lambda r: ["\udcff heron", None], "broken text",
         raw=True),
    Call("invalid UTF-8 in a dialogue answer", "/dialogue_turn", lambda r: ["yes \udcff", None], "broken text",
         raw=True),
    Call("/label_load with k NaN", "/label_load", lambda r: ["a heron", "ada", float("nan")],
         ("not a whole number", "is not a number"), raw=True),
    Call("/compare with k 1e9", "/compare", lambda r: ["a heron", ["Fast", "Cover"], 1e9], SLIDER),
    # wrong types name the parameter and the type it takes (issue 21, item 7): never {"error": null}, and a
    # number or a list is never searched as its text
    Call("/search with a number as query", "/search", search(query=5), "query must be text, not a number",
         raw=True),
    Call("/search with a list as query", "/search", search(query=["a", "heron"]), "query must be text, not a list",
         raw=True),
    Call("/search with an object as query", "/search", search(query={"q": "heron"}),
         "query must be text, not an object", raw=True),
    Call("/search with k as text", "/search", search(k="ten"), "k must be a number, not text", raw=True),
    Call("/search with k as a list", "/search", search(k=[5]), "k must be a number, not a list", raw=True),
    Call("/search with want_answer 1", "/search", search(answer=1), "want_answer must be true or false",
         raw=True),
    Call("/search with months as text", "/search", search(months="May"), "months must be a list of text",
         raw=True),
    Call("/search with taxon as a list", "/search", search(taxon=["Ardea"]), "taxon must be text or a number",
         raw=True),
    Call("/search with k -3", "/search", search(k=-3), "less than minimum value 1", raw=True),
    Call("/compare with presets as text", "/compare", lambda r: ["a heron", "Fast", 10],
         "presets must be a list of text, not text", raw=True),
    Call("/label with a number as query", "/label", lambda r: [5, 1, 1, "ada", 1.0], "query must be text", raw=True),
    Call("/label with a list as annotator", "/label", lambda r: ["a heron", 1, 1, ["ada"], 1.0],
         "annotator must be text, not a list", raw=True),
    Call("/label_load with k as text", "/label_load", lambda r: ["a heron", "ada", "ten"], "k must be a number",
         raw=True),
    Call("/dialogue_start with a number", "/dialogue_start", lambda r: [42, None], "description must be text",
         raw=True),
    Call("/history_open with a 31-digit id", "/history_open", lambda r: [10**30], "There is no session", raw=True),
    Call("/history_open with a 31-digit id as text", "/history_open",
         lambda r: ["1234567890123456789012345678901"], "There is no session", raw=True),
    Call("/history_open with a list", "/history_open", lambda r: [[1]], "session_id must be text or a number",
         raw=True),
    # issue 36, item 3: numbers checked by type and range before use, choices named, invisible text is empty
    Call("/search with taxon 1", "/search", search(taxon=1), "taxon = 1 is a number, not a taxon's name", raw=True),
    Call("/search with taxon -1", "/search", search(taxon=-1), "taxon = -1 is a number", raw=True),
    Call("/more_like_this with 10**30", "/more_like_this", lambda r: [10**30], f"is outside 1 to {limits.MAX_ID}",
         raw=True),
    Call("/more_like_this with 0 says which ids", "/more_like_this", lambda r: [0],
         "(click a photo first, or give a photo id shown in the results)", raw=True),
    Call("/more_like_this with 2**63", "/more_like_this", lambda r: [2**63], f"{2**63} is outside 1 to", raw=True),
    Call("/more_like_this with 1.5", "/more_like_this", lambda r: [1.5], "1.5 is not a whole number", raw=True),
    Call("/search with preset 'Nope'", "/search", search(preset="Nope"),
         "preset = 'Nope' is not one of its choices (Fast, ", raw=True),
    Call("/search with rerank_mode 'Nope'", "/search", search(rerank_mode="Nope"),
         "rerank_mode = 'Nope' is not one of its choices (full, subq, context, direct)", raw=True),
    Call("/search with months ['Maybe']", "/search", search(months=["Maybe"]),
         "months = 'Maybe' is not one of its choices (Jan, Feb, ", raw=True),
    Call("/compare with presets ['Nope']", "/compare", lambda r: ["a heron", ["Fast", "Nope"], 10],
         "= 'Nope' is not one of its choices", raw=True),
    Call("a query of zero-width spaces", "/search", search(query="\u200b\u200b\u200b"), "The query is empty",
         raw=True),
    Call("a query of a byte-order mark", "/search", search(query="\ufeff"), "The query is empty", raw=True),
    Call("/search with m 17 (one limit everywhere)", "/search", search(preset="Visualize", m=limits.MAX_M + 1),
         f"(use 1 to {limits.MAX_M})"),
    Call("/search with rerank_k 0 (one limit everywhere)", "/search", search(preset="Verify", rerank_k=0),
         f"(use {limits.MIN_RERANK_K} to {limits.MAX_RERANK_K})", raw=True),
]


@pytest.fixture(scope="module")
def client(site):
    return gradio_client.Client(site.server.url, verbose=False)


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.name)
def test_api_input(site, client, call: Call):
    before = site.snapshot()
    args = call.args(site.root)
    if call.raw:
        status, message = raw_call(site.server, call.api, json.dumps({"data": args}).encode())
        assert status == 200 and message != "COMPLETE", message
    else:
        with pytest.raises(Exception) as err:
            client.predict(*args, api_name=call.api)
        message = str(err.value)
    words = (call.words,) if isinstance(call.words, str) else call.words
    assert any(w in message for w in words), message
    assert not any(leak in message for leak in LEAKS), message
    site.healthy()
    assert site.snapshot() == before


def test_an_api_error_has_one_documented_shape(site):
    """docs/reference/api.md: a refused call ends in an `error` event whose data is {"error": message,
    "title": ...}; the message names the parameter and the type it takes (never null)."""
    status, reply = site.server.get("/gradio_api/call/search", "POST",
                                    json.dumps({"data": search(query=5)(site.root)}).encode(),
                                    {"Content-Type": "application/json"})
    assert status == 200, reply
    _, stream = site.server.get(f"/gradio_api/call/search/{json.loads(reply)['event_id']}")
    data = json.loads(stream.decode().split("event: error", 1)[1].split("data:", 1)[1].strip())
    assert data["error"] == "query must be text, not a number (5)." and data["title"] == "Invalid input", data


RAW = [  # (what, endpoint, body, status, the error says)
    ("an unknown endpoint", "/nope", b'{"data": []}', 404, "No endpoint /nope. The endpoints are /agreement"),
    ("a body that is not JSON", "/search", b"heron please", 422, "The request body is not JSON."),
    ("a body without data", "/search", b'{"query": "heron"}', 422, 'The request body has no "data"'),
    ("data that is not a list", "/search", b'{"data": "heron"}', 422, '"data" must be a list'),
    ("a body that is not UTF-8", "/label", b'{"data": ["h\xe9ron", 1, 1, "ada", 1.0]}', 422,
     "The request body is not UTF-8 text."),
]


@pytest.mark.parametrize("what,api,body,status,words", RAW, ids=[r[0] for r in RAW])
def test_raw_http_refusals_have_the_error_shape(site, what, api, body, status, words):
    """docs/reference/api.md#errors: refused at once, with a status and {"error", "title"}, never a bare 500."""
    before = site.snapshot()
    got, reply = site.server.get(f"/gradio_api/call{api}", "POST", body, {"Content-Type": "application/json"})
    data = json.loads(reply)
    assert got == status and words in data["error"] and data["title"], (got, reply)
    assert not any(leak in data["error"] for leak in LEAKS), reply
    site.healthy()
    assert site.snapshot() == before


def test_refused_inputs_are_one_log_line_each_and_no_traceback(site):
    """After the whole table (every call above was refused), the server's log holds no traceback: a refused
    input is one line naming what was refused; tracebacks are kept for real faults."""
    printed = site.server.log()  # what the server printed (Gradio prints a traceback for each error it is not told
    logged = (site.data / "logs" / "ecolens.log").read_text(errors="replace")  # to keep quiet) and the app's log
    assert "Traceback" not in printed and "Traceback" not in logged, (printed + logged)[-3000:]
    refused = [line for line in logged.splitlines() if " refused: " in line]
    assert any("/search refused: query must be text, not a number (5)" in line for line in refused), logged[-3000:]
    assert any("HistoryHandlers.open refused: There is no session '1234567890123456789012345678901'" in line
               for line in refused), logged[-3000:]
    assert len(refused) >= len(CALLS), "\n".join(refused)  # each refused call of the table: one line
    site.healthy()


@pytest.mark.parametrize("path", ["/etc/passwd", "{data}/ecolens.sqlite", "{data}/logs/ecolens.log"])
def test_a_refused_file_does_not_name_its_path_on_the_server(site, path):
    """A file the app does not serve is refused in the API's error shape, without the path asked for (Gradio's
    own 403 named the file's absolute path)."""
    wanted = path.format(data=site.data)
    status, body = site.server.get(f"/gradio_api/file={wanted}")
    assert status in (403, 404), (status, body[:300])
    text = body.decode("utf-8", "replace")
    assert wanted not in text and str(site.root) not in text and json.loads(text)["error"], text
    assert "Use the link that a search or an export returned to you" in text  # and what to do instead
    site.healthy()


def test_bytes_that_are_not_utf8_in_a_request_body_are_refused(site):
    before = site.snapshot()
    body = b'{"data": ["heron \xff\xfe", "Fast", 5, 1, 10, "full", false, "", "", "", [], "", "", null]}'
    status, message = raw_call(site.server, "/search", body)
    assert 400 <= status < 500 and "Traceback" not in message
    assert json.loads(message)["title"] == "Invalid input", message  # the API's one error shape
    site.healthy()
    assert site.snapshot() == before


def test_a_good_request_after_all_that_is_still_served(site, client):
    gallery, status, *_ = client.predict(*search()(site.root), api_name="/search")
    assert len(gallery) == 5 and "done" in status
    site.healthy()


def test_300_wrong_passwords_are_slowed_then_refused(tmp_path):
    data = tmp_path / "data"
    server = LiveServer(data, env=app_env(data, ECOLENS_PASSWORD="right horse battery"))
    try:
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            statuses = list(pool.map(lambda i: server.login(f"guess {i}")[0], range(300)))
        took = time.monotonic() - t0
        assert statuses.count(400) <= 10 and statuses.count(429) >= 290 and 200 not in statuses
        assert took >= 1.0  # each wrong password costs the guesser a second
        status, _ = server.login("right horse battery")  # locked for everyone until the window passes
        assert status == 429
        body = server.get("/login", "POST", b"username=ecolens&password=x",
                          {"Content-Type": "application/x-www-form-urlencoded"})[1]
        assert b"Too many wrong passwords" in body and b"Wait" in body
        assert server.answers()
    finally:
        server.stop()


def _disk_of(nbytes: int):
    def apply() -> None:  # in the server: writes past nbytes fail with EFBIG, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return apply


def test_a_full_disk_during_a_web_search_is_a_message_with_the_fix(tmp_path):
    """Issue 21, item 8: the disk fills while the server runs. The page's copies of the photos (noise, so each
    thumbnail is larger than the room left) cannot be written, nor the search's history: each search still
    ends, with a notice that says the disk is full and how to fix it, never a bare server error and never
    'done' without a word; no traceback; the server stays up and the catalog is untouched."""
    import numpy as np

    photos = tmp_path / "photos"
    photos.mkdir()
    rng = np.random.default_rng(7)
    for i in range(6):
        Image.fromarray(rng.integers(0, 256, (800, 800, 3), dtype=np.uint8)).save(photos / f"noise-{i}.jpg",
                                                                                    quality=95)
    data = tmp_path / "data"
    assert cli(data, "ingest", str(photos)).returncode == 0
    before = counts(data)
    server = LiveServer(data, preexec_fn=_disk_of(40_000))
    try:
        client = gradio_client.Client(server.url, verbose=False)
        for _ in range(2):
            gallery, status, notices, *_ = client.predict(*search(k=4)(tmp_path), api_name="/search")
            assert len(gallery) == 4 and "done" in status, status
            assert "disk is full" in notices and "free some space" in notices, notices
        said = server.log() + (data / "logs" / "ecolens.log").read_text(errors="replace")
        assert "Traceback" not in said and "Something went wrong" not in notices, said[-3000:]
        assert server.proc.poll() is None and server.answers()
    finally:
        server.stop()
    assert integrity_ok(data) and counts(data)["photos"] == before["photos"]
