"""The crop index: detection ids as FAISS ids, the side table of photos and boxes, the best crop per photo,
the frame/crop merge, files that survive a reload and damage that is noticed; and the crop-embedding pass."""
from dataclasses import dataclass

import numpy as np
import pytest
from PIL import Image

from core.camtrap import crops as crops_mod
from core.camtrap.crop_index import CropIndex, merge


def unit(*v):
    a = np.asarray(v, np.float32)
    return a / np.linalg.norm(a)


def filled(tmp_path):
    ci = CropIndex(tmp_path, 1, 3)
    vecs = np.stack([unit(1, 0, 0), unit(0.9, 0.1, 0), unit(0, 1, 0), unit(0, 0, 1)])
    ci.add([10, 11, 12, 13], [1, 1, 2, 3], np.array([[0.1, 0.1, 0.2, 0.2]] * 4), vecs)
    return ci


def test_best_crop_per_photo_and_pool(tmp_path):
    ci = filled(tmp_path)
    got = ci.best(unit(1, 0, 0), k=5)
    assert [(p, d) for p, d, _ in got][:1] == [(1, 10)]  # photo 1 once, through its better crop
    assert len({p for p, _, _ in got}) == len(got)
    assert {p for p, _, _ in ci.best(unit(1, 0, 0), k=5, pool=np.array([2, 3]))} == {2, 3}
    assert ci.best(unit(1, 0, 0), k=5, pool=np.array([99])) == []
    assert ci.box(12) == (2, (0.1, 0.1, 0.2, 0.2)) and ci.box(99) is None


def test_add_again_replaces_and_remove(tmp_path):
    ci = filled(tmp_path)
    ci.add([10], [1], np.array([[0.5, 0.5, 0.1, 0.1]]), unit(0, 1, 0)[None, :])
    assert len(ci) == 4 and len(ci.index) == 4 and ci.box(10)[1] == (0.5, 0.5, 0.1, 0.1)
    ci.remove([10, 11])
    assert sorted(ci.detection_ids().tolist()) == [12, 13] and len(ci.index) == 2


def test_save_and_load(tmp_path):
    ci = filled(tmp_path)
    ci.save()
    back = CropIndex(tmp_path, 1, 3).load()
    assert back.damage is None and sorted(back.detection_ids().tolist()) == [10, 11, 12, 13]
    assert back.best(unit(0, 0, 1), 1)[0][:2] == (3, 13)
    assert not back.changed_on_disk()
    ci.remove([13])
    ci.save()
    assert back.changed_on_disk()


def test_disagreeing_files_are_damage(tmp_path):
    ci = filled(tmp_path)
    ci.save()
    np.save(ci.owners_path, ci.table[:2], allow_pickle=False)
    back = CropIndex(tmp_path, 1, 3).load()
    assert back.damage and "does not match" in back.damage and len(back) == 0


def test_merge_takes_the_better_of_frame_and_crop():
    matched = {}
    ranked = merge([(1, 0.5), (2, 0.4), (3, 0.3)], [(3, 30, 0.9), (2, 20, 0.1), (4, 40, 0.45)], k=3,
                   matched=matched)
    assert ranked == [(3, 0.9), (1, 0.5), (4, 0.45)]
    assert matched == {3: 30, 4: 40}  # photo 2's frame was better than its crop (and it fell out)


@dataclass
class Det:
    id: int
    photo_id: int
    x: float
    y: float
    w: float
    h: float


class Store:
    def __init__(self, dets):
        self.dets, self.marked = dets, []

    def unindexed_detections(self, vs, threshold):
        return [d for d in self.dets if d.id not in self.marked]

    def mark_crops_indexed(self, vs, ids):
        self.marked += list(ids)


class Embedder:
    def __init__(self):
        self.calls = []

    def embed_images(self, images):
        self.calls.append([im.size for im in images])
        # the mean colour of each crop as its vector: red crops and green crops point apart
        out = np.array([np.asarray(im, np.float32).reshape(-1, 3).mean(0) + 1e-3 for im in images])
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_embed_crops_cuts_each_box_once_batched_and_records(tmp_path):
    im = Image.new("RGB", (400, 200), (0, 0, 0))
    im.paste((255, 0, 0), (40, 20, 120, 100))     # a red animal at the left
    im.paste((0, 255, 0), (280, 100, 360, 180))   # a green one at the right
    path = tmp_path / "f.jpg"
    im.save(path, quality=95)
    store = Store([Det(1, 7, 0.1, 0.1, 0.2, 0.4), Det(2, 7, 0.7, 0.5, 0.2, 0.4)])
    emb = Embedder()
    ci = CropIndex(tmp_path, 1, 3)
    rep = crops_mod.embed_crops(store, ci, emb, 1, lambda ids: {7: str(path)}, threshold=0.2, margin=0.0,
                                batch_size=8, max_pixels=10**8)
    assert rep.embedded == 2 and store.marked == [1, 2] and len(emb.calls) == 1
    assert emb.calls[0] == [(80, 80), (80, 80)]
    assert ci.best(unit(1, 0, 0), 1)[0][:2] == (7, 1)
    assert ci.best(unit(0, 1, 0), 1)[0][:2] == (7, 2)
    assert CropIndex(tmp_path, 1, 3).load().box(2)[0] == 7  # written to disk before being recorded
    again = crops_mod.embed_crops(store, ci, emb, 1, lambda ids: {7: str(path)}, threshold=0.2, margin=0.0,
                                  batch_size=8, max_pixels=10**8)
    assert again.embedded == 0 and len(emb.calls) == 1  # nothing left to do: no forward pass


def test_unreadable_frames_are_reported(tmp_path):
    store = Store([Det(1, 7, 0.1, 0.1, 0.2, 0.4), Det(2, 8, 0.1, 0.1, 0.2, 0.4)])
    (tmp_path / "bad.jpg").write_bytes(b"not a jpeg")
    rep = crops_mod.embed_crops(store, CropIndex(tmp_path, 1, 3), Embedder(), 1,
                                lambda ids: {7: str(tmp_path / "bad.jpg"), 8: "https://example.org/x.jpg"},
                                threshold=0.2, margin=0.1, batch_size=8, max_pixels=10**8)
    assert rep.embedded == 0 and len(rep.skipped) == 2 and store.marked == []
    assert "could not be read" in rep.notices()[0]


def test_reduced_decode_keeps_small_boxes_large_enough():
    assert crops_mod.min_side_for(0.5) == 448
    assert crops_mod.min_side_for(0.02) == 11200  # a small fox: the frame is decoded (nearly) whole


def test_best_of_gives_each_photo_its_best_crop(tmp_path):
    ci = filled(tmp_path)  # photo 1: crops 10, 11; photo 2: crop 12; photo 3: crop 13
    q = unit(1, 0, 0)
    got = ci.best_of(np.array([3, 1, 5]), lambda mat: mat @ q)
    assert got[0] == pytest.approx(0.0, abs=1e-6) and got[1] == pytest.approx(1.0, abs=1e-6) and got[2] == -np.inf


class RecordingStore(Store):
    def crop_ids(self, vs):
        return np.array(sorted(self.marked), dtype=np.int64)

    def unmark_crops(self, vs, ids):
        self.marked = [i for i in self.marked if i not in set(ids)]


def test_reconcile_follows_the_files(tmp_path):
    ci = filled(tmp_path)  # crops 10-13 in the index
    store = RecordingStore([])
    store.marked = [10, 11, 12, 99]  # 99 recorded but not in the index; 13 in the index but not recorded
    said = crops_mod.reconcile(store, ci, 1)
    assert store.marked == [10, 11, 12] and sorted(ci.detection_ids().tolist()) == [10, 11, 12]
    assert "1 crop vector(s) recorded in the catalog were missing" in said[0]
    assert crops_mod.reconcile(store, ci, 1) == []  # in agreement now: nothing to say


def test_a_raised_threshold_leaves_weaker_crops_out(tmp_path):
    ci = CropIndex(tmp_path, 1, 3)
    ci.add([1, 2], [10, 20], np.array([[0.1, 0.1, 0.2, 0.2]] * 2), np.stack([unit(1, 0, 0), unit(0.9, 0.1, 0)]),
           [0.3, 0.8])
    assert [p for p, _, _ in ci.best(unit(1, 0, 0), 5)] == [10, 20]
    assert [p for p, _, _ in ci.best(unit(1, 0, 0), 5, min_conf=0.5)] == [20]
    assert [p for p, _, _ in ci.best(unit(1, 0, 0), 5, pool=np.array([10]), min_conf=0.5)] == []
    got = ci.best_of(np.array([10, 20]), lambda mat: mat @ unit(1, 0, 0), min_conf=0.5)
    assert got[0] == -np.inf and got[1] > 0.9
    ci.save()
    assert CropIndex(tmp_path, 1, 3).load().table[:, 6].tolist() == [0.3, 0.8]
