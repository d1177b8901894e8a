"""The synthetic field-guide world: deterministic, complete metadata, ground truth that matches the notes."""
from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from fieldguide.scene import Scene, visible_parts
from fieldguide.species import LOOKALIKE_PAIRS, SPECIES, by_name
from fieldguide.world import CSV_COLUMNS, build_world, read_world


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("fg-world"), seed=3, per_species=2)


def test_same_seed_gives_identical_bytes(world, tmp_path):
    again = build_world(tmp_path / "again", seed=3, per_species=2)
    assert _hashes(world.parent) == _hashes(again.parent)
    other = build_world(tmp_path / "other", seed=4, per_species=1, benchmark=False)
    first = read_world(other)[0]["path"]
    assert (other.parent / first).read_bytes() != (world.parent / first).read_bytes()


def test_csv_columns_metadata_and_ground_truth(world):
    csv_path = world
    with open(csv_path, newline="") as fh:
        assert tuple(csv.DictReader(fh).fieldnames) == CSV_COLUMNS
    rows = read_world(csv_path)
    assert len(rows) == 2 * len(SPECIES)
    for r in rows:
        assert (csv_path.parent / r["path"]).exists()
        assert r["license"] == "CC0-1.0" and r["rights_holder"] == "EcoLens synthetic world"
        assert len(r["observed_on"]) == 10 and -90 <= float(r["latitude"]) <= 90
        sp = by_name(r["scientific_name"])
        assert r["common_name"] == sp.common_name and r["genus"] == sp.genus
        assert sp.common_name in r["caption"]
        a = dict(r["attributes"])
        shown = a.pop("visible_parts")
        assert shown == visible_parts(Scene(**a))
        for part in shown:
            if not part.startswith("larva "):
                assert a["colours"][part] in r["caption"]
    manifest = json.loads((csv_path.parent / "manifest.json").read_text())
    assert manifest["synthetic"] is True and manifest["seed"] == 3
    assert "SYNTHETIC" in (csv_path.parent / "WORLD.md").read_text()


def test_species_cover_body_plans_and_lookalikes_differ_in_one_part():
    assert len(SPECIES) >= 8
    assert {s.plan for s in SPECIES} == {"bird", "moth", "frog", "beetle", "flower"}
    assert len({s.scientific_name for s in SPECIES}) == len(SPECIES)
    for a, b, part in LOOKALIKE_PAIRS:
        sa, sb = by_name(a), by_name(b)
        differing = [p for p in sa.colours if sa.colours[p] != sb.colours[p]]
        assert differing == [part] and sa.larva == sb.larva and sa.marking == sb.marking


def test_item_mask_marks_where_the_item_is_drawn_and_leaves_the_picture_as_it_is():
    import random

    import numpy as np

    from fieldguide.render import render, render_with_item_mask
    from fieldguide.scene import sample_scene

    rng = random.Random(11)
    scenes = [sample_scene(sp, rng) for sp in SPECIES for _ in range(6)]
    with_item = [s for s in scenes if s.item]
    assert with_item and len(with_item) < len(scenes)
    for s in scenes:
        picture, mask = render_with_item_mask(s)
        assert np.array_equal(np.asarray(picture), np.asarray(render(s)))  # the same picture, byte for byte
        assert mask.shape == (224, 224) and mask.dtype == bool
        assert mask.any() == bool(s.item), s
    s = next(x for x in with_item if x.item == "fly" or x.item == "berry")
    picture, mask = render_with_item_mask(s)
    empty = Scene(**{**s.__dict__, "item": ""})  # the same scene without the item differs where the mask says
    changed = np.abs(np.asarray(picture, dtype=int) - np.asarray(render(empty), dtype=int)).sum(-1) > 0
    assert changed[mask].mean() > 0.8 and changed[~mask].mean() < 0.01
