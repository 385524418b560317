"""Compile time over the StableHLO corpus: StableRT's PJRT C API against XLA's CPU client.

    .venv/bin/python benchmarks/compile_benchmark.py [--corpus build/corpus] [--version 1_13_7]
        [--repeats 5] [--only SUBSTRING] [--slowest 15] [--stablert-only]

The corpus (tests/corpus/README.md; CTest's corpus_generate writes it into build/corpus) holds
every kind of program JAX sends to a plugin, serialized as StableHLO portable artifacts. For
each program, in one process:

  - StableRT: PJRT_Client_Compile on the artifact's bytes, called through ctypes on the
    plugin's PJRT_Api (STABLERT_LIBRARY_PATH, else the installed plugin), then
    PJRT_LoadedExecutable_Destroy (not timed);
  - XLA: jaxlib's CPU client `compile_and_load` on the same bytes (XLA's own reading of
    the artifact included, as StableRT's is).
Both timers are in benchmarks/pjrt_compile_timer.py (shared with jax_benchmark.py).

JAX's tracing and lowering are excluded on both sides; both get the same CompileOptionsProto
(one replica, one partition). The time is the best of --repeats compilations (the machine is
shared; the best is stable, medians drift with load). Programs that either side rejects
(multi-device programs on one device, unsupported ops) are listed apart and left out of the
statistics. Prints per-program times, then the median, the geometric mean of XLA / StableRT,
the worst ratio and the slowest StableRT programs.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pjrt_compile_timer import StableRtCompiler, XlaCompiler, best_of, default_options  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default=str(ROOT / "build" / "corpus"))
    p.add_argument("--version", default="1_13_7", help="artifact version (JAX's default target: 1_13_7)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--only", default="", help="programs whose category/name contains this")
    p.add_argument("--slowest", type=int, default=15)
    p.add_argument("--stablert-only", action="store_true", help="skip XLA (faster; no ratios)")
    args = p.parse_args()

    files = sorted(Path(args.corpus).glob(f"*/*.{args.version}.mlirbc"))
    files = [f for f in files if args.only in f"{f.parent.name}/{f.name}"]
    if not files:
        print(f"no *.{args.version}.mlirbc under {args.corpus}: run `ctest -R corpus_generate` first", file=sys.stderr)
        return 2

    sys.path.insert(0, str(ROOT / "python"))
    import stablert

    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    xla = None if args.stablert_only else XlaCompiler()
    options_bytes = default_options()
    ours = StableRtCompiler(stablert.library_path())

    rows, skipped = [], []
    for path in files:
        name = f"{path.parent.name}/{path.name[: -len(f'.{args.version}.mlirbc')]}"
        code = path.read_bytes()
        try:
            ours.compile_seconds(code, options_bytes)  # warm-up: first use of kernels, pools
            s = best_of(lambda: ours.compile_seconds(code, options_bytes), args.repeats)
        except RuntimeError as error:
            skipped.append((name, "StableRT: " + str(error).splitlines()[0][:100]))
            continue
        x = None
        if xla is not None:
            try:
                x = best_of(lambda: xla.compile_seconds(code, options_bytes), min(args.repeats, 3))
            except Exception as error:  # noqa: BLE001 - jaxlib raises its own error types
                skipped.append((name, "XLA: " + str(error).splitlines()[0][:100]))
                continue
        rows.append((name, len(code), s, x))

    print(f"| program | bytes | StableRT ms | XLA ms | XLA / StableRT |\n|---|---:|---:|---:|---:|")
    for name, size, s, x in rows:
        ratio = f"{x / s:.0f}x" if x else "-"
        print(f"| {name} | {size} | {s * 1e3:.3f} | {x * 1e3:.1f} | {ratio} |" if x else
              f"| {name} | {size} | {s * 1e3:.3f} | - | - |")
    ours_ms = [s * 1e3 for _, _, s, _ in rows]
    print(f"\n{len(rows)} programs measured, {len(skipped)} skipped")
    print(f"StableRT: median {statistics.median(ours_ms):.3f} ms, p90 "
          f"{sorted(ours_ms)[int(0.9 * (len(ours_ms) - 1))]:.3f} ms, max {max(ours_ms):.3f} ms")
    if xla is not None:
        xla_ms = [x * 1e3 for _, _, _, x in rows]
        ratios = [x / s for _, _, s, x in rows]
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        worst = min(range(len(rows)), key=lambda i: ratios[i])
        print(f"XLA:      median {statistics.median(xla_ms):.1f} ms")
        print(f"XLA / StableRT: geometric mean {geo:.0f}x, worst {ratios[worst]:.1f}x ({rows[worst][0]}), "
              f"StableRT slower on {sum(r < 1 for r in ratios)} programs")
    print(f"\nslowest on StableRT:")
    for name, size, s, x in sorted(rows, key=lambda r: -r[2])[: args.slowest]:
        print(f"  {s * 1e3:8.3f} ms  {name} ({size} bytes)")
    if skipped:
        print("\nskipped:")
        for name, why in skipped:
            print(f"  {name}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
