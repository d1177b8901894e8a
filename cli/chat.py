"""`python app.py chat "first description"`: find a photo through a clarifying dialogue (PlugIR).

Each turn shows the top photos and asks one question; answer in words, with `mark ID[,ID]` for photos that
look right, `wrong ID[,ID]` for photos that do not, an empty line for "not sure", or `done`. End of input
(Ctrl-D, a closed pipe) ends the chat. With an offline stand-in embedder (SearchEngine.standin_similarity) the
scores shown are called stand-in scores that mean nothing about the photos, as `search` and the page call them."""
from __future__ import annotations

import json
import sys

from cli.common import add_filter_args, filters_from_args, prepare, standin_scores_note
from core.contracts import bounds
from core.contracts.search_request import clean_query
from core.contracts.standin_scores import STANDIN_SCORE
from core.search.scales import ranking

STOP = {"done", "quit", "exit", "q", "stop"}


def add_parser(sub) -> None:
    p = sub.add_parser("chat", help="find a photo by answering clarifying questions (PlugIR)")
    p.add_argument("description", help="first description of the photo you want")
    p.add_argument("--k", default=5, help="photos shown each turn")
    p.add_argument("--rounds", default=10, help="most questions asked")
    p.add_argument("--json", action="store_true", help="print the whole session as JSON at the end")
    add_filter_args(p)


def _show(hits, out, standin: str | None = None) -> None:
    """One line per candidate; its score (the similarity itself) reads `stand-in` when `standin` made it."""
    for h in hits:
        p = h.photo
        name = (p.common_name or p.scientific_name) if p else ""
        score = STANDIN_SCORE.format(score=f"{h.score:.3f}") if standin else f"{h.score:.3f}"
        print(f"  {h.rank:2d}. [{h.photo_id}] {score} {name}  {p.path if p else ''}", file=out)


def _ids(text: str) -> list[int]:
    return [int(x) for x in text.replace(",", " ").split() if x.strip().isdigit()]


def _read_answer(out) -> str | None:
    """One line of the user's answer (None at end of input). A line that is not UTF-8 text is refused with a
    message and asked again, so a bad paste never ends the chat."""
    while True:
        print("> ", end="", file=out, flush=True)
        raw = sys.stdin.buffer.readline()
        if not raw:
            return None
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            print("error: that answer is not valid UTF-8 text\nhow to fix: type it again as plain text",
                  file=sys.stderr, flush=True)
            continue
        if any(ord(c) < 32 and c != "\t" for c in line):
            print("error: that answer contains control characters\nhow to fix: type it again as plain text",
                  file=sys.stderr, flush=True)
            continue
        return line[:bounds.MAX_QUERY_CHARS]


def run(ctx, args) -> int:
    k = bounds.whole_number("k (photos shown)", args.k, 1, bounds.MAX_K)
    rounds = bounds.whole_number("rounds", args.rounds, 0, bounds.MAX_ROUNDS)
    description = clean_query(args.description)
    services = ctx.services()
    out = sys.stderr if args.json else sys.stdout
    for note in prepare(services):  # the stand-in note first
        print(f"note: {note}", file=out)
    ctx.noted = True
    standin = services.engine.standin_similarity()
    if standin:
        print(f"note: {standin_scores_note(standin)}", file=out)
    session = services.engine.dialogue(description, filters=filters_from_args(args), k=k)
    print(f"search: {session.caption}", file=out)
    _show(session.hits(), out, standin)
    for _ in range(rounds):
        q = session.next_question()
        print(f"\nQ{q.round + 1}: {q.text}", file=out)
        print("   (answer, 'mark ID', 'wrong ID', empty = not sure, 'done' to stop)", file=out)
        line = _read_answer(out)
        if line is None:  # end of input
            print("(end of input)", file=out)
            break
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
        _show(hits, out, standin)
    for note in [*session.notes, *session.notices]:
        print(f"note: {note}", file=out)
    if args.json:
        data = session.to_json()
        data["results"] = [h.to_json() for h in session.hits()]
        data["score"] = ranking({"standin_similarity": standin} if standin else {})  # as search --json's
        print(json.dumps(data, indent=2, default=str))
    return 0
