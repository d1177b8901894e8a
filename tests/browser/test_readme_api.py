"""The README's API examples, run as written with gradio_client against the real server (the code block is
read from README.md; only the address is the test server's instead of port 7860)."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README_URL = "http://127.0.0.1:7860/"


def readme_api_block() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.index("### API (for `gradio_client`)")
    start = readme.index("```python\n", section) + len("```python\n")
    return readme[start:readme.index("```", start)]


def test_the_readme_api_examples_run_as_written(server, open_browser):
    open_browser()  # waits until the photo collection is ready
    code = readme_api_block()
    assert code.count(README_URL) == 1, "the README example talks to the app on port 7860"
    scope: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.replace(README_URL, server.url), "README.md: API", "exec"), scope)
    result, best = scope["result"], scope["best"]
    assert result["preset"] == "Verify" and result["score"]["scale"] == "checks passed"
    assert len(result["results"]) == 10 and best["badges"] and {"question", "answer", "p_yes", "reason"} <= set(
        best["badges"][0])
    assert all("path" not in r for r in result["results"])  # no server paths go out
    # the status is the page's one short line, the same in the JSON as in the status output
    assert result["status"] == scope["shown"][1]
    assert re.fullmatch(r"Search \d+ · 10 photos found with \d drawings? · \d+ checked with \d yes/no questions"
                        r" · done in (?:under )?[0-9.]+ s", result["status"]), result["status"]
    assert f"checks passed {best['id']} {best['common_name']}" in printed.getvalue()
    assert scope["similar"]["results"][0]["id"] == best["id"]
    assert server.rows("SELECT label, seconds FROM labels WHERE annotator = 'ada' AND photo_id = ? AND query = ?",
                       best["id"], "a frog calling at night")[-1] == (1, 2.5)
    exported = Path(scope["exported"]).read_text()
    assert exported.startswith("session_id,query,photo_id,label,judgement,annotator") \
        and f",{best['id']},1,relevant,ada," in exported
    assert "a frog calling at night" in scope["table"] and scope["gallery"]
