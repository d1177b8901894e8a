"""`python app.py config`: print the effective settings, secrets masked."""
import json

from core.config import masked


def add_parser(sub) -> None:
    sub.add_parser("config", help="print the effective settings (secrets masked)")


def run(ctx, args) -> int:
    print(json.dumps(masked(ctx.settings), indent=2))
    return 0
