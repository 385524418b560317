"""DLPack export of stablert arrays: zero-copy CPU tensors that keep the buffer alive.

A stablert array lives in host memory; `np.from_dlpack`, `jax.dlpack.from_dlpack` (onto
JAX's CPU backend) and any DLPack consumer see its bytes without a copy, and the buffer's
external reference keeps those bytes valid after the array is deleted or donated.
"""
import gc

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.typing import DLDeviceType


def _pointer(array):
    return array.ctypes.data if isinstance(array, np.ndarray) else array.unsafe_buffer_pointer()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_, np.complex64])
def test_numpy_from_dlpack_is_zero_copy(stablert_device, dtype):
    host = (np.arange(4 * 1024 * 1024) % 7).astype(dtype).reshape(1024, 4096)
    x = jax.device_put(host, stablert_device)
    view = np.from_dlpack(x)
    assert _pointer(view) == _pointer(x)
    assert view.dtype == host.dtype and view.shape == host.shape
    np.testing.assert_array_equal(view, host)
    assert x.__dlpack_device__() == (DLDeviceType.kDLCPU, 0)


def test_computed_arrays_export_and_bfloat16_is_refused_clearly(stablert_device):
    x = jax.jit(lambda a: a * 2)(jax.device_put(jnp.arange(1000, dtype=jnp.float32), stablert_device))
    view = np.from_dlpack(x)
    assert _pointer(view) == _pointer(x)
    np.testing.assert_array_equal(view, np.arange(1000, dtype=np.float32) * 2)
    # NumPy makes the capsule and has no DLPack code for ml_dtypes' bfloat16 (docs/decisions.md).
    with pytest.raises(BufferError, match="dtypes"):
        np.from_dlpack(x.astype(jnp.bfloat16))


def test_jax_cpu_array_from_a_stablert_array_shares_the_bytes(stablert_device, cpu_device):
    # An array stablert computed (its own 64-byte aligned storage): XLA's CPU client copies
    # imports that are less aligned, as a NumPy array borrowed by device_put may be.
    x = jax.jit(lambda a: a * 2)(jax.device_put(np.linspace(0, 1, 1 << 20, dtype=np.float32), stablert_device))
    assert _pointer(x) % 64 == 0
    y = jax.dlpack.from_dlpack(x)
    assert y.devices() == {cpu_device}
    assert _pointer(y) == _pointer(x)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_copy_true_copies_and_copy_none_does_not(stablert_device):
    x = jax.device_put(np.arange(1 << 16, dtype=np.int32), stablert_device)
    assert _pointer(np.from_dlpack(x, copy=True)) != _pointer(x)
    assert _pointer(np.from_dlpack(x, copy=None)) == _pointer(x)


def test_the_view_outlives_deletion_and_donation(stablert_device):
    host = np.arange(1 << 20, dtype=np.float32)
    x = jax.device_put(host, stablert_device)
    view = np.from_dlpack(x)
    x.delete()
    gc.collect()
    np.testing.assert_array_equal(view, host)

    x = jax.device_put(host, stablert_device)
    view = np.from_dlpack(x)
    out = jax.jit(lambda a: a * 3 + 1, donate_argnums=0)(x)
    assert x.is_deleted()
    # The donated buffer is held by the view: the result got bytes of its own.
    assert _pointer(out) != _pointer(view)
    np.testing.assert_array_equal(view, host)
    np.testing.assert_array_equal(np.asarray(out), host * 3 + 1)


def test_bad_requests_raise_buffer_error(stablert_device):
    x = jax.device_put(np.ones(16, np.float32), stablert_device)
    with pytest.raises(BufferError, match="kDLCPU"):
        x.__dlpack__(dl_device=(DLDeviceType.kDLCUDA, 0))
    with pytest.raises(BufferError, match="stream"):
        x.__dlpack__(stream=5)


def test_cpu_arrays_keep_jax_own_export(cpu_device):
    x = jax.device_put(np.arange(8, dtype=np.float32), cpu_device)
    view = np.from_dlpack(x)
    assert _pointer(view) == _pointer(x)
