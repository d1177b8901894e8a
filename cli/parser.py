"""The top level of the command line, `python app.py [--config F] [--port P] [--host H] [COMMAND ...]`: its parser
(each command's module adds its own sub-parser), the argument list read as the user meant it, and an error printed
as every command prints one (`error:` / `how to fix:`, exit status 2). app.py names the commands and runs them."""
from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Iterable

from core.contracts.errors import EcoLensError

log = logging.getLogger(__name__)


def make_parser(command_modules: Iterable[str]) -> argparse.ArgumentParser:
    """The parser of `python app.py`, with a sub-parser from each module of `command_modules` (add_parser(sub))."""
    from cli.common import Parser

    parser = Parser(prog="python app.py", description="EcoLens: expert search of nature photos. "
                                     "With no command, serves the web app.")
    parser.add_argument("--config", help="TOML settings file (default: $ECOLENS_CONFIG or ./ecolens.toml)")
    parser.add_argument("--port", type=int, help="port of the web app")
    parser.add_argument("--host", help="address of the web app")
    sub = parser.add_subparsers(dest="command")
    for module in command_modules:
        importlib.import_module(module).add_parser(sub)
    return parser


def join_negative_values(argv: list[str]) -> list[str]:
    """argparse reads "--bbox -10,35,30,60" as two options; glue a value that starts with a minus sign."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] == "--bbox" and arg[:1] == "-" and arg[1:2].isdigit():
            out[-1] = f"--bbox={arg}"
        else:
            out.append(arg)
    return out


def report(exc: EcoLensError) -> int:
    """Print `exc` as `error: ...` / `how to fix: ...` on stderr, with one line in ecolens.log (once the log is set
    up: a refused command is on record beside the web app's refusals); the exit status (2)."""
    log.info("command refused: %s", exc.message)
    print(f"error: {exc.message}" + (f"\nhow to fix: {exc.hint}" if exc.hint else ""), file=sys.stderr)
    return 2
