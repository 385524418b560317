#!/usr/bin/env bash
# Runs every StableRT test: the C++ suites (unit, C API conformance, layering) through
# CTest, then the JAX tests through pytest, a fuzzer, and the sanitized build's tests.
# Run `bash setup.sh` once before.
#   bash test.sh
set -euo pipefail
cd "$(dirname "$0")"
cmake --build build
(cd build && ctest --output-on-failure -j2 --timeout 600)
.venv/bin/pip install -q --no-build-isolation .
.venv/bin/python -m pytest -q tests/jax
# The vector kernels at the lower instruction-set levels the CPU has (the run above uses the
# best): the float elementwise op matrix (f16/bf16 run in the f32 vector kernels), about
# 2-2.5 min per level, and the products and convolutions, about 1.5 min.
for level in sse4:sse4_2 avx2:avx2; do
  if grep -qw "${level#*:}" /proc/cpuinfo; then
    STABLERT_ISA=${level%%:*} .venv/bin/python -m pytest -q tests/jax/ops/test_elementwise.py \
      -k "float32 or float64 or float16 or bfloat16"
    # Matrix products and convolutions: oneDNN's and libxsmm's generated code follow the cap.
    STABLERT_ISA=${level%%:*} .venv/bin/python -m pytest -q tests/jax/ops/test_dot_conv.py
  fi
done
# Multi-device tests run in their own session: device counts are fixed at backend creation.
STABLERT_DEVICE_COUNT=4 .venv/bin/python -m pytest -q tests/jax_multi_device
bash tests/fuzz/run_fuzzer.sh 60   # the StableHLO reader under libFuzzer, ASan and UBSan
# A second build (build/asan) with AddressSanitizer + UBSan: CTest with leak detection, then the
# op matrix in CPython at every ISA level (docs/decisions.md, "Sanitized tests").
bash tests/sanitizers/run_sanitized.sh
