"""Test set-up shared by every layer: the repository root on sys.path (helpers live in tests/photos.py)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


import pytest  # noqa: E402

from core.contracts import world as _world  # noqa: E402
from fieldguide.plugin import register as _register_fieldguide  # noqa: E402

# Tests use the field-guide world as data: the plug-in is registered as app.py registers it, and its rule book
# reads requests unless a test (or the services it builds for other photos) chooses otherwise.
_register_fieldguide()


@pytest.fixture(autouse=True)
def fieldguide_rules():
    """Each test starts with the field-guide world's rule book in use, and leaves the generic one behind it
    untouched for the next (a test that builds services for its own photos switches to the generic rules)."""
    _world.use_world("fieldguide")
    yield
    _world.use_world("fieldguide")
