#!/usr/bin/env bash
# The tests under AddressSanitizer + UndefinedBehaviorSanitizer: configures and builds a second
# tree (build/asan: GCC, -O1 -g1, STABLERT_SANITIZE=ON, no benchmarks or fuzzers), runs CTest on
# it with leak detection on, then the JAX op matrix against its plugin inside CPython at every
# instruction-set level the CPU has. Any sanitizer report fails the run (no recovery,
# halt_on_error); the report is in the output of the failing test.
#
#   bash tests/sanitizers/run_sanitized.sh
#
# Environment: STABLERT_ASAN_BUILD_DIR (default build/asan), STABLERT_ASAN_JOBS (parallel build
# and CTest jobs, default 2), STABLERT_PYTHON (default .venv/bin/python: the pinned JAX with the
# stablert package installed, as setup.sh leaves it).
#
# Which op-matrix tests run at which level, and why: docs/decisions.md, "Sanitized tests".
# Suppressions (third-party code only, each with its reason): tests/sanitizers/*.supp.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
build="${STABLERT_ASAN_BUILD_DIR:-build/asan}"
[[ "$build" = /* ]] || build="$root/$build"  # absolute: the op-matrix runs load the plugin from it
jobs="${STABLERT_ASAN_JOBS:-2}"
python="${STABLERT_PYTHON:-.venv/bin/python}"
python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")"
supp="$root/tests/sanitizers"
# GCC, because its ASan runtime is a shared library that can be preloaded into CPython (below).
cc=gcc
cxx=g++

phase_start=$SECONDS
times_file="$(mktemp)"
trap 'rm -f "$times_file"' EXIT
phase() {  # phase NAME: prints how long the previous phase took (and CPU user/sys so far), then NAME
  times >"$times_file"  # in this shell: `times` in a subshell reports the subshell's 0 s
  echo "== sanitized: $1 (previous phase $((SECONDS - phase_start)) s; CPU so far $(tail -n 1 "$times_file"))"
  phase_start=$SECONDS
}

phase "build ($build)"
if [ ! -f "$build/build.ninja" ]; then
  # -O1, as AddressSanitizer's documentation advises for usable speed; -g1 (line tables) for
  # file:line in reports, without the variable locations that cost a third of the compile.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_FLAGS="-O1 -g1" -DCMAKE_CXX_FLAGS="-O1 -g1" \
    -DSTABLERT_SANITIZE=ON -DSTABLERT_BUILD_BENCHMARKS=OFF -DSTABLERT_BUILD_FUZZERS=OFF \
    -DPython3_EXECUTABLE="$python" -DSTABLERT_CORPUS_PYTHON="$python" >/dev/null
fi
# gtest_discover_tests runs each test binary at build time to list its tests.
ASAN_OPTIONS="detect_leaks=0" cmake --build "$build" -j"$jobs"

# The C++ tests: every allocation must be freed (leak detection on). allocator_may_return_null:
# an allocation too large to satisfy returns null, as glibc's does, instead of aborting; the
# runtime turns that into RESOURCE_EXHAUSTED and a C API test checks it.
phase "CTest"
common="halt_on_error=1:allocator_may_return_null=1"
export ASAN_OPTIONS="$common:detect_leaks=1:detect_stack_use_after_return=1:strict_init_order=1:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"
(cd "$build" && ctest --output-on-failure -j"$jobs" --timeout 900)

# The op matrix inside CPython: jaxlib dlopens the plugin, so the ASan runtime must be the first
# library of the process (LD_PRELOAD); libstdc++ is preloaded with it so that ASan's
# __cxa_throw interceptor finds the real function (CPython itself does not link libstdc++).
# Leak detection is off here: CPython and jaxlib keep objects alive until exit by design.
# --capture=sys: pytest captures Python's streams only, so a sanitizer report written to file
# descriptor 2 by a dying process reaches the log instead of pytest's capture file.
preload="$($cxx -print-file-name=libasan.so) $($cxx -print-file-name=libstdc++.so)"
ops_command() {  # ops_command ISA [VAR=VALUE...] -- pytest-args...: one op-matrix run's command line
  local isa="$1"
  shift
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  printf '%q ' env LD_PRELOAD="$preload" ASAN_OPTIONS="$common:detect_leaks=0:suppressions=$supp/asan.supp" \
    STABLERT_ISA="$isa" STABLERT_LIBRARY_PATH="$build/libstablert_pjrt.so" \
    PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" "${vars[@]}" \
    "$python" -m pytest -q --capture=sys -p no:cacheprovider "$@"
}
# Each pytest process uses about one core (it compiles and compares one case at a time), so
# two run at once (tests/run_together.sh): the best level's cases in two halves
# (STABLERT_TEST_SHARD, tests/jax/conftest.py), then the two lower levels side by side.
source "$root/tests/run_together.sh"
# Every test file (so every kernel family), at the best level the CPU has, for one dtype per
# element size and storage kind: 1 byte (uint8, bool, float8_e4m3fn), sub-byte (int4), 2 bytes
# (bfloat16), 4 (float32, int32), 8 (float64), 16 (complex128), plus the large row forms:
# 1220 of the 3785 cases. Of those, every second case of each test function, its first
# included (STABLERT_TEST_SAMPLE=0/2: 629 cases; every test function, dtype and large form
# stays in), for CI's time: the whole selection took 9.5 min on two cores.
dtypes='float32 or float64 or -int32] or -uint8] or bool] or complex128 or bfloat16 or -int4] or e4m3fn] or large'
phase "op matrix, STABLERT_ISA=best, two halves at once: tests/jax/ops -k $dtypes, every second case"
run_together "best, first half" "$(ops_command best STABLERT_TEST_SAMPLE=0/2 STABLERT_TEST_SHARD=0/2 -- tests/jax/ops -k "$dtypes")" \
  "best, second half" "$(ops_command best STABLERT_TEST_SAMPLE=0/2 STABLERT_TEST_SHARD=1/2 -- tests/jax/ops -k "$dtypes")"
# The vector kernels (Highway: unary, binary, reductions, vqsort) at the lower levels.
level_runs=()
for level in avx2:avx2 sse4:sse4_2; do
  if grep -qw "${level#*:}" /proc/cpuinfo; then
    level_runs+=("STABLERT_ISA=${level%%:*}" "$(ops_command "${level%%:*}" -- tests/jax/ops/test_elementwise.py \
      tests/jax/ops/test_reduce.py tests/jax/ops/test_sort.py -k "float32 or float64")")
  fi
done
phase "op matrix at the lower levels, side by side: elementwise, reduce, sort (float32, float64)"
if [ "${#level_runs[@]}" -eq 4 ]; then
  run_together "${level_runs[@]}"
elif [ "${#level_runs[@]}" -eq 2 ]; then
  bash -c "${level_runs[1]}"
fi
phase "done"
