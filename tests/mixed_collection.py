"""A mixed collection as a new user makes one: the demo world, a folder of the user's own photos (pictures
drawn here) and a CSV that catalogues half of them (species, common name, class, order, family, a synonym).
Used by tests/integration/test_hybrid_mixed.py and bench/hybrid.py."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from tests.photos import colour_image

# (scientific name, common name, class, order, family, synonym, photos)
CATALOGUED = [("Leopardus pardalis", "Ocelot", "Mammalia", "Carnivora", "Felidae", "Felis pardalis", 2),
              ("Vulpes vulpes", "Red Fox", "Mammalia", "Carnivora", "Canidae", "", 2),
              ("Odocoileus virginianus", "White-tailed Deer", "Mammalia", "Artiodactyla", "Cervidae", "", 1),
              ("Ardea cinerea", "Grey Heron", "Aves", "Pelecaniformes", "Ardeidae", "", 2),
              ("Phasianus colchicus", "Common Pheasant", "Aves", "Galliformes", "Phasianidae", "", 1)]
UNCATALOGUED = 8


def user_photos(root: Path) -> tuple[Path, Path, dict[str, list[str]]]:
    """(the folder of the user's photos, the CSV cataloguing half of them, scientific name -> its file names).
    The folder holds every photo; the CSV names only the catalogued ones."""
    folder = root / "mine"
    folder.mkdir(parents=True, exist_ok=True)
    names: dict[str, list[str]] = {}
    rows: list[dict[str, Any]] = []
    n = 0
    for sci, common, cls, order, family, synonym, count in CATALOGUED:
        for _ in range(count):
            n += 1
            name = f"IMG_{n:04d}.jpg"
            colour_image(1000 + n, 96).save(folder / name, "JPEG", quality=90)
            names.setdefault(sci, []).append(name)
            rows.append({"path": name, "scientific_name": sci, "common_name": common, "class": cls,
                         "order": order, "family": family, "synonyms": synonym,
                         "place_guess": "Los Llanos, Venezuela" if cls == "Mammalia" else "Camargue, France"})
    for _ in range(UNCATALOGUED):
        n += 1
        colour_image(1000 + n, 96).save(folder / f"IMG_{n:04d}.jpg", "JPEG", quality=90)
    sheet = folder / "catalogue.csv"
    with open(sheet, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return folder, sheet, names


def add_user_photos(services, root: Path) -> dict[str, set[int]]:
    """Ingest the user's folder, then the CSV that catalogues half of it (their metadata follows the CSV);
    returns scientific name (and each higher taxon) -> the ids of the photos catalogued under it."""
    folder, sheet, names = user_photos(root)
    services.ingestor().run(str(folder), None)
    services.ingestor().run(str(sheet), None)
    services.corpus.reload()
    by_name = {Path(p.path).name: p for p in services.catalog.all_photos() if p.source != "fieldguide"}
    out: dict[str, set[int]] = {}
    for sci, common, cls, order, family, synonym, _ in CATALOGUED:
        ids = {by_name[f].id for f in names[sci]}
        for key in (sci, common, cls, order, family, synonym):
            if key:
                out.setdefault(key, set()).update(ids)
    return out
