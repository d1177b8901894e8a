"""TREC qrels/run scoring and the dialogue rank CSV."""
import pytest

from core.contracts.errors import InputError, NotFoundError
from core.evaluation.trec import read_dialogue_ranks, read_qrels, read_run, score_dialogue_csv, score_trec

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d9 2\n"
# q1 run written out of order; scores put d2 (0.9) before d1 (0.8) before d3 (0.5)
RUN = "q1 Q0 d1 2 0.8 sys\nq1 Q0 d2 1 0.9 sys\nq1 Q0 d3 3 0.5 sys\nq3 Q0 d1 1 1.0 sys\n"


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_readers(tmp_path):
    assert read_qrels(_write(tmp_path, "q.txt", QRELS)) == {"q1": {"d1": 1, "d2": 0, "d3": 1}, "q2": {"d9": 2}}
    assert read_run(_write(tmp_path, "r.txt", RUN)) == {"q1": ["d2", "d1", "d3"], "q3": ["d1"]}
    # equal scores fall back to the written rank
    assert read_run(_write(tmp_path, "t.txt", "q Q0 b 2 1.0 s\nq Q0 a 1 1.0 s\n")) == {"q": ["a", "b"]}


def test_score_trec_by_hand(tmp_path):
    out = score_trec(_write(tmp_path, "q.txt", QRELS), _write(tmp_path, "r.txt", RUN),
                     "hit@1,recall@2,ap@3,mrr,ndcg@3")
    q1 = out["per_query"]["q1"]
    # q1 ranking d2(0) d1(1) d3(1): hit@1 = 0; recall@2 = 1/2; mrr = 1/2
    # AP@3 = (1/2 + 2/3) / min(2, 3) = 0.583333
    # nDCG@3 = (1/log2 3 + 1/log2 4) / (1 + 1/log2 3) = 1.130930 / 1.630930 = 0.693426
    assert q1 == pytest.approx({"hit@1": 0.0, "recall@2": 0.5, "ap@3": 0.583333, "mrr": 0.5, "ndcg@3": 0.693426},
                               abs=1e-6)
    assert out["per_query"]["q2"] == {"hit@1": 0.0, "recall@2": 0.0, "ap@3": 0.0, "mrr": 0.0, "ndcg@3": 0.0}
    assert out["metrics"]["mrr"] == pytest.approx(0.25)  # (0.5 + 0) / 2 queries of the qrels
    assert out["run_only_queries"] == ["q3"] and out["queries"] == 2


def test_malformed_lines_name_line_and_format(tmp_path):
    with pytest.raises(InputError, match=r"q.txt:2: expected 4 fields"):
        read_qrels(_write(tmp_path, "q.txt", "q1 0 d1 1\nq1 d2 1\n"))
    with pytest.raises(InputError, match=r"q.txt:1: relevance 'yes'"):
        read_qrels(_write(tmp_path, "q.txt", "q1 0 d1 yes\n"))
    with pytest.raises(InputError, match=r"r.txt:1: expected 6 fields 'qid Q0 docid rank score tag'"):
        read_run(_write(tmp_path, "r.txt", "q1 Q0 d1 1 0.5\n"))
    with pytest.raises(InputError, match=r"r.txt:1: rank 'first'"):
        read_run(_write(tmp_path, "r.txt", "q1 Q0 d1 first 0.5 x\n"))
    with pytest.raises(NotFoundError):
        read_run(tmp_path / "missing.txt")
    with pytest.raises(InputError, match="unknown metric"):
        score_trec(_write(tmp_path, "q2.txt", QRELS), _write(tmp_path, "r2.txt", RUN), "precision@5")


def test_dialogue_csv(tmp_path):
    p = _write(tmp_path, "ranks.csv", "qid,round,rank\nq1,0,50\nq1,1,5\nq2,1,1\nq2,0,8\n")
    assert read_dialogue_ranks(p) == {"q1": [50, 5], "q2": [8, 1]}
    s = score_dialogue_csv(p, ks=(10,))
    # Hits@10: round 0 only q2 (8 <= 10); round 1 both -> [0.5, 1.0]
    assert s["hits@10"] == [0.5, 1.0]
    # BRI with T = 1: q1 (ln 50 + ln 5)/2 = 2.760731; q2 (ln 8 + ln 1)/2 = 1.039721; mean 1.900226
    assert s["bri"] == pytest.approx(1.900226, abs=1e-6)
    with pytest.raises(InputError, match=r"ranks.csv:3: round"):
        read_dialogue_ranks(_write(tmp_path, "ranks.csv", "qid,round,rank\nq1,0,3\nq1,one,2\n"))
    with pytest.raises(InputError, match="rounds must run 0, 1, 2"):
        read_dialogue_ranks(_write(tmp_path, "ranks.csv", "qid,round,rank\nq1,0,3\nq1,2,2\n"))
    with pytest.raises(InputError, match="header 'qid,round,rank'"):
        read_dialogue_ranks(_write(tmp_path, "ranks.csv", "query,turn,pos\nq1,0,3\n"))
    with pytest.raises(InputError, match="twice"):
        read_dialogue_ranks(_write(tmp_path, "ranks.csv", "qid,round,rank\nq1,0,3\nq1,0,2\n"))
