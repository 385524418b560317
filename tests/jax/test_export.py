"""`jax.export` interchange: modules exported for `cpu` run on stablert.

StableRT runs JAX's `cpu` lowerings (LAPACK custom calls included), so an artifact exported
for `cpu` - serialized, stored, read back - is called on stablert as its `cpu` variant and
gives XLA:CPU's results. Modules exported for both platforms keep their own branches.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export


def _roundtrip(exported):
    return export.deserialize(exported.serialize())


def _program(a, b):
    w = jnp.tanh(a @ b) + jnp.sin(a)
    eigenvalues = jnp.linalg.eigh(w + w.T)[0]
    return eigenvalues, jnp.linalg.solve(w + 4 * jnp.sqrt(w.shape[0]) * jnp.eye(w.shape[0]), a[:, :1])


@pytest.mark.parametrize("n", [8, 256])
def test_a_serialized_cpu_export_runs_on_stablert(stablert_device, cpu_device, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    spec = jax.ShapeDtypeStruct((n, n), jnp.float32)
    exported = _roundtrip(export.export(jax.jit(_program), platforms=["cpu"])(spec, spec))
    assert exported.platforms == ("cpu",)
    on_stablert = exported.call(jax.device_put(a, stablert_device), jax.device_put(b, stablert_device))
    on_cpu = exported.call(jax.device_put(a, cpu_device), jax.device_put(b, cpu_device))
    for got, want in zip(on_stablert, on_cpu):
        assert got.devices() == {stablert_device}
        scale = float(np.abs(np.asarray(want)).max())
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5 * scale)


def test_a_cpu_export_inside_a_jitted_function(stablert_device, cpu_device):
    exported = _roundtrip(export.export(jax.jit(lambda x: jnp.exp(x) * 2), platforms=["cpu"])(
        jax.ShapeDtypeStruct((1 << 20,), jnp.float32)))
    x = np.linspace(-3, 3, 1 << 20, dtype=np.float32)
    outer = jax.jit(lambda v: exported.call(v + 1) - 1)
    got = outer(jax.device_put(x, stablert_device))
    want = outer(jax.device_put(x, cpu_device))
    # The "- 1" cancels near exp(x + 1) * 2 = 1: an absolute part scaled to the values.
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6,
                               atol=1e-6 * float(np.abs(np.asarray(want)).max()))


def test_an_export_for_other_platforms_only_is_still_refused(stablert_device):
    exported = export.export(jax.jit(jnp.sin), platforms=["tpu"])(jax.ShapeDtypeStruct((4,), jnp.float32))
    with pytest.raises(ValueError, match="exported for platforms"):
        exported.call(jax.device_put(np.ones(4, np.float32), stablert_device))
