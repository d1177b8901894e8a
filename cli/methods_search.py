"""`python app.py search QUERY`: search with any retrieval method (baseline, LLM rewrite, VisRet), optional
judge rerank, Pareto coverage and an answer with evidence. Replaces the baseline-only command."""
from __future__ import annotations

import dataclasses
import json
import sys

from cli.common import add_filter_args, filters_from_args, print_hits
from core.errors import InputError
from core.methods.pipeline import METHODS, RERANK_MODES, Pipeline, SearchRequest


def _ids(text: str | None) -> tuple[int, ...]:
    if not text:
        return ()
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise InputError(f"{text!r} is not a comma-separated list of photo ids", "e.g. 12,40,7") from None


def add_parser(sub) -> None:
    p = sub.add_parser("search", help="search the catalog (baseline, rewrite or VisRet; rerank; coverage; answer)")
    p.add_argument("query", nargs="?", default="")
    p.add_argument("--k", type=int, default=None, help="number of results")
    p.add_argument("--method", choices=METHODS, default="baseline", help="first stage (default baseline)")
    p.add_argument("--m", type=int, default=None, help="VisRet: pictures generated per instruction (default 3)")
    p.add_argument("--seeds", help="VisRet: comma-separated seeds (change one to regenerate that picture)")
    p.add_argument("--rerank", choices=RERANK_MODES, default="none", help="judge rerank mode (default none)")
    p.add_argument("--rerank-k", type=int, default=None, help="candidates reranked (default 100)")
    p.add_argument("--votes", type=int, default=None, help="judge votes per question (1 or 3)")
    p.add_argument("--coverage", action="store_true", help="Pareto coverage of the query's parts")
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


def _print_stages(stages: dict) -> None:
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
        print(f"answer: {a['text']}")


def run(ctx, args) -> int:

    engine = ctx.engine()
    notices = engine.ensure_corpus()
    images = []
    if args.image:
        from core.imageio import load_image

        images = [load_image(p, max_pixels=engine.settings.max_image_pixels) for p in args.image]
    filters = filters_from_args(args)
    if args.ids:
        filters = dataclasses.replace(filters, ids=_ids(args.ids))
    if not args.query.strip():
        if len(images) != 1:
            raise InputError("No query given", 'write python app.py search "QUERY" or use --image PATH')
        result = engine.search.search("", k=args.k, filters=filters, image=images[0])
    else:
        request = SearchRequest(
            args.query, k=args.k, filters=filters, method=args.method, m=args.m,
            seeds=list(_ids(args.seeds)) or None, rerank=args.rerank, rerank_k=args.rerank_k, votes=args.votes,
            coverage=args.coverage, reference=args.reference, answer=args.answer, examples=images,
            example_ids=_ids(args.example_ids), relevant_ids=_ids(args.relevant),
            nonrelevant_ids=_ids(args.not_relevant))
        listener = (lambda e: print(json.dumps(e, default=str), file=sys.stderr, flush=True)) if args.events else None
        result = Pipeline(engine.search).run(request, on_event=listener)
    result.notices = notices + result.notices
    if args.json:
        print(json.dumps(result.to_json(), indent=2, default=str))
    else:
        print_hits(result)
        _print_stages(result.stages)
    return 0
