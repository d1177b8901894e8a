"""INQUIRE readers: the Rerank task (parquet, 100 fixed candidates per query), VisRet's INQUIRE-Rerank-Hard
subset (a JSON list) and full-rank (two CSVs)."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from core.contracts.errors import InputError, NotFoundError
from core.evaluation.items import EvalItem

RERANK_COLUMNS = ("query", "relevant", "clip_score", "inat24_image_id", "inat24_file_name", "supercategory",
                  "category", "iconic_group", "inat24_species_id", "inat24_species_name", "latitude",
                  "longitude", "location_uncertainty", "date", "license", "rights_holder")
_REQUIRED = ("query", "relevant", "inat24_file_name")


def _parquet_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        if not files:
            raise NotFoundError(f"no .parquet file under {path}", "point --data at the INQUIRE-Rerank parquet file(s)")
        return files
    if not path.is_file():
        raise NotFoundError(f"benchmark file not found: {path}", "check --data")
    return [path]


def _first_stage_key(index: int, score) -> tuple:
    """Descending clip_score; rows without a usable score (None, NaN) after the scored ones, in file order."""
    if isinstance(score, (int, float)) and not math.isnan(score):
        return (0, -float(score), index)
    return (1, 0.0, index)


def load_inquire_rerank(path: str | Path, limit: int | None = None) -> list[EvalItem]:
    """INQUIRE-Rerank parquet (one row per query-image pair; a file or a folder of parquet shards).

    Rows are grouped by query text (in order of first appearance): pool = the query's candidates
    (inat24_file_name keys) in first-stage order (descending clip_score, ties and rows without a score
    in file order);
    relevant = the `relevant` column; kind = supercategory. The image bytes column is not read.
    """
    import pyarrow.parquet as pq

    rows: list[dict] = []
    for f in _parquet_files(Path(path)):
        try:
            schema = pq.read_schema(f)
        except Exception as e:  # pyarrow raises several types for a file that is not parquet
            raise InputError(f"{f}: not a readable parquet file ({e})", "download the dataset's parquet files") from e
        missing = [c for c in _REQUIRED if c not in schema.names]
        if missing:
            raise InputError(f"{f}: missing column(s) {', '.join(missing)}",
                             f"INQUIRE-Rerank needs {', '.join(_REQUIRED)}; found {', '.join(schema.names)}")
        cols = [c for c in RERANK_COLUMNS if c in schema.names]
        rows.extend(pq.read_table(f, columns=cols).to_pylist())
    groups: dict[str, list[tuple[int, dict]]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(str(r["query"]), []).append((i, r))
    items = []
    for qn, (text, members) in enumerate(groups.items(), start=1):
        members.sort(key=lambda ir: _first_stage_key(ir[0], ir[1].get("clip_score")))
        first = members[0][1]
        pool = [str(r["inat24_file_name"]) for _, r in members]
        relevant = {str(r["inat24_file_name"]): int(bool(r["relevant"])) for _, r in members}
        items.append(EvalItem(
            qid=f"inq-{qn}", query=text, kind=str(first.get("supercategory") or ""), pool=pool, relevant=relevant,
            extra={"category": first.get("category"), "iconic_group": first.get("iconic_group"),
                   "image_ids": {str(r["inat24_file_name"]): r.get("inat24_image_id") for _, r in members},
                   "clip_scores": {str(r["inat24_file_name"]): r.get("clip_score") for _, r in members}}))
        if limit and len(items) >= limit:
            break
    return items


def _csv_rows(path: Path, required: tuple[str, ...]) -> list[dict[str, str]]:
    if not path.is_file():
        raise NotFoundError(f"file not found: {path}", "check the INQUIRE full-rank CSV paths")
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError(f"{path}: missing column(s) {', '.join(missing)}",
                             f"expected a header with {', '.join(required)}; found {', '.join(header) or 'none'}")
        rows = []
        for n, row in enumerate(reader, start=2):
            if any(not (row.get(c) or "").strip() for c in required):
                raise InputError(f"{path}:{n}: empty value in a required column",
                                 f"every row needs {', '.join(required)}")
            rows.append(row)
    return rows


def find_fullrank_files(data: str | Path) -> tuple[Path, Path]:
    """--data for full-rank: "QUERIES.csv,ANNOTATIONS.csv" or a folder holding one CSV whose name contains
    'quer' and one whose name contains 'annot'."""
    text = str(data)
    if "," in text:
        q, a = (Path(p.strip()) for p in text.split(",", 1))
        return q, a
    folder = Path(text)
    if not folder.is_dir():
        raise InputError(f"{data}: expected a folder or 'queries.csv,annotations.csv'",
                         "INQUIRE full-rank needs a queries CSV and an annotations CSV")
    qs = sorted(p for p in folder.glob("*.csv") if "quer" in p.name.lower())
    an = sorted(p for p in folder.glob("*.csv") if "annot" in p.name.lower())
    if len(qs) != 1 or len(an) != 1:
        raise InputError(f"{folder}: found {len(qs)} queries CSV(s) and {len(an)} annotations CSV(s)",
                         "pass both files explicitly: --data QUERIES.csv,ANNOTATIONS.csv")
    return qs[0], an[0]


def load_inquire_fullrank(queries_csv: str | Path, annotations_csv: str | Path,
                          limit: int | None = None) -> list[EvalItem]:
    """INQUIRE full-rank: queries CSV (query_id, query_text, supercategory, category, iconic_group) and
    annotations CSV (query_id, image_id, image_path; each row a relevant image; an optional `relevant`
    column of 0/1 is honoured). The pool is the whole corpus; keys are image_path."""
    queries = _csv_rows(Path(queries_csv), ("query_id", "query_text"))
    anns = _csv_rows(Path(annotations_csv), ("query_id", "image_path"))
    known = {r["query_id"].strip() for r in queries}
    rel: dict[str, dict[str, int]] = {}
    ids: dict[str, dict[str, str]] = {}
    for n, a in enumerate(anns, start=2):
        qid = a["query_id"].strip()
        if qid not in known:
            raise InputError(f"{annotations_csv}:{n}: query_id {qid!r} is not in {queries_csv}",
                             "the two CSVs must come from the same INQUIRE release")
        label = int(float(a["relevant"])) if (a.get("relevant") or "").strip() else 1
        rel.setdefault(qid, {})[a["image_path"].strip()] = label
        ids.setdefault(qid, {})[a["image_path"].strip()] = (a.get("image_id") or "").strip()
    items = []
    for r in queries:
        qid = r["query_id"].strip()
        items.append(EvalItem(qid=qid, query=r["query_text"].strip(), kind=(r.get("supercategory") or "").strip(),
                              relevant=rel.get(qid, {}),
                              extra={"category": r.get("category", ""), "iconic_group": r.get("iconic_group", ""),
                                     "image_ids": ids.get(qid, {})}))
        if limit and len(items) >= limit:
            break
    return items


HARD_FILE = "inquire_rerank_hard_final.json"


def load_inquire_rerank_hard(path: str | Path, limit: int | None = None) -> list[EvalItem]:
    """INQUIRE-Rerank-Hard as VisRet's authors release it (data/inquire_rerank_hard_final.json): a JSON list of
    {"query": text, "images": {relative image path: 0/1}}, 59 queries x 100 candidates; the images are
    iNaturalist 2021 photos the user collects under data/images/<species folder>/. `path` is the file or the
    folder holding it. pool = the candidates in file order (the release gives no first-stage order: VisRet
    ranks all 100 itself); qid "hard-<n>" (1-based position in the list); no supercategory is given."""
    p = Path(path)
    if p.is_dir():
        p = p / HARD_FILE if (p / HARD_FILE).is_file() else p / "data" / HARD_FILE
    if not p.is_file():
        raise NotFoundError(f"benchmark file not found: {p}", f"point --data at {HARD_FILE} (or its folder)")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"{p}: not valid JSON ({e.msg})", f"expected VisRet's {HARD_FILE}") from e
    if not isinstance(data, list) or not data:
        raise InputError(f"{p}: expected a non-empty JSON list of {{\"query\", \"images\"}} objects",
                         "INQUIRE-Rerank-Hard is a JSON list; the INQUIRE-Rerank parquet is --benchmark inquire-rerank")
    items = []
    for n, row in enumerate(data, start=1):
        if not isinstance(row, dict) or "query" not in row or "images" not in row:
            raise InputError(f"{p}: entry {n} lacks 'query' or 'images'", "each entry is {\"query\", \"images\"}")
        images = row["images"]
        if not isinstance(images, dict) or not images:
            raise InputError(f"{p}: entry {n}: 'images' must be a non-empty object {{path: 0/1}}",
                             "check that the file is VisRet's release")
        try:
            labels = {str(k): int(v) for k, v in images.items()}
        except (TypeError, ValueError) as e:
            raise InputError(f"{p}: entry {n} has a label that is not 0/1", "labels must be 0 or 1") from e
        items.append(EvalItem(qid=f"hard-{n}", query=str(row["query"]).strip(), pool=list(labels),
                              relevant=labels, extra={"entry": n}))
        if limit and len(items) >= limit:
            break
    return items
