#!/usr/bin/env python3
"""Builds the StableHLO corpus: JAX programs serialized as the PJRT client sends them.

Every program of the catalogues in programs/ is lowered with jax.jit on JAX's CPU backend
(8 host devices, so sharded and shard_map programs have a real mesh) and serialized as a
VHLO portable artifact exactly as jaxlib's PJRT C API client does: mixed (sdy-preserving)
serialization for targets >= 1.11.0, Shardy round-trip export below. Three targets per
program: the oldest StableHLO accepts (0.9.0), JAX's default target (WEEK_12 anchor) and
jaxlib's current version.

Output (OUT_DIR is emptied of earlier corpus files first):
  OUT_DIR/<category>/<program>.<X_Y_Z>.mlirbc
  OUT_DIR/<category>/<program>.mlir, <program>.generic.mlir   the newest artifact as MLIR
                         text (pretty and generic form); stablert_text_check reads them
  OUT_DIR/<category>/<program>.<X_Y_Z>.skeleton.txt   the artifact as StableHLO's own reader
  OUT_DIR/<category>/<program>.<X_Y_Z>.attrs.txt      sees it, and every op's attributes as
                         MLIR decodes them (skeleton.py); stablert_read_check compares
                         StableRT's import with both
  OUT_DIR/manifest.tsv   one line per (program, target): category, program, target,
                         "ok" or "unserializable", size in bytes or the serializer's reason
A program that cannot be serialized for an older target (e.g. composites before 1.4.0,
newer float types) is recorded as unserializable there; failing to lower a program, or to
serialize it for jaxlib's current version, is an error (exit status 1).

usage: generate_corpus.py OUT_DIR [--only CATEGORY,...]
Run with the JAX in .venv (pinned in setup.sh).
"""
import argparse
import importlib
import os
import pathlib
import shutil
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import jax  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402

jax.config.update("jax_num_cpu_devices", 8)

from jax._src.lib import _jax  # noqa: E402
from jaxlib.mlir.dialects import stablehlo  # noqa: E402

import skeleton  # noqa: E402

CATEGORIES = ["numpy_ops", "lax_ops", "nn", "random", "scipy", "linalg", "fft", "control_flow",
              "autodiff", "vmap", "dtypes", "shapes", "sharding", "misc"]
MIXED_SERIALIZATION_MIN = (1, 11, 0)


def version_tuple(v):
    return tuple(int(x) for x in v.split("."))


def targets():
    default = stablehlo.get_version_from_compatibility_requirement(
        stablehlo.StablehloCompatibilityRequirement.WEEK_12)
    out = {stablehlo.get_minimum_version(), default, stablehlo.get_current_version()}
    return sorted(out, key=version_tuple)


def serialize(module, target):
    # As xla::Serialize: targets >= 1.11.0 keep other dialects (sdy) in place.
    mixed = version_tuple(target) >= MIXED_SERIALIZATION_MIN
    return _jax.mlir.serialize_portable_artifact(module, target, mixed)


def lower(program):
    jitted = jax.jit(program.fn, **program.jit)
    if getattr(program, "x64", False):
        with jax.enable_x64(True):
            return jitted.lower(*program.args).compiler_ir("stablehlo")
    return jitted.lower(*program.args).compiler_ir("stablehlo")


def clear(out_dir):
    for category in CATEGORIES:
        shutil.rmtree(out_dir / category, ignore_errors=True)
    (out_dir / "manifest.tsv").unlink(missing_ok=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--only", default="", help="comma-separated categories")
    args = parser.parse_args()
    categories = [c for c in args.only.split(",") if c] or CATEGORIES
    out_dir = args.out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    clear(out_dir)

    start = time.monotonic()
    context = jax_mlir.make_ir_context()
    versions = targets()
    errors, manifest, files, seen = [], [], 0, set()
    for category in categories:
        module = importlib.import_module(f"programs.{category}")
        (out_dir / category).mkdir(exist_ok=True)
        for program in module.programs():
            key = (category, program.name)
            if key in seen:
                errors.append(f"{category}/{program.name}: duplicate name")
                continue
            seen.add(key)
            try:
                ir = lower(program)
            except Exception as e:  # a catalogue bug: report them all, then fail
                errors.append(f"{category}/{program.name}: lowering failed: {e}")
                continue
            # What `jax.jit(f).lower(x).as_text()` prints (CHLO ops and all), before any
            # serialization pass runs on the module.
            as_jax_prints = ir.operation.get_asm(enable_debug_info=True)
            for target in versions:
                try:
                    data = serialize(ir, target)
                except Exception as e:
                    reason = " ".join(str(e).split())[:300]
                    manifest.append((category, program.name, target, "unserializable", reason))
                    if target == versions[-1]:
                        errors.append(f"{category}/{program.name} at {target}: {reason}")
                    continue
                stem = f"{program.name}.{target.replace('.', '_')}"
                (out_dir / category / f"{stem}.mlirbc").write_bytes(data)
                reference = _jax.mlir.deserialize_portable_artifact(data, context=context)
                (out_dir / category / f"{stem}.skeleton.txt").write_text(
                    skeleton.skeleton(reference))
                (out_dir / category / f"{stem}.attrs.txt").write_text(
                    skeleton.vhlo_attributes(skeleton.parse_vhlo(data, context)))
                if target == versions[-1]:
                    # The newest artifact as MLIR text, printed by MLIR in the pretty form JAX
                    # prints (with locations) and in the generic form: StableRT's text reader
                    # must import each as its bytecode reader imports the artifact
                    # (stablert_text_check).
                    (out_dir / category / f"{program.name}.mlir").write_text(
                        reference.operation.get_asm(enable_debug_info=True))
                    (out_dir / category / f"{program.name}.generic.mlir").write_text(
                        reference.operation.get_asm(enable_debug_info=True,
                                                    print_generic_op_form=True))
                    # JAX's own text, which is another program than the artifact (CHLO not
                    # yet decomposed, constants in place): it must read and verify.
                    (out_dir / category / f"{program.name}.jax.mlir").write_text(as_jax_prints)
                manifest.append((category, program.name, target, "ok", str(len(data))))
                files += 1
    with open(out_dir / "manifest.tsv", "w") as f:
        for row in manifest:
            f.write("\t".join(row) + "\n")
    unserializable = sum(1 for row in manifest if row[3] != "ok")
    print(f"corpus: {len(seen)} programs, {files} files, {unserializable} unserializable "
          f"(program, target) pairs, targets {', '.join(versions)}, "
          f"{time.monotonic() - start:.1f} s -> {out_dir}")
    for e in errors:
        print("error:", e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
