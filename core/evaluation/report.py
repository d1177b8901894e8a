"""The evaluation report: DIR/report.md, DIR/metrics.json, DIR/per_query.jsonl and DIR/plots/*.png."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.evaluation import deviations
from core.evaluation.caveats import Caveat, standin_caveats
from core.evaluation.plots import bar_charts, dialogue_curves
from core.evaluation.references import Reference, references_for
from core.evaluation.runner import COST_KEYS, DialogueResult, EvalResult
from core.evaluation.summary import fmt, header, order_unchanged, summarize

UNCHANGED = "order unchanged"


def _table(rows: list[list[str]], head: list[str]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]


def _metric_table(means: Mapping[str, Mapping[str, float]], metrics: list[str], sig: Mapping, baseline: str | None
                  ) -> list[str]:
    rows = []
    for method, vals in means.items():
        cells = [f"{fmt(m, vals[m])}{sig.get(method, {}).get(m, {}).get('mark', '')}" for m in metrics]
        label = f"{method} (baseline)" if method == baseline and method != "baseline" else method
        if any(c.get("order_unchanged") for c in sig.get(method, {}).values()):
            label += f" ({UNCHANGED}: no delta)"
        rows.append([label] + cells)
    return _table(rows, ["method"] + [header(m) for m in metrics])


def _model_lines(models: Mapping[str, str], caveats: Sequence[Caveat], answers: Mapping | None) -> list[str]:
    """The report's first section: the models used and what the numbers of each stand-in or tiny model can and
    cannot mean, and whether the answer judge is a valid one."""
    lines = ["## Models, and what their numbers can mean", ""]
    lines += [f"- {role}: `{name}`" for role, name in models.items()] or ["- (none given)"]
    lines.append("")
    if caveats:
        lines += ["Caveats:", ""] + [c.line() for c in caveats] + [""]
    if answers and not answers.get("judge_valid", True):
        lines += [f"- answer judge: `{answers.get('judge', '?')}` is not a valid judge: "
                  f"{answers.get('judge_caveat', '')}; its accuracy is not reported.", ""]
    elif answers and answers.get("judge_caveat"):
        lines += [f"- answer judge: `{answers.get('judge', '?')}`: {answers['judge_caveat']}.", ""]
    return lines


def _unchanged_lines(result: EvalResult) -> list[str]:
    """One line per method whose rerank moved no photo on some queries."""
    lines = []
    n = len(result.items)
    for method, qids in result.unchanged.items():
        if not qids:
            continue
        every = order_unchanged(result, method)
        lines.append(f"- {method}: {UNCHANGED} on {len(qids)} of {n} queries (the checks moved no photo, e.g. every "
                     "photo got the same score): " + ("scored exactly as its first stage, so no delta is shown"
                                                        if every else "those queries are scored as its first stage"))
    return lines + ([""] if lines else [])


def _cost_rows(result: EvalResult) -> list[list[str]]:
    n = max(1, len(result.items))
    rows = []
    for m in result.methods:
        t = result.cost_totals(m)
        rows.append([m] + [f"{t.get(k, 0):g}" for k in COST_KEYS]
                    + [f"{t['wall_s']:.2f}", f"{t['wall_s'] / n:.3f}", str(len(result.failures.get(m, [])))])
    return rows


def _references(refs: Sequence[Reference], ours: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Published rows, each with our value for the same method and metric when this run computed it."""
    rows = []
    for r in refs:
        mine = ours.get(r.method, {}).get(r.metric)
        rows.append([r.benchmark, r.method, r.setting, header(r.metric), fmt(r.metric, r.value),
                     "" if mine is None else fmt(r.metric, mine), r.source])
    return _table(rows, ["benchmark", "method", "setting", "metric", "published", "ours", "source"])


def _dialogue_lines(dialogue: DialogueResult, k: int) -> list[str]:
    lines = ["## Dialogue (interactive retrieval)", ""]
    rows = []
    for name, s in dialogue.summaries.items():
        if not s:
            continue
        hits = s.get(f"hits@{k}", [])
        rows.append([name, str(s["queries"]), str(s["rounds"] - 1), f"{s['bri']:.3f}",
                     " / ".join(f"{h:.2f}" for h in hits)])
    lines += _table(rows, ["system", "queries", "rounds after 0", "BRI (lower better)", f"Hits@{k} per round"])
    lines += ["", f"![Hits@{k} per round](plots/dialogue_hits_{k}.png)", "",
              "![BRI per round](plots/dialogue_bri.png)", ""]
    for name, fails in dialogue.failures.items():
        for f in fails:
            lines.append(f"- {name} failed on {f['qid']}: {f['error']}")
    return lines


def _answer_lines(answers: Mapping) -> list[str]:
    valid = answers.get("judge_valid", True)
    lines = ["## Answer accuracy", "",
             f"Each question answered from the top {answers['k']} photos of each ranking "
             f"({answers.get('unit_note', '')}) by `{answers.get('reader', '?')}`; scored 0-1 by "
             f"`{answers.get('judge', '?')}` against the benchmark's answers; mean x 100.", ""]
    if not valid:
        lines += [f"`{answers.get('judge', '?')}` is **not a valid judge**: {answers.get('judge_caveat', '')}. The "
                  "answers are in metrics.json; no accuracy is reported.", ""]
    rows = [[m, f"{100 * v['accuracy']:.1f}" if valid and v.get("accuracy") is not None else "not a valid judge",
             str(v["n"]), str(v.get("failed", 0))]
            for m, v in answers["methods"].items()]
    lines += _table(rows, ["method", "accuracy (x100)", "questions", "failed"]) + [""]
    lines += [f"- {n}" for n in answers.get("notes", [])] + ([""] if answers.get("notes") else [])
    return lines


def write_report(out_dir: str | Path, result: EvalResult | None = None, *, benchmark: str = "",
                 baseline: str | None = None, models: Mapping[str, str] | None = None,
                 references: Sequence[Reference] | None = None, data_notes: Mapping | None = None,
                 dialogue: DialogueResult | None = None, test: str = "randomization",
                 n_permutations: int = 10_000, seed: int = 0, alpha: float = 0.05, dialogue_k: int = 10,
                 title: str = "", items=None, limited: bool = False, answers: Mapping | None = None,
                 caveats: Sequence[Caveat] | None = None) -> dict[str, Path]:
    """Write the report files and return their paths {"report", "metrics", "per_query", "plots": dir}.

    `models`: role -> model name (embedder, llm, judge, generator, ...). `references` defaults to the
    published rows for `benchmark` that were computed on the same set as `items` (the evaluated items; the
    result's own when not given; `limited` = --limit was used). `data_notes`: e.g. PreparedItems.to_json()
    (missing images, failed items, the evaluation catalog). `answers`: the answer-accuracy block. `caveats`:
    what each stand-in or tiny model's numbers can and cannot mean (core.evaluation.caveats; by default those
    of the models marked "(stand-in)"). The report opens with the models and these caveats.
    """
    out = Path(out_dir)
    plots = out / "plots"
    out.mkdir(parents=True, exist_ok=True)
    (out / "per_query.jsonl").write_text("", encoding="utf-8")  # this run's rows only
    withheld: list[str] = []
    if references is not None:
        refs = list(references)
    else:
        evaluated = items if items is not None else (result.items if result is not None else None)
        refs, withheld = references_for(benchmark, evaluated, limited)
    caveats = list(standin_caveats(models or {}) if caveats is None else caveats)
    lines = [f"# {title or 'EcoLens evaluation'}" + (f": {benchmark}" if benchmark else ""), ""]
    lines += _model_lines(models or {}, caveats, answers)
    metrics_json: dict = {"benchmark": benchmark, "models": dict(models or {}), "data": dict(data_notes or {}),
                          "caveats": [c.line()[2:] for c in caveats],
                          "references": [r.to_json() for r in refs], "references_withheld": withheld,
                          "deviations": [d.to_json() for d in deviations.DEVIATIONS]}
    if data_notes:
        img = data_notes.get("images")
        failed = data_notes.get("failed_items") or []
        lines.append(f"- Queries: {data_notes.get('queries', '?')} evaluated"
                     + (f" of {data_notes['items_total']}" if data_notes.get("items_total") else ""))
        if data_notes.get("catalog"):
            lines.append(f"- Evaluation catalog: {data_notes['catalog']}")
        if data_notes.get("catalog_evidence"):
            lines.append(f"- Catalog facts as evidence: {data_notes['catalog_evidence']}")
        if data_notes.get("hybrid"):
            lines.append(f"- Catalog text in the first stage (hybrid retrieval): {data_notes['hybrid']}")
        if img:
            lines.append(f"- Images checked under `{img['root']}`: {img['checked']}; missing: "
                         f"{img['missing_count']} (removed from pools and labels; {len(img['items_affected'])} "
                         "queries affected; full list in metrics.json)")
            lines += [f"  - missing: `{p}`" for p in img["missing"][:20]]
        if data_notes.get("not_ingested"):
            lines.append(f"- Images present but not in the evaluation catalog (unreadable at ingest or duplicates): "
                         f"{len(data_notes['not_ingested'])} (removed from pools and labels)")
        if failed:
            lines.append(f"- Failed items: {len(failed)} (no image left; excluded from every mean):")
            lines += [f"  - {f['qid']}: {f['reason']}" for f in failed]
        if data_notes.get("queries_without_positive"):
            lines.append(f"- Queries with no relevant image left: {len(data_notes['queries_without_positive'])} "
                         "(they score 0 for every method)")
        lines.append("")
    if result is not None:
        summ = summarize(result, baseline, test, n_permutations, seed, alpha)
        base = summ["baseline"]
        metrics_json.update(summary=summ, costs={m: result.cost_totals(m) for m in result.methods},
                            failures=result.failures, outside_pool=result.outside_pool, metrics=result.metrics)
        lines += ["## Overall", "",
                  f"Macro-averages over {summ['n_queries']} queries. Marks: ▲/▼ significantly better/worse than "
                  f"`{base}` ({test} test, p < {alpha}; doubled for p < 0.01).", ""]
        lines += _metric_table(summ["overall"], result.metrics, summ["significance"], base) + [""]
        lines += _unchanged_lines(result)
        if len(summ["by_kind"]) > 1:
            lines += ["## Per supercategory / query kind", ""]
            for kind, block in summ["by_kind"].items():
                lines += [f"### {kind} ({block['n']} queries)", ""]
                lines += _metric_table(block["methods"], result.metrics,
                                       summ["significance_by_kind"].get(kind, {}), base) + [""]
        lines += ["## Cost", ""]
        lines += _table(_cost_rows(result), ["method", *COST_KEYS, "wall s (total)", "wall s / query", "failures"])
        lines.append("")
        for m, fails in result.failures.items():
            lines += [f"- {m} failed on {f['qid']}: {f['error']}" for f in fails]
        for m, n in result.outside_pool.items():
            if n:
                lines.append(f"- {m} returned {n} keys outside the query's pool; they were dropped before scoring")
        pngs = bar_charts(summ["overall"], result.metrics, plots)
        lines += ["", "## Plots", ""] + [f"![{p.stem}](plots/{p.name})" for p in pngs] + [""]
        with (out / "per_query.jsonl").open("a", encoding="utf-8") as fh:
            for m in result.methods:
                for it in result.items:
                    fh.write(json.dumps({"method": m, "qid": it.qid, "kind": it.kind, "query": it.query,
                                         "metrics": result.per_query[m][it.qid],
                                         "ranking": result.rankings[m].get(it.qid, [])[:30],
                                         "cost": result.item_costs[m].get(it.qid, {}),
                                         "notes": result.notes[m].get(it.qid, [])}, ensure_ascii=False) + "\n")
    if dialogue is not None:
        metrics_json["dialogue"] = {n: {k: v for k, v in s.items() if k != "per_query"}
                                    for n, s in dialogue.summaries.items()}
        dialogue_curves(dialogue.summaries, plots, dialogue_k)
        lines += _dialogue_lines(dialogue, dialogue_k)
        with (out / "per_query.jsonl").open("a", encoding="utf-8") as fh:
            for n, s in dialogue.summaries.items():
                for q, pq in (s or {}).get("per_query", {}).items():
                    fh.write(json.dumps({"method": n, "qid": q, "dialogue": pq}) + "\n")
    if answers:
        metrics_json["answers"] = dict(answers)
        lines += _answer_lines(answers)
    if refs or withheld:
        lines += ["## Published reference numbers", ""]
    if refs:
        lines += ["From the papers, on the same set and split as this run; their models and budgets differ from "
                  "ours.", ""]
        lines += _references(refs, metrics_json.get("summary", {}).get("overall", {})) + [""]
    lines += [f"- {w}" for w in withheld] + ([""] if withheld else [])
    lines += ["## Deviations from the papers", "",
              "What this implementation does differently from the papers, and why (PlugIR's are listed in "
              "docs/methods.md).", ""] + deviations.markdown_lines()
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "metrics.json").write_text(json.dumps(metrics_json, indent=2, ensure_ascii=False, default=str),
                                      encoding="utf-8")
    return {"report": out / "report.md", "metrics": out / "metrics.json", "per_query": out / "per_query.jsonl",
            "plots": plots}
