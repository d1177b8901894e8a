"""`python app.py doctor`: probe each configured backend with a tiny request and print a table of what works,
what does not, and how to fix it. Exits 0 when every backend works, 1 when one does not."""
from __future__ import annotations

import json
import shutil
import textwrap

from core.backends.registry import Backends
from core.doctor import check_up


def add_parser(sub) -> None:
    p = sub.add_parser("doctor", help="probe each configured backend with a tiny request and show what works")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def _table(rows) -> str:
    width = max(80, min(160, shutil.get_terminal_size((120, 20)).columns))
    head = f"{'backend':<10} {'status':<8} {'setting':<28} {'seconds':>7}  what the probe saw / how to fix"
    lines = [head, "-" * min(width, len(head) + 20)]
    indent = " " * 58
    for r in rows:
        status = "ok" if r.ok else "FAILED"
        if r.ok and r.standin:
            status = "stand-in"
        setting = r.setting if len(r.setting) <= 28 else r.setting[:25] + "..."
        text = r.detail if r.ok else f"{r.detail}\nhow to fix: {r.fix}"
        wrapped = [w for para in text.splitlines() for w in textwrap.wrap(para, max(30, width - 58)) or [""]]
        lines.append(f"{r.backend:<10} {status:<8} {setting:<28} {r.seconds:>7.2f}  {wrapped[0] if wrapped else ''}")
        lines += [indent + w for w in wrapped[1:]]
    return "\n".join(lines)


def run(ctx, args) -> int:
    rows = check_up(Backends(ctx.settings))
    if args.json:
        print(json.dumps({"ok": all(r.ok for r in rows), "backends": [r.to_json() for r in rows]}, indent=2))
    else:
        print(_table(rows))
        failed = [r.backend for r in rows if not r.ok]
        print("\n" + ("every backend answered" if not failed else f"not working: {', '.join(failed)}"))
    return 0 if all(r.ok for r in rows) else 1
