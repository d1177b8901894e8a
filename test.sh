#!/usr/bin/env bash
# Install (first time only) and run the test suite offline.
#   ./test.sh              ruff (lint and import order), then everything: unit, hostile, integration (every
#                          bench/*.py at a tiny size included) and browser tests; what CI runs (.ci/run)
#   ./test.sh fast         ruff, then the fast lane: tests/unit and tests/hostile only (no browser, no
#                          integration), under two minutes once set up; no Chromium needed
# Further arguments go to pytest, e.g. ./test.sh tests/unit -q or ./test.sh fast -k engine
set -euo pipefail
cd "$(dirname "$0")"
LANE=full
if [ "${1:-}" = fast ]; then
  LANE=fast
  shift
fi
bash scripts/setup.sh --dev  # runtime + llama.cpp (the tests run a real llama.cpp server) + test tools
if [ "$LANE" = full ] && [ ! -x /usr/bin/chromium ]; then
  echo "test: installing Debian's chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null;
  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi
fi
if [ "$LANE" = full ] && ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  echo "test: installing Debian's nginx for the serve --processes tests"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq nginx >/dev/null;
  else sudo apt-get update -qq && sudo apt-get install -y -qq nginx >/dev/null; fi
fi
case ":$PATH:" in *:/usr/sbin:*) ;; *) export PATH="$PATH:/usr/sbin" ;; esac  # Debian's nginx lives there
CACHE="${ECOLENS_SETUP_CACHE:-${ECOLENS_CACHE:-$HOME/.cache/ecolens}}"
VENV="${ECOLENS_SETUP_VENV:-${ECOLENS_VENV:-$CACHE/venv}}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# lint and import order first, in both lanes (pyproject.toml's [tool.ruff]); `ruff check --fix .` mends most
# the committed Leaflet (the Filters map) must be Leaflet 1.9.4's files, byte for byte
"$VENV/bin/python" scripts/fetch_leaflet.py
echo "test: ruff check ."
"$VENV/bin/ruff" check .
if [ "$LANE" = fast ]; then
  # --lane fast: tests/conftest.py refuses to run a browser or integration test in this lane
  exec "$VENV/bin/python" -m pytest --lane fast tests/unit tests/hostile "$@"
fi
exec "$VENV/bin/python" -m pytest "$@"
