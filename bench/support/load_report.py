"""What bench/load.py prints for one measurement: per preset p50 / p95 alone and under load, the Fast p95
ratio, errors, labels confirmed against stored, the CPU each part used and the load average."""
from __future__ import annotations

import os
import statistics


def pct(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def report(args, workers: str, f: dict, name: str = "") -> None:
    print(f"Load{' (' + name + ')' if name else ''}: {args.sessions} sessions x {args.searches} searches (mix "
          + ", ".join(f"{n} {100 * w / sum(v for _, v in args.mix):g}%" for n, w in args.mix)
          + f"), {args.labels} labels after each search, think "
          f"{args.think:g} s; "
          f"workers={workers or 'default'}; "
          + (f"{args.servers} web servers, each session kept to one (an experiment); " if args.servers > 1 else "")
          + f"client threads at nice +{args.client_nice}, polling every "
          f"{args.client_poll:g} s; {f['wall']:.0f} s; "
          f"{os.cpu_count()} CPUs")
    opened = f["opened"]
    if opened:
        print(f"pages opened first (each session's first call, not timed as a search): {len(opened)}, "
              f"p50 {pct(opened, 50):.2f} s, p95 {pct(opened, 95):.2f} s")
    print(f"{'preset':<10} {'alone n':>7} {'p50 s':>7} {'p95 s':>7}   {'loaded n':>8} {'p50 s':>7} {'p95 s':>7}")
    for name in f["alone"]:  # every preset, in the order of bench/load.py's MIX
        a, b = f["alone"][name], f["loaded"][name]
        print(f"{name:<10} {len(a):>7} {pct(a, 50):>7.2f} {pct(a, 95):>7.2f}   {len(b):>8} {pct(b, 50):>7.2f} "
              f"{pct(b, 95):>7.2f}")
    labels = f.get("label_times") or []
    if labels:
        print(f"{'label':<10} {'':>7} {'':>7} {'':>7}   {len(labels):>8} {pct(labels, 50):>7.2f} "
              f"{pct(labels, 95):>7.2f}")
    # issue 37: with people pausing between searches (--think) the goal is <= 2; back to back it was <= 3
    print(f"Fast p95 ratio (loaded / alone): {f['ratio']:.2f} (goal <= {2 if args.think else 3})")
    print(f"errors: {f['errors']}" + "".join(f"\n  {e}" for e in f["error_lines"][:10]))
    print(f"labels: {f['confirmed']} confirmed, " + (
        f"{len(f['stored'])} stored, {f['lost']} of the confirmed ones missing" if f["stored"] is not None else
        "stored not counted (give --data-dir with --url)"))
    cpu, have = f["cpu"], f["wall"] * (os.cpu_count() or 1)
    print("CPU seconds while loaded (of {:.0f} the {} CPUs had): ".format(have, os.cpu_count())
          + ", ".join(f"{name} {cpu[name]:.1f} ({100 * cpu[name] / have:.0f}%)" for name in ("clients", "server",
                                                                                         "workers")
                      if cpu[name] is not None)
          + " (clients: this bench's own gradio_client sessions, on the same machine)")
    if f["samples"]:
        print(f"load average (1 min) while loaded: mean {statistics.mean(f['samples']):.1f}, "
              f"max {max(f['samples']):.1f}")
    searches = sum(len(v) for v in f["loaded"].values())
    if searches and f["wall"]:
        print(f"throughput while loaded: {searches / f['wall']:.2f} searches/s"
              + (f" (serve --processes {args.serve}: server CPU = nginx, web processes and pool)"
                 if getattr(args, "serve", 0) else ""))
    if cpu["server"] and searches:
        # a session's cycle is a search and its labels; with no pause, n sessions keep the server busy when the
        # cycles last about n x its CPU per cycle (one interpreter: about one CPU at most)
        per_cycle, cycle = cpu["server"] / searches, f["wall"] * args.sessions / searches
        print(f"web server CPU per search and its labels: {1000 * per_cycle:.0f} ms; {args.sessions} sessions x that "
              f"= {args.sessions * per_cycle:.2f} s of every {cycle:.2f} s a session's search and labels took "
              f"({100 * args.sessions * per_cycle / cycle / args.servers:.0f}% of one CPU"
              + (f" for each of the {args.servers} servers" if args.servers > 1 else "")
              + "; near 100%, calls queue for the server's one interpreter)")
