"""Builds the synthetic field-guide world into a folder: pictures, an observations CSV, the benchmark files and
a manifest that says the whole thing is synthetic. Deterministic from a seed; a few seconds for ~500 pictures."""
from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Callable

from fieldguide.render import render
from fieldguide.scene import Scene, caption, sample_scene
from fieldguide.species import SPECIES, Species

WORLD_VERSION = "fieldguide-world@v1"
RIGHTS_HOLDER = "EcoLens synthetic world"
LICENSE = "CC0-1.0"
CSV_COLUMNS = ("path", "scientific_name", "common_name", "kingdom", "phylum", "class", "order", "family", "genus",
               "observed_on", "latitude", "longitude", "license", "rights_holder", "caption", "attributes", "source")
SOURCE = "fieldguide"  # the Photo.source of the world's photos: the plug-in's name, so its rule book reads them


@dataclass
class Observation:
    """One picture of the world with everything known about it."""

    path: str  # relative to the world folder
    species: Species
    scene: Scene
    caption: str
    observed_on: date
    latitude: float
    longitude: float

    def row(self) -> dict[str, str]:
        k, p, c, o, f = self.species.taxonomy
        return {"path": self.path, "scientific_name": self.species.scientific_name,
                "common_name": self.species.common_name, "kingdom": k, "phylum": p, "class": c, "order": o,
                "family": f, "genus": self.species.genus, "observed_on": self.observed_on.isoformat(),
                "latitude": f"{self.latitude:.5f}", "longitude": f"{self.longitude:.5f}", "license": LICENSE,
                "rights_holder": RIGHTS_HOLDER, "caption": self.caption,
                "attributes": json.dumps(self.scene.attributes(), sort_keys=True), "source": SOURCE}


def sample_observations(seed: int = 0, per_species: int = 40) -> list[Observation]:
    """The world's observations (scenes, notes, dates, places) without drawing anything."""
    out: list[Observation] = []
    number = 0
    for si, sp in enumerate(SPECIES):
        rng = random.Random(f"fieldguide:{seed}:{sp.scientific_name}")
        # Each species lives around its own spot of an imaginary archipelago in the open South Pacific.
        home_lat, home_lon = -46.0 + (si % 4) * 0.6, -128.0 + (si // 4) * 0.8
        stem = sp.scientific_name.lower().replace(" ", "_")
        for i in range(per_species):
            number += 1
            scene = sample_scene(sp, rng)
            when = date(2025, 1, 1) + timedelta(days=rng.randrange(365))
            out.append(Observation(
                path=f"images/{stem}_{i:03d}.png", species=sp, scene=scene,
                caption=caption(scene, sp, number), observed_on=when,
                latitude=home_lat + rng.uniform(-0.2, 0.2), longitude=home_lon + rng.uniform(-0.2, 0.2)))
    return out


def _write_readme(out_dir: Path, seed: int, per_species: int, n: int) -> None:
    manifest = {"synthetic": True, "version": WORLD_VERSION, "seed": seed, "per_species": per_species,
                "pictures": n, "species": [s.scientific_name for s in SPECIES], "license": LICENSE,
                "rights_holder": RIGHTS_HOLDER,
                "note": "Invented species drawn by a program; not real organisms, places or observations."}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (out_dir / "WORLD.md").write_text(
        "# EcoLens field-guide world (SYNTHETIC)\n\n"
        f"Every picture, species, place and note in this folder was made up by a program ({WORLD_VERSION}, "
        f"seed {seed}, {per_species} pictures per species, {n} in all). None of it is a real organism or a real "
        "observation. It exists so that every search method can be run and checked offline.\n\n"
        "- observations.csv: one row per picture (taxon, date, place, CC0 licence, note, ground truth as JSON)\n"
        "- benchmark/: queries with relevance taken from the ground truth (see queries.json)\n")


def build_world(out_dir: Path, seed: int = 0, per_species: int = 40, benchmark: bool = True,
                progress: Callable[[int, int], None] | None = None) -> Path:
    """Write the world (pictures, observations.csv, WORLD.md, manifest.json, benchmark/) and return the CSV path.
    `progress(done, total)` is called after each picture.

    Same seed and size -> byte-identical files."""
    out_dir = Path(out_dir)
    (out_dir / "images").mkdir(parents=True, exist_ok=True)
    observations = sample_observations(seed, per_species)
    for n, ob in enumerate(observations, start=1):
        render(ob.scene).save(out_dir / ob.path, format="PNG", compress_level=1)
        if progress is not None:
            progress(n, len(observations))
    csv_path = out_dir / "observations.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(CSV_COLUMNS))
        writer.writeheader()
        for ob in observations:
            writer.writerow(ob.row())
    _write_readme(out_dir, seed, per_species, len(observations))
    if benchmark:
        from fieldguide.benchmark import write_benchmark

        write_benchmark(out_dir, observations, seed=seed)
    return csv_path


def read_world(csv_path: Path) -> list[dict]:
    """The CSV rows back, with `attributes` parsed (for evaluation scripts and tests)."""
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["attributes"] = json.loads(r["attributes"])
    return rows
