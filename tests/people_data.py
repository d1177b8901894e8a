"""A data directory for the tests of several people: `count` heron-named colour photos ingested, and a users file
with each person's password `NAME-pw` and role."""
from __future__ import annotations

from pathlib import Path

from core.people.users import add_user
from tests.live_server import cli
from tests.photos import colour_image


def people_data(root: Path, people: dict[str, str], seed: int, count: int = 6) -> tuple[Path, Path]:
    """(data directory, users file) under `root`; `people`: name -> role; `seed`: the first photo's colour seed."""
    photos = root / "photos"
    photos.mkdir()
    for i in range(count):
        colour_image(seed + i, 96).save(photos / f"heron-{i}.jpg", quality=90)
    data = root / "data"
    done = cli(data, "ingest", str(photos))
    assert done.returncode == 0, done.stderr
    users = root / "users.txt"
    for name, role in people.items():
        add_user(users, name, f"{name}-pw", role)
    return data, users
