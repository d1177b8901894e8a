"""Benchmark: the web server's CPU per Fast search against Gradio's own floor. In one run it starts the real
EcoLens server (python app.py on a fresh data directory holding the field-guide world, offline stand-in models)
and records one Fast search as a client sees it (every streamed update: the gallery with its files, the
Markdown and HTML strings, the result JSON). Then it starts a bare Gradio app (this file, --bare) whose one
handler yields those same recorded updates with the same output components (the same gallery size with the
same files, the same HTML and JSON), calls each --calls times back to back through gradio_client, one client,
and prints each server process's CPU seconds per call (from /proc) and their ratio (goal: <= 1.5).

    python bench/server_cpu.py [--calls 100] [--rounds 2]
    python bench/server_cpu.py --smoke   # 5 calls each, a tiny world

The two servers are measured in turn, --rounds times, interleaved, so that both see the same machine; the
ratio printed last is the median over the rounds. Profiling: --profile FILE starts the EcoLens server under
bench/support/stack_sampler.py, which keeps FILE updated with the functions its busy threads were seen in (the
sampler costs the server some CPU: the ratio of such a run is not the figure to report)."""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.isolation import free_port, wait_for_app
from bench.load import build_world, form
from bench.support.clients import set_client_poll, tls_context
from bench.support.process_cpu import cpu_seconds

ROOT = Path(__file__).resolve().parents[1]

QUERY = "a frog calling"
HTTP_TIMEOUT_S = 120
START_TIMEOUT_S = 600


def env_for(data: Path) -> dict[str, str]:
    """The caller's environment without EcoLens settings, offline, no proxy for 127.0.0.1."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(data), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False",
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", PYTHONPATH=str(ROOT))
    return env


def start(command: list[str], data: Path, log_path: Path) -> tuple[subprocess.Popen, str]:
    """`command` with --port on a free port, logging to `log_path`; the process and its URL once it answers."""
    port = free_port()
    with open(log_path, "w") as log:
        proc = subprocess.Popen([*command, "--port", str(port)], cwd=ROOT, env=env_for(data), stdout=log,
                                stderr=subprocess.STDOUT)
    return proc, wait_for_app(proc, port, START_TIMEOUT_S, str(log_path))


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()  # SIGTERM: cProfile (when asked for) writes its file as the interpreter exits
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)


def client(url: str):
    from gradio_client import Client

    return Client(url, verbose=False, download_files=False, analytics_enabled=False, ssl_verify=tls_context(),
                  httpx_kwargs={"timeout": HTTP_TIMEOUT_S})


def call(c, real: bool, query: str) -> list:
    """One call to /search (the real one with a Fast form, or the bare one with the query), to its end: every
    update."""
    args = (query, *form("Fast")) if real else (query,)
    job = c.submit(*args, api_name="/search")
    job.result(timeout=HTTP_TIMEOUT_S)
    return list(job.outputs())


def record(url: str, out: Path) -> dict:
    """One Fast search on the real server, every streamed update as the client received it, written to `out`."""
    c = client(url)
    c.predict(api_name="/stop")  # the session's first call, as a page load
    call(c, True, f"{QUERY} warm up")  # models loaded before the recorded one
    updates = call(c, True, QUERY)
    final = updates[-1]
    if not isinstance(final[8], dict) or not final[8].get("results"):
        raise SystemExit(f"the recorded Fast search found nothing: {str(final)[:300]}")
    recorded = {"updates": updates}
    out.write_text(json.dumps(recorded))
    return recorded


def per_call(proc: subprocess.Popen, url: str, real: bool, calls: int, profiled: bool = False) -> float:
    """Server CPU seconds per call over `calls` calls back to back (after two calls not counted)."""
    c = client(url)
    if real:
        c.predict(api_name="/stop")  # the session's first call, as a page load
    for i in range(2):
        call(c, real, f"{QUERY} warm {i} {time.time_ns()}")
    if profiled:
        proc.send_signal(signal.SIGUSR1)  # the stack sampler counts the measured calls only
    before = cpu_seconds(proc.pid)
    for i in range(calls):  # distinct words each call: no answer from the search cache
        call(c, real, f"{QUERY} {i} {time.time_ns()}")
    return (cpu_seconds(proc.pid) - before) / calls


def bare_app(recorded_path: Path, port: int, allowed: list[str]) -> None:
    """The bare Gradio app: the Fast search's output components, one handler yielding the recorded updates."""
    import gradio as gr

    updates = json.loads(recorded_path.read_text())["updates"]

    def gallery_value(items):
        if not items:
            return []
        return [(item["image"]["path"], item.get("caption")) for item in items]

    converted = [[gallery_value(u[0]), u[1], u[2], u[3], gallery_value(u[4]), u[5], u[6], u[7], u[8]]
                 for u in updates]

    def search(query: str, state):
        for update in converted:
            yield (*update, state)

    with gr.Blocks() as demo:
        query = gr.Textbox()
        state = gr.State({})
        gallery = gr.Gallery(columns=5, height=560, allow_preview=False, object_fit="cover")
        status, notices, scale = gr.Markdown(), gr.Markdown(), gr.Markdown()
        visualizations = gr.Gallery(columns=6, height=260, allow_preview=False, object_fit="contain")
        evidence, explanation, details = gr.Markdown(), gr.HTML(), gr.Markdown()
        result = gr.JSON(visible=False)
        go = gr.Button()
        go.click(search, [query, state],
                 [gallery, status, notices, scale, visualizations, evidence, explanation, details, result, state],
                 api_name="search")
    demo.queue().launch(server_name="127.0.0.1", server_port=port, allowed_paths=allowed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=100, help="calls measured per server per round")
    ap.add_argument("--rounds", type=int, default=2, help="rounds, each measuring both servers in turn")
    ap.add_argument("--per-species", type=int, default=10, help="pictures per species of the world it builds")
    ap.add_argument("--profile", metavar="FILE", help="sample the EcoLens server's stacks into FILE (see above)")
    ap.add_argument("--smoke", action="store_true", help="5 calls each, one round, a tiny world")
    ap.add_argument("--bare", help=argparse.SUPPRESS)  # internal: serve the bare app over this recording
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--allowed", action="append", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.bare:
        bare_app(Path(args.bare), args.port, args.allowed)
        return
    if args.smoke:
        args.calls, args.rounds, args.per_species = 5, 1, 1
    if args.calls < 1 or args.rounds < 1:
        raise SystemExit("--calls and --rounds take 1 or more")
    set_client_poll(0.005)  # gradio_client's 50 ms polls would make the client, not the servers, the pace
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        build_world(data, args.per_species)
        sampler = ["-m", "bench.support.stack_sampler", args.profile] if args.profile else []
        real_cmd = [sys.executable, *sampler, str(ROOT / "app.py")]
        real, real_url = start(real_cmd, data, Path(tmp) / "real.log")
        try:
            recorded = record(real_url, Path(tmp) / "recorded.json")
            final = recorded["updates"][-1]
            print(f"recorded Fast search: {len(recorded['updates'])} updates, gallery {len(final[0] or [])} "
                  f"photos, explanation HTML {len(str(final[6]))} chars, result JSON {len(json.dumps(final[8]))} "
                  f"chars")
            allowed = sorted({str(Path(item["image"]["path"]).parent) for u in recorded["updates"]
                              for g in (u[0], u[4]) for item in (g or [])})
            bare_cmd = [sys.executable, str(Path(__file__).resolve()), "--bare", str(Path(tmp) / "recorded.json"),
                        *[a for p in allowed for a in ("--allowed", p)]]
            bare, bare_url = start(bare_cmd, data, Path(tmp) / "bare.log")
            try:
                ratios = []
                for r in range(args.rounds):
                    ecolens = per_call(real, real_url, True, args.calls, bool(args.profile))
                    floor = per_call(bare, bare_url, False, args.calls)
                    ratios.append(ecolens / floor)
                    print(f"round {r + 1}: server CPU per call: EcoLens Fast {ecolens * 1000:.1f} ms, bare Gradio "
                          f"{floor * 1000:.1f} ms, ratio {ecolens / floor:.2f} ({args.calls} calls each, load "
                          f"average {os.getloadavg()[0]:.1f})")
            finally:
                stop(bare)
        finally:
            stop(real)
    print(f"ratio EcoLens / bare Gradio server CPU per Fast search: median {statistics.median(ratios):.2f} "
          f"(goal <= 1.5)")


if __name__ == "__main__":
    main()
