"""device_put of NumPy arrays: which host arrays stablert borrows, and kernels over borrowed
arrays that are 16- but not 64-byte aligned.

A NumPy array is 16-byte aligned (malloc's alignment); whether it is also 64-byte aligned
depends on where the allocator put it. Borrowing depends on the address modulo 16 only, so
`jax.device_put((h,) * 3)` gives the three arguments one buffer in every process (a rule of 64
bytes copied it three times in about three processes out of four). Results are compared with
JAX's CPU backend in the same process.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest


def _at(values, offset):
    """A copy of `values` whose data starts `offset` bytes past a 64-byte boundary."""
    raw = np.empty(values.nbytes + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    placed = raw[start:start + values.nbytes].view(values.dtype).reshape(values.shape)
    placed[...] = values
    assert placed.ctypes.data % 64 == offset
    return placed


@pytest.mark.parametrize("offset", [0, 16, 32, 48])
def test_sixteen_byte_aligned_arrays_are_borrowed_and_shared(stablert_device, cpu_device, offset):
    n = 1 << 22
    host = _at(np.random.default_rng(0).standard_normal(n).astype(np.float32), offset)
    args = jax.device_put((host,) * 3, stablert_device)
    assert [a.unsafe_buffer_pointer() for a in args] == [host.ctypes.data] * 3
    f = lambda a, b, c: jnp.tanh(a * b + c)  # noqa: E731
    got = np.asarray(jax.jit(f)(*args))
    want = np.asarray(jax.jit(f)(*jax.device_put((host,) * 3, cpu_device)))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_arrays_aligned_to_less_than_sixteen_bytes_are_copied(stablert_device):
    host = _at(np.arange(1 << 16, dtype=np.float64), 8)
    x = jax.device_put(host, stablert_device)
    assert x.unsafe_buffer_pointer() != host.ctypes.data
    assert x.unsafe_buffer_pointer() % 64 == 0
    np.testing.assert_array_equal(np.asarray(x), host)


def _programs(jnp, lax):
    return {
        "elementwise chain": (lambda a, b: jnp.exp(a) * b - jnp.sin(b), [(1 << 20,), (1 << 20,)]),
        "reduce rows": (lambda a: jnp.sum(a, axis=1), [(1024, 1000)]),
        "reduce all (max)": (lambda a: jnp.max(a), [(1 << 20,)]),
        "softmax": (lambda a: jax.nn.softmax(a, axis=-1), [(512, 1000)]),
        "matmul": (lambda a, b: a @ b, [(256, 300), (300, 200)]),
        "transpose": (lambda a: a.T + 1, [(1000, 700)]),
        "sort": (lambda a: jnp.sort(a), [(1 << 16,)]),
        "cumsum": (lambda a: jnp.cumsum(a, axis=0), [(4096, 33)]),
        "gather": (lambda a: a[jnp.arange(0, 4096, 3)], [(4096, 64)]),
        "conv": (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME"), [(2, 8, 32, 32), (16, 8, 3, 3)]),
    }


@pytest.mark.parametrize("name", sorted(_programs(jnp, jax.lax)))
def test_kernels_read_borrowed_arrays_at_sixteen_mod_64(stablert_device, cpu_device, name):
    fn, shapes = _programs(jnp, jax.lax)[name]
    rng = np.random.default_rng(1)
    hosts = [_at(rng.standard_normal(s).astype(np.float32), 16) for s in shapes]
    args = [jax.device_put(h, stablert_device) for h in hosts]
    assert all(a.unsafe_buffer_pointer() == h.ctypes.data for a, h in zip(args, hosts))
    got = np.asarray(jax.jit(fn)(*args))
    want = np.asarray(jax.jit(fn)(*[jax.device_put(h, cpu_device) for h in hosts]))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
