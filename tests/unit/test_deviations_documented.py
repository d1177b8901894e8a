"""Every deviation from the papers that the evaluation report lists is explained in docs/methods.md."""
from pathlib import Path

from core.evaluation.deviations import DEVIATIONS, markdown_lines

ROOT = Path(__file__).resolve().parents[2]


def test_each_deviation_is_in_docs_methods_md_and_the_report_lines():
    doc = " ".join((ROOT / "docs" / "methods.md").read_text(encoding="utf-8").split())
    report = "\n".join(markdown_lines())
    for d in DEVIATIONS:
        assert " ".join(d.what.split()) in doc, d.what
        assert d.what in report and d.why in report
