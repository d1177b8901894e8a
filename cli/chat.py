"""`python app.py chat "first description"`: find a photo through a clarifying dialogue (PlugIR).

Each turn shows the top photos and asks one question; answer in words, with `mark ID[,ID]` for photos that
look right, `wrong ID[,ID]` for photos that do not, an empty line for "not sure", or `done`. End of input
(Ctrl-D, a closed pipe) ends the chat."""
from __future__ import annotations

import json
import sys

from cli.common import add_filter_args, filters_from_args, prepare

STOP = {"done", "quit", "exit", "q", "stop"}


def add_parser(sub) -> None:
    p = sub.add_parser("chat", help="find a photo by answering clarifying questions (PlugIR)")
    p.add_argument("description", help="first description of the photo you want")
    p.add_argument("--k", type=int, default=5, help="photos shown each turn")
    p.add_argument("--rounds", type=int, default=10, help="most questions asked")
    p.add_argument("--json", action="store_true", help="print the whole session as JSON at the end")
    add_filter_args(p)


def _show(hits, out) -> None:
    for h in hits:
        p = h.photo
        name = (p.common_name or p.scientific_name) if p else ""
        print(f"  {h.rank:2d}. [{h.photo_id}] {h.score:.3f} {name}  {p.path if p else ''}", file=out)


def _ids(text: str) -> list[int]:
    return [int(x) for x in text.replace(",", " ").split() if x.strip().isdigit()]


def run(ctx, args) -> int:
    services = ctx.services()
    out = sys.stderr if args.json else sys.stdout
    for note in prepare(services):
        print(f"note: {note}", file=out)
    session = services.engine.dialogue(args.description, filters=filters_from_args(args), k=args.k)
    print(f"search: {session.caption}", file=out)
    _show(session.hits(), out)
    for _ in range(max(0, args.rounds)):
        q = session.next_question()
        print(f"\nQ{q.round + 1}: {q.text}", file=out)
        print("   (answer, 'mark ID', 'wrong ID', empty = not sure, 'done' to stop)", file=out)
        print("> ", end="", file=out, flush=True)
        line = sys.stdin.readline()
        if not line:  # end of input
            print("(end of input)", file=out)
            break
        line = line.strip()
        if line.lower() in STOP:
            break
        low = line.lower()
        if low.startswith("mark "):
            hits = session.answer(marked=_ids(line[5:]))
        elif low.startswith("wrong "):
            hits = session.answer("not sure", not_relevant=_ids(line[6:]))
        else:
            hits = session.answer(line or "not sure")
        print(f"search: {session.caption}", file=out)
        _show(hits, out)
    for note in session.notices:
        print(f"note: {note}", file=out)
    if args.json:
        data = session.to_json()
        data["results"] = [h.to_json() for h in session.hits()]
        print(json.dumps(data, indent=2, default=str))
    return 0
