"""ui/forms.py is the one module that turns anything into a Gradio pop-up (gr.Error, gr.Warning, gr.Info), so
every message on the page passes through its web wording; a failed history record says what to do."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.contracts.errors import EcoLensError
from ui import strings as S
from ui.forms import not_recorded

UI = Path(__file__).resolve().parents[2] / "ui"
POPUP = re.compile(r"\bgr\.(Error|Warning|Info)\(")


def test_only_forms_makes_gradio_popups():
    others = [f"{p.name}:{n}" for p in sorted(UI.glob("*.py")) if p.name != "forms.py"
              for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if POPUP.search(line)]
    assert others == []
    assert POPUP.search((UI / "forms.py").read_text(encoding="utf-8"))


@pytest.mark.parametrize("hint", ["free some space on the data disk", ""])
def test_a_record_that_could_not_be_saved_says_why_and_what_to_do(hint):
    said = not_recorded(EcoLensError("the session log could not be written: disk I/O error", hint))
    assert said.startswith(S.NOT_RECORDED.split("{")[0]) and "disk I/O error" in said
    assert (hint.capitalize() in said) if hint else said.endswith(S.NOT_RECORDED_FIX)
