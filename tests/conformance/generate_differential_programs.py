#!/usr/bin/env python3
"""Writes the programs of the conformance suite's differential tier (`stablert conform A
--diff-with B`): JAX programs exported with jax.export for CPU (StableHLO bytecode at JAX's
compatibility target, which PJRT 0.81 plugins read), at moderate sizes. The suite generates
their inputs from the signature (fixed seed) and compares two plugins' outputs.

usage: generate_differential_programs.py [OUT_DIR]   (default: programs/ next to this script)
Run with the JAX in /work/main/.venv.
"""
import os
import pathlib
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402


def matmul_softmax(a, b):
    return jax.nn.softmax(a @ b, axis=-1)


def reductions(x):
    return jnp.sum(x, axis=0), jnp.max(x, axis=1), jnp.mean(x), jnp.prod(1.0 + 0.01 * x, axis=1)


def while_loop(x):
    def body(carry):
        i, v = carry
        return i + 1, 0.5 * v + jnp.sin(v)
    return lax.while_loop(lambda c: c[0] < 12, body, (0, x))[1]


def sort(x):
    return jnp.sort(x, axis=-1), jnp.argsort(x, axis=0, stable=True)


def scatter(x, updates):
    idx = jnp.array([0, 3, 3, 7, 1, 63, 0, 5], dtype=jnp.int32)  # duplicates accumulate
    return x.at[idx].add(updates), x.at[idx].max(updates * 2.0)


def half_precision(a, b, c):
    # f16 matmul + softmax; bf16 elementwise and a reduction.
    y = jax.nn.softmax(a @ b, axis=-1)
    z = jnp.tanh(c) * c + jnp.exp(-c * c)
    return y, z, jnp.sum(z, axis=-1)


PROGRAMS = {
    "matmul_softmax": (matmul_softmax, (np.zeros((64, 128), np.float32), np.zeros((128, 96), np.float32))),
    "reductions": (reductions, (np.zeros((64, 256), np.float32),)),
    "while_loop": (while_loop, (np.zeros((32, 32), np.float32),)),
    "sort": (sort, (np.zeros((16, 500), np.float32),)),
    "scatter": (scatter, (np.zeros((64, 16), np.float32), np.zeros((8, 16), np.float32))),
    "half_precision": (half_precision, (np.zeros((32, 64), np.float16), np.zeros((64, 48), np.float16),
                                        np.zeros((16, 128), jnp.bfloat16))),
}


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "programs"
    out.mkdir(parents=True, exist_ok=True)
    for name, (fn, args) in PROGRAMS.items():
        exported = jax.export.export(jax.jit(fn), platforms=["cpu"])(*args)
        (out / f"{name}.mlirbc").write_bytes(exported.mlir_module_serialized)
        print(name, len(exported.mlir_module_serialized), "bytes")


if __name__ == "__main__":
    main()
