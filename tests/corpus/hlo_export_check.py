#!/usr/bin/env python3
"""Every corpus program, compiled on stablert, dumps its program as XLA HLO that XLA accepts.

usage: hlo_export_check.py CORPUS_DIR

For each program's newest artifact: compiles it on one stablert device with
`xla_dump_hlo_as_text` and `xla_dump_hlo_as_proto`; XLA's HLO parser must read the text, the
proto must describe the same module (XLA prints both alike), and XLA's CPU backend must compile
the proto (through jaxlib's HLO-to-StableHLO converter). Programs that need several devices
(the sharding category) are compiled only if they compile on one. Exits 1 on any failure
other than the known ones below, printing counts per outcome.
"""
import collections
import glob
import os
import sys
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu,stablert")

from jax._src import xla_bridge  # noqa: E402
from jax._src.lib import _jax  # noqa: E402
import jaxlib._hlo as xla_hlo  # noqa: E402

# Outcomes that are not export faults, with the reason.
KNOWN = {
    # shard_map bodies in the global view: one module cannot say that its body runs per shard.
    "sharding/shard_map_in_scan": "hlo_error",
    "sharding/shard_map_psum_scatter": "hlo_error",
    # jaxlib's HLO-to-StableHLO converter refuses ApproxTopK's custom call (XLA's own HLO of it too).
    "lax_ops/approx_max_k": "xla compile fails",
}


def dump(backend, code):
    with tempfile.TemporaryDirectory() as directory:
        options = _jax.CompileOptions()
        options.env_option_overrides = [("xla_dump_to", directory), ("xla_dump_hlo_as_proto", True),
                                        ("xla_dump_hlo_as_text", True)]
        backend.compile_and_load(code, _jax.DeviceList(tuple(backend.devices()[:1])), options)
        read = lambda pattern, mode="r": [open(p, mode).read() for p in glob.glob(os.path.join(directory, pattern))]
        return read("*hlo_error.txt"), read("*after_optimizations.txt"), read("*after_optimizations.hlo.pb", "rb")


def check(stablert, cpu, code):
    try:
        errors, texts, protos = dump(stablert, code)
    except Exception:  # noqa: BLE001 -- a program that needs several devices
        return "stablert does not compile it on one device", ""
    if errors:
        return "hlo_error", errors[0].strip()
    if len(texts) != 1 or len(protos) != 1:
        return "no dump", f"{len(texts)} texts, {len(protos)} protos"
    try:
        parsed = xla_hlo.hlo_module_from_text(texts[0])
    except Exception as e:  # noqa: BLE001
        return "text rejected", str(e)
    try:
        from_proto = xla_hlo.XlaComputation(protos[0]).get_hlo_module()
    except Exception as e:  # noqa: BLE001
        return "proto rejected", str(e)
    if parsed.to_string() != from_proto.to_string():
        return "text and proto differ", ""
    try:
        module = _jax.mlir.hlo_to_stablehlo(protos[0])
        cpu.compile_and_load(module, _jax.DeviceList(tuple(cpu.devices()[:1])), _jax.CompileOptions())
    except Exception as e:  # noqa: BLE001
        return "xla compile fails", str(e)
    return "ok", ""


def main() -> int:
    root = sys.argv[1]
    stablert, cpu = xla_bridge.get_backend("stablert"), xla_bridge.get_backend("cpu")
    counts = collections.Counter()
    failures = []
    for path in sorted(glob.glob(os.path.join(root, "*", "*.1_17_0.mlirbc"))):
        name = os.path.relpath(path, root).split(".")[0]
        outcome, detail = check(stablert, cpu, open(path, "rb").read())
        counts[outcome] += 1
        expected = KNOWN.get(name)
        if outcome not in ("ok", "stablert does not compile it on one device") and outcome != expected:
            failures.append(f"{name}: {outcome}: {detail.splitlines()[0][:300] if detail else ''}")
        elif expected and outcome != expected:
            failures.append(f"{name}: listed as '{expected}' but now '{outcome}': update KNOWN")
    print("HLO export over the corpus:", dict(counts))
    for line in failures:
        print("FAIL", line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
