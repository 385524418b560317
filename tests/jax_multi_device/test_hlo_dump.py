"""A partitioned program's dump holds its per-partition module as XLA HLO, collectives included."""
import glob
import os
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

import jaxlib._hlo as xla_hlo

from conftest import meshes


def test_partitioned_program_dumps_its_per_partition_module(device_count):
    mesh = meshes("stablert", (device_count,), ("x",))
    sharding = NamedSharding(mesh, P("x", None))
    a = jax.device_put(np.arange(8 * device_count * 6, dtype=np.float32).reshape(8 * device_count, 6), sharding)
    with tempfile.TemporaryDirectory() as directory:
        f = jax.jit(lambda x: (x * 2.0, jnp.sum(x, axis=0)),
                    compiler_options={"xla_dump_to": directory, "xla_dump_hlo_as_proto": True, "xla_dump_hlo_as_text": True})
        doubled, total = f(a)
        np.testing.assert_allclose(np.asarray(total), np.asarray(a).sum(axis=0))
        assert not glob.glob(os.path.join(directory, "*hlo_error.txt"))
        (text_path,) = glob.glob(os.path.join(directory, "*after_optimizations.txt"))
        (proto_path,) = glob.glob(os.path.join(directory, "*after_optimizations.hlo.pb"))
        text = open(text_path).read()
        proto = open(proto_path, "rb").read()
    # Each partition's parameter is its block of rows; the column sums meet in an all-reduce.
    assert "f32[8,6]" in text.splitlines()[0], text.splitlines()[0]
    assert " all-reduce(" in text
    parsed = xla_hlo.hlo_module_from_text(text)
    assert parsed.to_string() == xla_hlo.XlaComputation(proto).get_hlo_module().to_string()
