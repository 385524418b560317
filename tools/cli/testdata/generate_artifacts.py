#!/usr/bin/env python3
"""Writes the jax.export artifacts tools/cli/cli_test.cc reads (Exported.serialize() bytes):
single.jaxexport, one device; sharded.jaxexport, 2 devices, x split by rows (P('d', None)),
w and b replicated, results split by rows. f(x, w, b) = (tanh(x @ w + b), sum(x, axis=1)),
x f32[16,32], w f32[32,8], b f32[8].

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


if __name__ == "__main__":
    main()
