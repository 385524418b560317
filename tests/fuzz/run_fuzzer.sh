#!/usr/bin/env bash
# Builds the reader's libFuzzer target with clang (coverage + ASan + UBSan) in its own build
# directory and runs it for a bounded time. Fails on any crash, hang (> 5 s per input),
# leak, out-of-memory (> 2 GB) or sanitizer report; the reproducer is left in the build
# directory (crash-*, timeout-*, leak-*, oom-*) and the failing input's hex is printed.
#
#   bash tests/fuzz/run_fuzzer.sh SECONDS [extra libFuzzer flags...]
#
# Environment: STABLERT_FUZZ_BUILD_DIR (default build/fuzz), CLANG (default clang-14),
# STABLERT_FUZZ_JOBS (parallel build jobs, default 2), STABLERT_FUZZ_TARGET (read_module_fuzz,
# the default: the whole reader on bytes; or text_parser_fuzz: the MLIR text reader).
# Seeds: tests/fuzz/corpus/ (committed, read-only here) and tests/testdata/programs/
# (read_module_fuzz), tests/fuzz/text_corpus/ (text_parser_fuzz); new inputs go to
# $STABLERT_FUZZ_BUILD_DIR/corpus[-text]/, which persists between runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:?usage: run_fuzzer.sh SECONDS [libFuzzer flags...]}"
shift
build="${STABLERT_FUZZ_BUILD_DIR:-build/fuzz}"
clang="${CLANG:-clang-14}"
jobs="${STABLERT_FUZZ_JOBS:-2}"
target="${STABLERT_FUZZ_TARGET:-read_module_fuzz}"
case "$target" in
  read_module_fuzz) seeds="tests/fuzz/corpus tests/testdata/programs"; dict=read_module.dict; work_name=corpus ;;
  text_parser_fuzz) seeds="tests/fuzz/text_corpus"; dict=text_parser.dict; work_name=corpus-text ;;
  *) echo "run_fuzzer.sh: unknown STABLERT_FUZZ_TARGET '$target'" >&2; exit 2 ;;
esac
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_C_COMPILER="$clang" -DCMAKE_CXX_COMPILER="${clang/clang/clang++}" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DSTABLERT_BUILD_TESTS=OFF -DSTABLERT_BUILD_BENCHMARKS=OFF -DSTABLERT_BUILD_FUZZERS=ON \
    >/dev/null
fi
cmake --build "$build" --target "$target" -- -j"$jobs"

work="$build/$work_name"
mkdir -p "$work" "$build/artifacts"
rm -f "$build"/artifacts/*
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
# shellcheck disable=SC2086
"$build/tests/fuzz/$target" "$work" $seeds \
  -dict="tests/fuzz/$dict" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/artifacts/" "$@" \
  2>"$build/$target.log" || status=$?
tail -n 30 "$build/$target.log"
if [ "$status" -ne 0 ]; then
  echo "run_fuzzer.sh: the fuzzer failed (status $status); full log: $build/$target.log" >&2
  for f in "$build"/artifacts/*; do
    [ -f "$f" ] && { echo "reproducer $f:" >&2; od -An -tx1 -v "$f" | head -n 20 >&2; }
  done
  exit 1
fi
echo "run_fuzzer.sh: $target: no findings in ${seconds} s"
