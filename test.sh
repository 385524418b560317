#!/usr/bin/env bash
# Runs every StableRT test: the C++ suites (unit, C API conformance, layering) through
# CTest, then the JAX tests through pytest, a fuzzer, and the sanitized build's tests.
# Run `bash setup.sh` once before.
#   bash test.sh
set -euo pipefail
cd "$(dirname "$0")"
cmake --build build
(cd build && ctest --output-on-failure -j2 --timeout 600)
# The package from the binaries just built and tested (build/, pyproject.toml's override).
STABLERT_PIP_USES_BUILD=1 .venv/bin/pip install -q --no-build-isolation .
# The JAX tests in two halves at once (STABLERT_TEST_SHARD, tests/jax/conftest.py): each pytest
# process compiles and compares one case at a time, about one core (tests/run_together.sh).
source tests/run_together.sh
run_together "tests/jax, first half" "STABLERT_TEST_SHARD=0/2 .venv/bin/python -m pytest -q tests/jax" \
  "tests/jax, second half" "STABLERT_TEST_SHARD=1/2 .venv/bin/python -m pytest -q tests/jax"
# The user's wheel (tools/wheel/build_wheel.sh, packing build/ as the install above does):
# manylinux tag, a fresh venv with the system's copies of the bundled libraries hidden, the
# sdist (tests/wheel/test_wheel.sh; 0.5-1.5 min, mostly pip installing JAX into the venv).
bash tests/wheel/test_wheel.sh
# The vector kernels at the lower instruction-set levels the CPU has (the run above uses the
# best): every op-matrix case that reaches a kernel with a vector path, for the dtypes that
# path covers (docs/decisions.md, "Tests at every instruction-set level"): float elementwise
# (f16/bf16 run in the f32 vector kernels), reductions and argmax, scatter's row updates,
# compare/select/clamp, the vector converts, transposes, vqsort, FFTs, and the matrix
# products and convolutions (oneDNN's and libxsmm's generated code follow the cap). Files
# without vector code (control flow, linear algebra, RNG, windows), gathers and dynamic slices,
# bitcasts, cumulative ops (windows) and the other shape ops are left to the run above.
# 656 cases, about 2.7 min of CPU per level (so about 3 min on a quiet machine; 8.5 min wall
# at load 8-9); the float elementwise + dot/conv selection before took 1.6 min of CPU.
level_files=(tests/jax/ops/test_elementwise.py tests/jax/ops/test_reduce.py tests/jax/ops/test_compare.py
  tests/jax/ops/test_convert.py::test_convert tests/jax/ops/test_gather_scatter.py::test_scatter
  tests/jax/ops/test_gather_scatter.py::test_scatter_batched tests/jax/ops/test_gather_scatter.py::test_large_row_forms
  tests/jax/ops/test_memory_bound.py tests/jax/ops/test_shape.py tests/jax/ops/test_sort.py tests/jax/ops/test_fft.py
  tests/jax/ops/test_fft_large.py tests/jax/ops/test_dot_conv.py
  tests/jax/ops/test_scalar_loops.py::test_scalar_path_gives_the_vector_kernels_bits)
level_cases="not cumulative and not (test_shape and not transpose) and (dot_conv or fft or memory_bound"
level_cases+=" or transpose or large_row_forms or float32 or float64 or float16 or bfloat16"
level_cases+=" or (test_compare and (int32 or uint8)) or (test_convert and int32))"
# The two levels run at once, likewise.
level_runs=()
for level in sse4:sse4_2 avx2:avx2; do
  if grep -qw "${level#*:}" /proc/cpuinfo; then
    level_runs+=("STABLERT_ISA=${level%%:*}" "STABLERT_ISA=${level%%:*} $(printf '%q ' .venv/bin/python -m pytest \
      -q -p no:cacheprovider "${level_files[@]}" -k "$level_cases")")
  fi
done
if [ "${#level_runs[@]}" -eq 4 ]; then
  run_together "${level_runs[@]}"
elif [ "${#level_runs[@]}" -eq 2 ]; then
  bash -c "${level_runs[1]}"
fi
# Multi-device tests run in their own session: device counts are fixed at backend creation.
STABLERT_DEVICE_COUNT=4 .venv/bin/python -m pytest -q tests/jax_multi_device
# Multi-process jobs (2x2 and 4x2 devices) started by `python -m stablert.launch`, a killed and a
# hung peer, a refused global-view program (~40 s; docs/multi_process.md).
.venv/bin/python -m pytest -q -p no:cacheprovider tests/jax_multi_process
bash tests/fuzz/run_fuzzer.sh 30   # the StableHLO reader under libFuzzer, ASan and UBSan
STABLERT_FUZZ_TARGET=text_parser_fuzz bash tests/fuzz/run_fuzzer.sh 25   # the MLIR text reader
# A second build (build/asan) with AddressSanitizer + UBSan: CTest with leak detection, then the
# op matrix in CPython at every ISA level (docs/decisions.md, "Sanitized tests").
bash tests/sanitizers/run_sanitized.sh
