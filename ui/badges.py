"""A yes/no check as the page shows it: its verdict (yes, no, can't tell, not checked), the judge's reason in plain
words, and its badge in the photo view (escaped HTML). Pure functions of one sub-question entry (the dicts of
core.methods.rerank's answers, in the stages and the search JSON), no gradio; ui.present reads a photo's entries
out of the stages."""
from __future__ import annotations

import re
from html import escape
from typing import Any, Iterable

from core.contracts.settings_fields import SettingFields
from core.contracts.verdicts import CANNOT_TELL, NO, NOT_CHECKED, YES, entry_verdict
from ui import strings as S
from ui import strings_web as SW


def reason_text(reason: str) -> str:
    """The judge's reason in plain words (the offline stand-in writes its internals; ui.strings_web.REASON_WORDS)."""
    text = str(reason or "").strip()
    for pattern, replacement in SW.REASON_WORDS:
        text = re.sub(pattern, replacement, text)
    return re.sub(r"\((0\.\d\d|1\.00)\)", lambda m: "(" + SW.SURE.format(p=float(m.group(1))) + ")", text)


# the verdict of each check is decided once, in core (setting undecided_band); entries saved before verdicts were
# stored (a history search of an older version) are read with the setting's default band
LEGACY_BAND = SettingFields.model_fields["undecided_band"].default


def check_verdict(a: dict[str, Any]) -> str:
    """'yes', 'no', "can't tell" or 'not checked' for one sub-question entry, as `search --json` prints it."""
    if a.get("checked") is False:
        return NOT_CHECKED
    if "judge_answer" in a:
        return str(a.get("answer", ""))
    return entry_verdict(a, LEGACY_BAND)


def badge_reason(a: dict[str, Any]) -> str:
    """The reason a badge shows, never contradicting its verdict: the judge's own note in plain words with its
    own confidences ("belly visible (100% sure)") only where the verdict is the judge's own yes or no; for a
    "can't tell", or a verdict its votes turned, the note without its numbers, after what the judge leaned to."""
    said = check_verdict(a)
    text = reason_text(a.get("reason", ""))
    own = str(a.get("judge_answer", said)).strip().lower()
    if said == NOT_CHECKED or (said in (YES, NO) and own in ("", said)):
        return text
    plain = re.sub(r"\s*\((?:\d+% sure|[01]\.\d\d)\)", "", text).strip()
    p = a.get("p_yes")
    lean = S.LEANED.format(word=own or "?", p=f"{float(p):.0%}" if isinstance(p, (int, float)) else "?")
    return f"{lean}{S.LEANED_NOTE.format(note=plain) if plain else ''}"


def badges_html(answers: Iterable[dict[str, Any]]) -> str:
    """One badge per sub-question: the answer, the judge's confidence and its reason, all escaped. A question
    the checker could not check says "not checked" and why (it counts as undecided, 50%: neither for nor against
    the photo)."""
    parts = []
    for a in answers:
        said = check_verdict(a)
        p_yes = a.get("p_yes")
        conf = f"{float(p_yes):.0%} sure it is yes" if isinstance(p_yes, (int, float)) else ""
        ans, kind = said, "badge-yes" if said == YES else "badge-no"
        if said == NOT_CHECKED:
            ans, kind, conf = S.NOT_CHECKED, "badge-unchecked", S.NOT_COUNTED
        elif said == CANNOT_TELL:
            ans, kind = S.CANNOT_TELL, "badge-unsure"  # inside the undecided band: neither a yes nor a no
        parts.append(
            f'<div class="ecolens-badge {kind}">'
            f"<b>{escape(ans or '?')}</b> <span class='badge-q'>{escape(str(a.get('question', '')))}</span>"
            f" <span class='badge-conf'>{escape(conf)}</span>"
            f"<div class='badge-reason'>{escape(badge_reason(a))}</div></div>")
    return "".join(parts)
