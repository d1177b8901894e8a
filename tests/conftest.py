"""Shared fixtures: isolated settings in a temp data directory, and generated photo folders."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.photos import make_photo_folder  # noqa: E402


@pytest.fixture
def hash_settings(tmp_path):
    """Settings on the meaningless hash embedder, data in a temp folder, no config file or environment."""
    from core.settings import load_settings

    return load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", generator="standin",
                         judge="clip", checkpoint_s=0.0, batch_size=16)


@pytest.fixture
def photo_folder(tmp_path):
    return make_photo_folder(tmp_path / "photos", good=30, broken=0)
