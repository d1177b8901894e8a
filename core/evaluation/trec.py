"""Scoring of runs made elsewhere: TREC qrels/run files and dialogue rank CSVs, with our metric definitions.

qrels: `qid 0 docid rel` per line; run: `qid Q0 docid rank score tag` per line (ordered by descending score,
ties by ascending rank as written); dialogue CSV: header `qid,round,rank`, rounds 0..T per query.
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path

from core.contracts import limits
from core.contracts.errors import InputError, NotFoundError
from core.evaluation.dialogue import dialogue_summary
from core.evaluation.metrics import mean_metrics, parse_metrics, score_rankings

DEFAULT_TREC_METRICS = ("ndcg@10", "ap@100", "hit@10", "recall@10", "ndcg_visret@10", "mrr")


def _not_utf8(p: Path, exc: UnicodeDecodeError) -> InputError:
    """The message for a file that is not UTF-8 text: the file, where its first bad byte is, and the fix."""
    return InputError(f"{p} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start} cannot "
                      "be read as UTF-8)", "save the file as UTF-8 text (e.g. iconv -f latin1 -t utf-8)")


def _text(p: Path) -> str:
    """The file's text (UTF-8, a leading byte-order mark allowed); InputError naming the file otherwise, or when
    it is larger than limits.MAX_EVAL_FILE_BYTES (read no further than that)."""
    with p.open("rb") as fh:
        data = fh.read(limits.MAX_EVAL_FILE_BYTES + 1)
    if len(data) > limits.MAX_EVAL_FILE_BYTES:
        raise InputError(f"{p} is larger than {limits.MAX_EVAL_FILE_BYTES // 1_000_000} MB",
                         "split it into smaller files, or score fewer queries at once")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_utf8(p, exc) from None


def _lines(path: str | Path) -> list[tuple[int, list[str]]]:
    p = Path(path)
    if not p.is_file():
        raise NotFoundError(f"file not found: {p}", "check the path")
    out = []
    for n, line in enumerate(_text(p).splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            out.append((n, line.split()))
    if not out:
        raise InputError(f"{p}: no lines to read", "the file is empty")
    return out


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """{qid: {docid: rel}} from `qid 0 docid rel` lines (integer rel; 0 = judged not relevant)."""
    qrels: dict[str, dict[str, int]] = {}
    for n, parts in _lines(path):
        if len(parts) != 4:
            raise InputError(f"{path}:{n}: expected 4 fields 'qid 0 docid rel', found {len(parts)}",
                             "qrels lines are: query id, the literal 0 (iteration), document id, relevance")
        qid, _, doc, rel = parts
        qrels.setdefault(qid, {})[doc] = _relevance(rel, path, n)
    return qrels


def _relevance(rel: str, path, n: int) -> int:
    """A qrels grade: a whole number within +-limits.MAX_RELEVANCE (a grade of 1e308 would overflow the gains)."""
    top = limits.MAX_RELEVANCE
    try:
        value = float(rel)
    except ValueError:
        raise InputError(f"{path}:{n}: relevance {rel!r} is not a number", "use 0, 1, 2, ...") from None
    if not math.isfinite(value) or value != int(value) or abs(value) > top:
        raise InputError(f"{path}:{n}: relevance {rel!r} is not a whole number from -{top} to {top}",
                         "use 0 (not relevant), 1, 2, ... (more relevant)")
    return int(value)


def read_run(path: str | Path) -> dict[str, list[str]]:
    """{qid: [docid, ...] best first} from `qid Q0 docid rank score tag` lines. Documents are ordered by
    descending score, then by the written rank (as trec_eval does, so the file's order does not matter)."""
    rows: dict[str, list[tuple[float, int, str]]] = {}
    for n, parts in _lines(path):
        if len(parts) != 6:
            raise InputError(f"{path}:{n}: expected 6 fields 'qid Q0 docid rank score tag', found {len(parts)}",
                             "run lines are: query id, Q0, document id, rank, score, run tag")
        qid, _, doc, rank, score, _tag = parts
        try:
            r, s = int(rank), float(score)
        except ValueError:
            raise InputError(f"{path}:{n}: rank {rank!r} must be an integer and score {score!r} a number",
                             "fields 4 and 5 are rank and score") from None
        if not math.isfinite(s):
            raise InputError(f"{path}:{n}: score {score!r} is not a finite number", "write each score as a number")
        rows.setdefault(qid, []).append((-s, r, doc))
    return {q: [d for _, _, d in sorted(v)] for q, v in rows.items()}


def score_trec(qrels_path: str | Path, run_path: str | Path,
               metrics: str | Sequence[str] = DEFAULT_TREC_METRICS) -> dict:
    """{"metrics": {name: mean}, "per_query": {qid: {name: value}}, "queries": n, "run_only_queries": [...]}.

    Every query of the qrels counts (a query missing from the run scores 0); run queries absent from the
    qrels are ignored and listed. AP@k's N_pos is the number of positives the qrels give the query.
    """
    names = parse_metrics(metrics)
    qrels, run = read_qrels(qrels_path), read_run(run_path)
    per_query = score_rankings(run, qrels, names)
    return {"metrics": {m: round(v, 6) for m, v in mean_metrics(per_query).items()},
            "per_query": {q: {m: round(v, 6) for m, v in row.items()} for q, row in per_query.items()},
            "queries": len(per_query), "run_only_queries": sorted(set(run) - set(qrels))}


def read_dialogue_ranks(path: str | Path) -> dict[str, list[int]]:
    """{qid: [rank at round 0, 1, ...]} from a CSV with header qid,round,rank (1-based ranks; every query
    must have rounds 0..T with no gap or repeat)."""
    p = Path(path)
    if not p.is_file():
        raise NotFoundError(f"file not found: {p}", "check --dialogue")
    by_q: dict[str, dict[int, int]] = {}
    with io.StringIO(_text(p), newline="") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or not {"qid", "round", "rank"} <= {f.strip() for f in reader.fieldnames}:
            raise InputError(f"{p}:1: expected the header 'qid,round,rank'",
                             f"found {','.join(reader.fieldnames or []) or 'nothing'}")
        for n, row in enumerate(reader, start=2):
            row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
            try:
                rnd, rank = int(row["round"]), int(row["rank"])
            except (ValueError, TypeError):
                raise InputError(f"{p}:{n}: round {row.get('round')!r} and rank {row.get('rank')!r} "
                                 "must be integers", "e.g. q1,0,57") from None
            if rnd < 0 or rank < 1:
                raise InputError(f"{p}:{n}: round must be >= 0 and rank >= 1", "ranks are 1-based")
            if rnd in by_q.setdefault(row["qid"], {}):
                raise InputError(f"{p}:{n}: query {row['qid']!r} has round {rnd} twice", "one line per round")
            by_q[row["qid"]][rnd] = rank
    if not by_q:
        raise InputError(f"{p}: no rows after the header", "one line per query and round")
    out = {}
    for q, rounds in by_q.items():
        if sorted(rounds) != list(range(len(rounds))):
            raise InputError(f"{p}: query {q!r} has rounds {sorted(rounds)}",
                             "rounds must run 0, 1, 2, ... without gaps")
        out[q] = [rounds[t] for t in range(len(rounds))]
    return out


def score_dialogue_csv(path: str | Path, ks: Sequence[int] = (1, 5, 10)) -> dict:
    """Hits@K and Recall@K per round, BRI and its per-round curve, per-query ranks (see dialogue.py)."""
    return dialogue_summary(read_dialogue_ranks(path), ks)
