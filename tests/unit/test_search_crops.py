"""A run that reaches photos through detection crops: hits carry matched_detection, and the judge is shown the
crop (with the crop margin) under its own cache identity; photos matched by their whole frame are unchanged."""
import numpy as np
from PIL import Image

from core.config import load_settings
from core.contracts.records import Photo
from core.methods.budget import Budget
from core.methods.run import Run

ITEM = {"bbox": [0.5, 0.0, 0.5, 0.5], "category": "animal", "conf": 0.9, "model": "MDV5A"}


class Corpus:
    searches_crops = True

    def __init__(self):
        self.photo = {1: Photo(path="/a.jpg", sha256="a" * 64, id=1), 2: Photo(path="/b.jpg", sha256="b" * 64, id=2)}

    def rank_vector(self, vector, k, pool, matched=None):
        matched[1] = 77  # photo 1 was reached through detection 77
        return [(1, 0.9), (2, 0.5)]

    def photos(self, ids):
        return [self.photo[i] for i in ids]

    def matched_items(self, through):
        assert through == {1: 77}
        return {1: dict(ITEM)}

    def crop_box(self, det):
        return (0.5, 0.0, 0.5, 0.5) if det == 77 else None


def run_over(corpus, tmp_path):
    settings = load_settings(environ={}, data_dir=str(tmp_path), embedder="hash", crop_margin=0.0)
    return Run(corpus, None, settings, Budget(10, 10))


def test_hits_carry_the_detection_they_matched_through(tmp_path):
    run = run_over(Corpus(), tmp_path)
    hits = run.hits(run.rank(np.ones(4), 10, None))
    assert hits[0].to_json()["matched_detection"] == ITEM
    assert hits[1].to_json()["matched_detection"] is None


def test_the_judge_sees_the_crop_under_its_own_identity(tmp_path):
    corpus = Corpus()
    run = run_over(corpus, tmp_path)
    run.rank(np.ones(4), 10, None)
    frame = Image.new("RGB", (200, 100), (0, 0, 0))
    frame.paste((255, 0, 0), (100, 0, 200, 50))  # the animal: the top right quarter
    view, load = run.judged_view(corpus.photo[1], lambda: frame)
    assert view.id == 1 and view.sha256 != corpus.photo[1].sha256 and view.sha256.startswith("a" * 64)
    seen = load()
    assert seen.size == (100, 50) and seen.getcolors() == [(5000, (255, 0, 0))]
    same, load2 = run.judged_view(corpus.photo[2], lambda: frame)
    assert same is corpus.photo[2] and load2() is frame
