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

JAX's tracing and lowering are excluded on both sides; both get the same CompileOptionsProto
(one replica, one partition). The time is the best of --repeats compilations (the machine is
shared; the best is stable, medians drift with load). Programs that either side rejects
(multi-device programs on one device, unsupported ops) are listed apart and left out of the
statistics. Prints per-program times, then the median, the geometric mean of XLA / StableRT,
the worst ratio and the slowest StableRT programs.
"""
from __future__ import annotations

import argparse
import ctypes
import math
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# --- the PJRT C API through ctypes --------------------------------------------------------------


class _Args(ctypes.Structure):
    """Every PJRT *_Args struct starts with struct_size and extension_start."""

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(self), **fields)


def _args(name, *fields):
    return type(name, (_Args,), {"_fields_": [("struct_size", ctypes.c_size_t),
                                              ("extension_start", ctypes.c_void_p), *fields]})


ErrorDestroyArgs = _args("ErrorDestroyArgs", ("error", ctypes.c_void_p))
ErrorMessageArgs = _args("ErrorMessageArgs", ("error", ctypes.c_void_p), ("message", ctypes.c_char_p),
                         ("message_size", ctypes.c_size_t))
PluginInitializeArgs = _args("PluginInitializeArgs")
ClientCreateArgs = _args("ClientCreateArgs", ("create_options", ctypes.c_void_p), ("num_options", ctypes.c_size_t),
                         ("kv_get_callback", ctypes.c_void_p), ("kv_get_user_arg", ctypes.c_void_p),
                         ("kv_put_callback", ctypes.c_void_p), ("kv_put_user_arg", ctypes.c_void_p),
                         ("client", ctypes.c_void_p), ("kv_try_get_callback", ctypes.c_void_p),
                         ("kv_try_get_user_arg", ctypes.c_void_p))
ClientDestroyArgs = _args("ClientDestroyArgs", ("client", ctypes.c_void_p))
Program = _args("Program", ("code", ctypes.c_char_p), ("code_size", ctypes.c_size_t), ("format", ctypes.c_char_p),
                ("format_size", ctypes.c_size_t))
ClientCompileArgs = _args("ClientCompileArgs", ("client", ctypes.c_void_p), ("program", ctypes.POINTER(Program)),
                          ("compile_options", ctypes.c_char_p), ("compile_options_size", ctypes.c_size_t),
                          ("executable", ctypes.c_void_p))
LoadedExecutableDestroyArgs = _args("LoadedExecutableDestroyArgs", ("executable", ctypes.c_void_p))

# PJRT_Api: struct_size, extension_start, PJRT_Api_Version {struct_size, extension_start, int,
# int}, then one function pointer per slot in the order of src/capi/api_slots.def.
_SLOTS_OFFSET = 8 + 8 + (8 + 8 + 4 + 4)


class StableRtCompiler:
    """PJRT_Client_Compile of StableRT's plugin, called directly."""

    def __init__(self, library: str):
        self.lib = ctypes.CDLL(library)
        self.lib.GetPjrtApi.restype = ctypes.c_void_p
        self.api = self.lib.GetPjrtApi()
        slots = re.findall(r"^(?:IMPL|STUB)\((\w+)\)", (ROOT / "src/capi/api_slots.def").read_text(), re.M)
        self.slot = {name: i for i, name in enumerate(slots)}
        self._call("PJRT_Plugin_Initialize", PluginInitializeArgs())
        create = ClientCreateArgs()
        self._call("PJRT_Client_Create", create)
        self.client = create.client

    def _fn(self, name):
        address = ctypes.c_void_p.from_address(self.api + _SLOTS_OFFSET + 8 * self.slot[name]).value
        return ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(address)

    def _call(self, name, args):
        error = self._fn(name)(ctypes.addressof(args))
        if error:
            message = ErrorMessageArgs(error=error)
            self._fn("PJRT_Error_Message")(ctypes.addressof(message))
            text = ctypes.string_at(message.message, message.message_size).decode(errors="replace")
            self._fn("PJRT_Error_Destroy")(ctypes.addressof(ErrorDestroyArgs(error=error)))
            raise RuntimeError(text)

    def compile_seconds(self, code: bytes, options: bytes) -> float:
        """Seconds of one PJRT_Client_Compile (the executable is destroyed untimed)."""
        program = Program(code=code, code_size=len(code), format=b"mlir", format_size=4)
        args = ClientCompileArgs(client=self.client, program=ctypes.pointer(program), compile_options=options,
                                 compile_options_size=len(options))
        start = time.perf_counter()
        self._call("PJRT_Client_Compile", args)
        elapsed = time.perf_counter() - start
        self._call("PJRT_LoadedExecutable_Destroy", LoadedExecutableDestroyArgs(executable=args.executable))
        return elapsed


class XlaCompiler:
    """jaxlib's XLA:CPU client, compiling the same portable artifact."""

    def __init__(self):
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        from jax._src import compiler
        from jax._src.lib import xla_client
        from jax.extend import backend

        self.backend = backend.get_backend("cpu")
        self.devices = xla_client.DeviceList(tuple(self.backend.local_devices()[:1]))
        self.options = compiler.get_compile_options(num_replicas=1, num_partitions=1)

    def compile_seconds(self, code: bytes) -> float:
        start = time.perf_counter()
        executable = self.backend.compile_and_load(code, self.devices, self.options)
        elapsed = time.perf_counter() - start
        del executable
        return elapsed


def best_of(fn, repeats):
    return min(fn() for _ in range(repeats))


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

    xla = None if args.stablert_only else XlaCompiler()
    if xla is None:
        from jax._src import compiler
        options = compiler.get_compile_options(num_replicas=1, num_partitions=1)
    else:
        options = xla.options
    options_bytes = options.SerializeAsString()
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
                x = best_of(lambda: xla.compile_seconds(code), max(1, min(args.repeats, 3)))
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
