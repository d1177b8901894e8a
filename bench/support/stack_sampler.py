"""A stack sampler for a web server the benches start, every thread (cProfile sees only the thread that enabled it,
and Gradio runs handlers in other threads): `python -m bench.support.stack_sampler OUT SCRIPT ARGS...` runs SCRIPT
as __main__ while a thread looks at every other thread's Python stack every few milliseconds, leaves out the
threads that wait (their innermost function is a wait, a select or a sleep), and rewrites OUT every two seconds
with the functions seen most (since it started, or since the last SIGUSR1, which starts the count again),
innermost ("self") and anywhere on the stack ("total"), in share of busy samples.
Samples are taken when the sampling thread gets the interpreter's lock, so they are a rough picture, not a count."""
from __future__ import annotations

import collections
import runpy
import signal
import sys
import threading
import time

IDLE = {"wait", "select", "poll", "sleep", "_wait_for_tstate_lock", "accept", "get", "readinto", "recv_into",
        "block_thread", "_worker"}  # Gradio's main thread sleeping in a loop; an idle pool thread on its queue
INTERVAL_S = 0.003
WRITE_EVERY_S = 2.0
TOP = 45
RESTART = threading.Event()


def where(frame) -> str:
    code = frame.f_code
    return f"{code.co_filename.rsplit('site-packages/', 1)[-1]}:{code.co_firstlineno} {code.co_name}"


def sample_forever(out: str) -> None:
    me = threading.get_ident()
    own: collections.Counter = collections.Counter()
    total: collections.Counter = collections.Counter()
    busy = 0
    last_write = time.monotonic()
    while True:
        time.sleep(INTERVAL_S)
        if RESTART.is_set():
            RESTART.clear()
            own.clear()
            total.clear()
            busy = 0
        for ident, frame in sys._current_frames().items():
            if ident == me or frame.f_code.co_name in IDLE:
                continue
            busy += 1
            own[where(frame)] += 1
            seen = set()
            while frame is not None:
                seen.add(where(frame))
                frame = frame.f_back
            total.update(seen)
        if time.monotonic() - last_write > WRITE_EVERY_S and busy:
            last_write = time.monotonic()
            lines = [f"busy samples: {busy}", "", "self:"]
            lines += [f"{n / busy:6.1%}  {name}" for name, n in own.most_common(TOP)]
            lines += ["", "total:"]
            lines += [f"{n / busy:6.1%}  {name}" for name, n in total.most_common(TOP * 2)]
            with open(out, "w") as f:
                f.write("\n".join(lines) + "\n")


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit("usage: python -m bench.support.stack_sampler OUT SCRIPT [ARGS...]")
    out, script = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]
    signal.signal(signal.SIGUSR1, lambda *_: RESTART.set())
    threading.Thread(target=sample_forever, args=(out,), daemon=True, name="stack-sampler").start()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
