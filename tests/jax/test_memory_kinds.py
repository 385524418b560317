"""Memory kinds in programs on stablert: placement annotations and layout constraints.

Every StableRT memory kind (device, pinned_host, unpinned_host) is host memory, so the
placement custom calls JAX emits (`annotate_device_placement` for compute_on and
memory-kind transfers inside jit) and layout constraints to the row-major layout are
identities on values; results land in the memory kind the program names.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import SingleDeviceSharding


def _sharding(device, kind):
    return SingleDeviceSharding(device, memory_kind=kind)


@pytest.mark.parametrize("kind", ["pinned_host", "unpinned_host", "device"])
def test_transfers_between_memory_kinds_inside_jit(stablert_device, cpu_device, kind):
    x = np.linspace(-1, 1, 1 << 20, dtype=np.float32)

    def run(device):
        g = jax.jit(lambda a: jnp.sin(jax.device_put(a * 2, _sharding(device, kind))) + 1,
                    out_shardings=_sharding(device, kind))
        return g(jax.device_put(x, device))

    got, want = run(stablert_device), run(cpu_device)
    assert got.sharding.memory_kind == kind
    # sin(v) + 1 cancels near v = -pi/2: an absolute part of one ulp of 1.
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1.2e-7)


def test_compute_on_device_host(stablert_device, cpu_device):
    from jax.experimental.compute_on import compute_on

    @compute_on("device_host")
    @jax.jit
    def on_host(a):
        return a * 3 - 1

    def run(device):
        f = jax.jit(lambda a: on_host(jnp.cos(a)).sum(axis=0))
        return f(jax.device_put(np.arange(4096 * 256, dtype=np.float32).reshape(4096, 256) / 1e5, device))

    np.testing.assert_allclose(np.asarray(run(stablert_device)), np.asarray(run(cpu_device)), rtol=1e-5)


def test_layout_constraints_are_identities_on_the_value(stablert_device):
    from jax.experimental.layout import Format, Layout

    x = jax.device_put(np.arange(64 * 128, dtype=np.int32).reshape(64, 128), stablert_device)
    for m2m in ((0, 1), (1, 0)):
        constrained = jax.jit(lambda a: jax.lax.with_sharding_constraint(
            a + 1, Format(Layout(major_to_minor=m2m), _sharding(stablert_device, "device"))))
        out = constrained(x)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(x) + 1)
        assert out.format.layout.major_to_minor == m2m
