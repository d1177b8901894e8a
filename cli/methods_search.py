"""`python app.py search QUERY`: one search through the engine, the same one the web app and the evaluation
use: a preset (Fast, Visualize, Verify, Cover) or any combination of first stage, judge rerank, coverage and
answer; text, example photos, or both."""
from __future__ import annotations

import json
import re
import sys

from cli.common import add_filter_args, filters_from_args, parse_ids, prepare, print_hits
from core.contracts import bounds
from core.contracts.search_request import METHODS, RERANK_MODES, SearchRequest
from core.imageio import example_photo
from core.search.presets import PRESET_NAMES, request_for


def add_parser(sub) -> None:
    p = sub.add_parser("search", help="search the catalog (a preset, or baseline / rewrite / VisRet with rerank, "
                                      "coverage and answer)")
    p.add_argument("query", nargs="?", default="")
    p.add_argument("--preset", choices=PRESET_NAMES, help="search exactly as the web app's preset does "
                                                         "(overrides --method, --rerank and --coverage)")
    p.add_argument("--k", default=None, help="number of results")
    p.add_argument("--method", choices=METHODS, default="baseline", help="first stage (default baseline)")
    p.add_argument("--m", default=None, help="VisRet: pictures generated per instruction (default 3)")
    p.add_argument("--seeds", help="VisRet: comma-separated seeds (change one to regenerate that picture)")
    p.add_argument("--rerank", choices=RERANK_MODES, default="none", help="judge rerank mode (default none)")
    p.add_argument("--rerank-k", default=None, help="candidates reranked (default 100)")
    p.add_argument("--votes", default=None, help="judge votes per question (1 or 3)")
    p.add_argument("--coverage", action="store_true", help="Pareto coverage: the covering photos come first")
    p.add_argument("--reference", action="store_true", help="with --coverage: also a generated reference picture")
    p.add_argument("--answer", action="store_true", help="a short answer citing photo ids")
    p.add_argument("--image", action="append", default=[], help="example photo (repeatable); alone: search by it")
    p.add_argument("--example-ids", help="catalog photo ids used as examples (comma-separated)")
    p.add_argument("--relevant", help="relevance feedback: photo ids marked relevant")
    p.add_argument("--not-relevant", help="relevance feedback: photo ids marked not relevant")
    p.add_argument("--ids", help="restrict the pool to these photo ids (comma-separated)")
    p.add_argument("--events", action="store_true", help="print each stage event as a JSON line on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_filter_args(p)


NOTE_NUMBER = re.compile(r"\s*\(?\b[01]\.\d\d\)?")  # a judge's note's own confidence ("visible 1.00")


def _print_checks(rerank: dict, hits) -> None:
    """Each returned photo's answers, with where each came from (the catalog or the picture) and why."""
    by_id = {p["id"]: p for p in rerank.get("photos") or []}
    for hit in hits:
        for a in (by_id.get(hit.photo_id) or {}).get("answers") or []:
            p = a.get("p_yes")
            sure = f" {float(p):.0%}" if isinstance(p, (int, float)) else ""
            why = a.get("reason") or "no reason given"
            said, own = a.get("answer"), a.get("judge_answer", a.get("answer"))
            if said == "can't tell" or (said in ("yes", "no") and own not in (said, None)):
                # the note's own confidence would contradict the verdict: what the checker leaned to, the note bare
                why = f"too close to call, the checker leaned {own}; its note: {NOTE_NUMBER.sub('', why).strip()}"
            print(f"  [{hit.photo_id}] {a.get('answer')}{sure}: {a.get('question')} ({why})")


def _print_stages(stages: dict, hits=()) -> None:
    v = stages.get("visret")
    if v:
        print(f"instruction ({v['source']}): {v['instruction']}")
        for x in v["visualizations"]:
            print(f"  visualization seed {x['seed']} [{x['model']}]: {x['path']}")
    r = stages.get("rerank")
    if r:
        if r["context"]:
            print(f"context: {r['context']}")
        for i, q in enumerate(r["subquestions"], 1):
            print(f"  sub-question {i}: {q}")
        _print_checks(r, hits)
    c = stages.get("coverage")
    if c:
        subs = [q["text"] for q in c["subqueries"]]
        print("coverage: " + "; ".join(f"{i}={t}" for i, t in enumerate(subs)))
        for p in c["photos"]:
            print(f"  [{p['id']}] covers {p['satisfies']} dense={p['dense']:.3f}")
        if c["uncovered"]:
            print("  nobody covers: " + ", ".join(subs[i] for i in c["uncovered"]))
        if c.get("reference"):
            print(f"  {c['reference']['label']}: {c['reference']['path']}")
    a = stages.get("answer")
    if a:
        state = "refused" if a.get("refused") else "with evidence" if a.get("verified") else "unverified"
        print(f"answer ({state}): {a['text']}")


def request_from_args(args, filters, images) -> SearchRequest:
    options = dict(k=args.k, filters=filters, m=args.m, seeds=list(parse_ids(args.seeds, "--seeds")) or None,
                   rerank_k=args.rerank_k, votes=args.votes, reference=args.reference, answer=args.answer,
                   examples=images, example_ids=parse_ids(args.example_ids, "--example-ids"),
                   relevant_ids=parse_ids(args.relevant, "--relevant"),
                   nonrelevant_ids=parse_ids(args.not_relevant, "--not-relevant"))
    if args.preset:
        return request_for(args.preset, args.query, **options)
    return SearchRequest(args.query, method=args.method, rerank=args.rerank, coverage=args.coverage, **options)


def run(ctx, args) -> int:
    # the request is checked (core.contracts.bounds, as for the web app) before anything is built or loaded
    bounds.example_count(len(args.image))
    images = [example_photo(p, ctx.settings.max_upload_mb) for p in args.image]
    filters = filters_from_args(args, ids=parse_ids(args.ids, "--ids") if args.ids else None)
    request = request_from_args(args, filters, images)
    request.validate()
    services = ctx.services()
    notices = prepare(services)  # the stand-in note first
    ctx.noted = True
    listener = (lambda e: print(json.dumps(e.to_json(), default=str), file=sys.stderr, flush=True)) \
        if args.events else None
    result = services.engine.search(request, on_event=listener)
    result.notices = notices + result.notices
    if args.json:
        print(json.dumps(result.to_json(), indent=2, default=str))
    else:
        print_hits(result)
        _print_stages(result.stages, result.hits)
    return 0
