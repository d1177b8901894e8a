"""`python app.py doctor`: probe each configured backend with a tiny request and print a table of what works,
what does not, and how to fix it. Exits 0 when every backend works, 1 when one does not."""
from __future__ import annotations

import json
import shutil
import textwrap

from core.backends.registry import Backends
from core.contracts.errors import EcoLensError
from core.doctor import check_up, profile_report


def add_parser(sub) -> None:
    p = sub.add_parser("doctor", help="probe each configured backend with a tiny request and show what works")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


SETTING_MAX = 52  # the setting column grows to this so that a hub model's whole name shows


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of about `width`, broken only at spaces: a setting, a model name or a command in a fix
    line (open_clip:ViT-B-32/laion2b_s34b_b79k) stays whole on one line, so it can be copied as it is."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]


def _table(rows) -> str:
    width = max(80, min(160, shutil.get_terminal_size((120, 20)).columns))
    side = max([28] + [min(SETTING_MAX, len(r.setting)) for r in rows])
    head = f"{'backend':<10} {'status':<8} {'setting':<{side}} {'seconds':>7}  what the probe saw / how to fix"
    lines = [head, "-" * min(width, len(head) + 20)]
    indent = " " * (side + 30)
    for r in rows:
        status = "ok" if r.ok else "FAILED"
        if r.ok and r.standin:
            status = "stand-in"
        setting = r.setting if len(r.setting) <= side else "..." + r.setting[-(side - 3):]
        text = r.detail if r.ok else f"{r.detail}\nhow to fix: {r.fix}"
        wrapped = [w for para in text.splitlines() for w in wrap(para, max(30, width - side - 30))]
        lines.append(f"{r.backend:<10} {status:<8} {setting:<{side}} {r.seconds:>7.2f}  "
                     f"{wrapped[0] if wrapped else ''}")
        lines += [indent + w for w in wrapped[1:]]
    return "\n".join(lines)


def _fetch_models(settings) -> str:
    """Download the profile's hub models with progress on stderr; '' or why it failed (the probes then say
    which backend it leaves without a model)."""
    from cli.common import PhaseBars
    from core.backends import model_fetch

    bars = PhaseBars()
    try:
        model_fetch.fetch(settings, bars)
    except EcoLensError as exc:
        return str(exc)
    finally:
        bars.close()
    return ""


def _profile_lines(report) -> list[str]:
    lines = [f"model profile: models={report['models']} ({report['purpose']})"]
    for name, value in report["explicit"].items():
        lines.append(f"  {name} = {value!r} set explicitly (beats the profile's {report['overridden'][name]!r})")
    if report["not_downloaded"]:
        lines.append("  not downloaded yet: " + ", ".join(report["not_downloaded"]))
    return lines


def run(ctx, args) -> int:
    fetch_error = _fetch_models(ctx.settings) if ctx.settings.models != "standin" else ""
    report = profile_report(ctx.settings)
    rows = check_up(Backends(ctx.settings))
    if args.json:
        print(json.dumps({"ok": all(r.ok for r in rows) and not fetch_error, "profile": report,
                          "download_error": fetch_error, "backends": [r.to_json() for r in rows]}, indent=2))
    else:
        print("\n".join(_profile_lines(report) + ([f"  download failed: {fetch_error}"] if fetch_error else [])))
        print(_table(rows))
        failed = [r.backend for r in rows if not r.ok]
        print("\n" + ("every backend answered" if not failed else f"not working: {', '.join(failed)}"))
    return 0 if all(r.ok for r in rows) else 1
