"""Each phase of a long preparation is named on stderr even where tqdm's bars are off (CI=true, as in CI)."""
from __future__ import annotations

from cli.common import PhaseBars


def test_without_bars_each_phase_gets_one_line(monkeypatch, capsys):
    monkeypatch.setenv("CI", "true")
    bars = PhaseBars()
    for done in (0, 500, 1000):
        bars("downloading SmolVLM-256M-Instruct", done, 1000)
    bars("indexing the photos", 3, 12)
    bars.close()
    err = capsys.readouterr().err
    assert err.count("downloading SmolVLM-256M-Instruct") == 1 and err.count("indexing the photos") == 1
    assert bars.used


def test_with_bars_the_phase_is_the_bar_description(monkeypatch, capsys):
    monkeypatch.delenv("CI", raising=False)
    bars = PhaseBars()
    bars("downloading INQUIRE-Rerank (validation split)", 10, 100)
    bars.close()
    assert "downloading INQUIRE-Rerank (validation split)" in capsys.readouterr().err
