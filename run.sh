#!/usr/bin/env bash
# Install (first time only) and run EcoLens: with no arguments it serves the web app on
# http://127.0.0.1:7860; with arguments it runs that command, e.g. ./run.sh search "a frog calling".
# Only the runtime is installed (a few minutes); llama-cpp-python is built as well when the settings choose
# llm='llama_cpp' (or with ECOLENS_SETUP_LLAMA=1). See scripts/setup.sh for the install-time variables.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
CACHE="${ECOLENS_SETUP_CACHE:-${ECOLENS_CACHE:-$HOME/.cache/ecolens}}"
VENV="${ECOLENS_SETUP_VENV:-${ECOLENS_VENV:-$CACHE/venv}}"
if [ "${ECOLENS_SETUP_LLAMA:-0}" != 1 ] && "$VENV/bin/python" scripts/wants_llama.py "$@"; then
  echo "run: the settings choose llm='llama_cpp'; installing llama-cpp-python"
  bash scripts/setup.sh --llama
fi
exec "$VENV/bin/python" app.py "$@"
