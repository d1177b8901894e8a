"""Reading the first answer token without a model: spellings of yes and no, readings, abstention, and the
combiner that gathers concurrent calls into batches."""
from __future__ import annotations

import math
import threading
import time

import pytest

from core.backends import vlm_reading
from core.backends.combiner import Combiner
from core.contracts.errors import BackendError
from core.methods.confidence import p_yes


@pytest.mark.parametrize("text,word", [(" Yes", "yes"), ("\u2581YES", "yes"), ("\u0120yes", "yes"), ("yes.", "yes"),
                                       ("**No**", "no"), (" no,", "no"), ("Yesterday", "yesterday"),
                                       ("nope", "nope"), ("", "")])
def test_spelled_word(text, word):
    assert vlm_reading.spelled_word(text) == word


class FakeTokenizer:
    pieces = ["<pad>", " Yes", "yes", "YES", "\u2581yes", " No", "no", "NO", "Yesterday", "nope", " maybe"]

    def __len__(self):
        return len(self.pieces)

    def batch_decode(self, ids, **kwargs):
        return [self.pieces[i[0]] for i in ids]


def test_answer_token_ids_decode_the_whole_vocabulary():
    yes, no = vlm_reading.answer_token_ids(FakeTokenizer())
    assert yes == (1, 2, 3, 4) and no == (5, 6, 7)
    yes, no = vlm_reading.answer_token_ids(FakeTokenizer(), vocab_size=4)  # ids past the model's output are left out
    assert yes == (1, 2, 3) and no == ()


def test_readings_and_abstention():
    torch = pytest.importorskip("torch")
    probs = torch.tensor([[0.0, 0.5, 0.1, 0.0, 0.0, 0.2, 0.0, 0.0, 0.1, 0.05, 0.05],
                          [0.0, 0.05, 0.0, 0.0, 0.0, 0.05, 0.0, 0.0, 0.3, 0.3, 0.3]])
    clear, unsure = vlm_reading.reading_from_probs(probs, (1, 2, 3, 4), (5, 6, 7))
    assert clear.p_yes == pytest.approx(0.6) and clear.p_no == pytest.approx(0.2)
    assert clear.p_other == pytest.approx(0.2) and clear.confidence == pytest.approx(0.75)
    answer = vlm_reading.judge_answer(clear, 0.5)
    assert answer.answer == "yes" and not answer.abstained
    assert p_yes(answer.top_logprobs) == pytest.approx(0.75)
    answer = vlm_reading.judge_answer(unsure, 0.5)
    assert answer.abstained and answer.reason.startswith("not checked")
    assert math.exp(answer.top_logprobs["<other>"]) == pytest.approx(0.9)
    nothing = vlm_reading.YesNoReading(0.0, 0.0, 1.0)
    assert nothing.confidence == 0.0 and vlm_reading.judge_answer(nothing, 0.5).top_logprobs["Yes"] < -60


def test_combiner_batches_concurrent_calls_and_keeps_their_order():
    batches: list[list[int]] = []

    def run(items):
        batches.append(list(items))
        time.sleep(0.2 if len(batches) == 1 else 0.01)
        return [i * 10 for i in items]

    combiner = Combiner(run, batch_size=3)
    results: dict[int, int] = {}
    start = threading.Barrier(7)

    def call(i):
        start.wait()
        results[i] = combiner.submit(i)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == {i: i * 10 for i in range(7)}
    assert sorted(i for b in batches for i in b) == list(range(7))
    assert max(len(b) for b in batches) == 3 and len(batches) < 7


def test_combiner_hands_a_failed_batch_to_each_caller():
    def run(items):
        raise BackendError("the model failed", "check it")

    combiner = Combiner(run, batch_size=4)
    with pytest.raises(BackendError, match="the model failed"):
        combiner.submit(1)
    with pytest.raises(BackendError, match="the model failed"):  # nothing is left stuck
        combiner.submit(2)
