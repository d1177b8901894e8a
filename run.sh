#!/usr/bin/env bash
# Install (first time only) and run EcoLens: with no arguments it serves the web app on
# http://127.0.0.1:7860; with arguments it runs that command, e.g. ./run.sh search "a frog calling".
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
VENV="${ECOLENS_VENV:-${ECOLENS_CACHE:-$HOME/.cache/ecolens}/venv}"
exec "$VENV/bin/python" app.py "$@"
