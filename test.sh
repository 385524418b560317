#!/usr/bin/env bash
# Runs every StableRT test: the C++ suites (unit, C API conformance, layering) through
# CTest, then the JAX tests through pytest. Run `bash setup.sh` once before.
#   bash test.sh
set -euo pipefail
cd "$(dirname "$0")"
cmake --build build
(cd build && ctest --output-on-failure -j2 --timeout 600)
.venv/bin/pip install -q --no-build-isolation .
.venv/bin/python -m pytest -q tests/jax
# Multi-device tests run in their own session: device counts are fixed at backend creation.
STABLERT_DEVICE_COUNT=4 .venv/bin/python -m pytest -q tests/jax_multi_device
bash tests/fuzz/run_fuzzer.sh 60   # the StableHLO reader under libFuzzer, ASan and UBSan
