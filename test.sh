#!/usr/bin/env bash
# Install (first time only) and run the whole test suite offline: unit, integration and browser tests.
# Extra arguments go to pytest, e.g. ./test.sh tests/unit -q
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh --dev  # runtime + llama.cpp (the tests run a real llama.cpp server) + test tools
if [ ! -x /usr/bin/chromium ]; then
  echo "test: installing Debian's chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null;
  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi
fi
CACHE="${ECOLENS_SETUP_CACHE:-${ECOLENS_CACHE:-$HOME/.cache/ecolens}}"
VENV="${ECOLENS_SETUP_VENV:-${ECOLENS_VENV:-$CACHE/venv}}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec "$VENV/bin/python" -m pytest "$@"
