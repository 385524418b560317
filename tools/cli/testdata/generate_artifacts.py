#!/usr/bin/env python3
"""Writes the jax.export artifacts tools/cli/cli_test.cc reads (Exported.serialize() bytes):
single.jaxexport, one device; sharded.jaxexport, 2 devices, x split by rows (P('d', None)),
w and b replicated, results split by rows. f(x, w, b) = (tanh(x @ w + b), sum(x, axis=1)),
x f32[16,32], w f32[32,8], b f32[8]. sharded_scan.jaxexport: the corpus program
sharding/jit_sharded_scan (a scan over xs f32[6,4] split by columns on a {a: 2, b: 4} mesh;
neither result annotated, so the compiler places them), 8 devices.

usage: generate_artifacts.py   (writes next to this script; run with the JAX in /work/main/.venv)
"""
import os
import pathlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402


def f(x, w, b):
    return jnp.tanh(x @ w + b), jnp.sum(x, axis=1)


def main():
    here = pathlib.Path(__file__).parent
    args = (np.zeros((16, 32), np.float32), np.zeros((32, 8), np.float32), np.zeros((8,), np.float32))
    (here / "single.jaxexport").write_bytes(jax.export.export(jax.jit(f), platforms=["cpu"])(*args).serialize())
    mesh = jax.make_mesh((2,), ("d",))
    rows, replicated = NamedSharding(mesh, P("d", None)), NamedSharding(mesh, P())
    sharded = jax.jit(f, in_shardings=(rows, replicated, replicated),
                      out_shardings=(rows, NamedSharding(mesh, P("d"))))
    (here / "sharded.jaxexport").write_bytes(jax.export.export(sharded, platforms=["cpu"])(*args).serialize())
    write_sharded_scan(here)


def write_sharded_scan(here):
    mesh = jax.sharding.AbstractMesh((2, 4), ("a", "b"))
    scan = jax.jit(lambda xs: jax.lax.scan(lambda c, x: (c + x, c), jnp.zeros(4, jnp.float32), xs),
                   in_shardings=(NamedSharding(mesh, P(None, "b")),))
    exported = jax.export.export(scan, platforms=["cpu"])(jax.ShapeDtypeStruct((6, 4), np.float32))
    (here / "sharded_scan.jaxexport").write_bytes(exported.serialize())


if __name__ == "__main__":
    main()
