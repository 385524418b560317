"""fft at realistic sizes against XLA:CPU (DUCC) in the same process: 1M-point lines (power of
two, 10^6, the prime 1000003), 2-D 1024x1024, 3-D, batched lines, all four kinds, single and
double precision. These run the long-line (four-step), threaded and Bluestein paths of
kernels/fft_plan.cc that the small cases in test_fft.py do not reach.

The error of an FFT grows with the size and is spread over all outputs, so the comparison is
normwise, as FFT accuracy is stated: max |stablert - xla| <= tol * max |xla|, with tol a small
multiple of the precision's epsilon times log2(n) (two implementations each within a few
epsilon * log2(n) of the exact transform)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from .compare import cpu, run_on, stablert

M = 1 << 20


def _input(shape, dtype, seed):
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * r.standard_normal(shape)
    return x.astype(dtype)


CASES = [
    # id, function, input shape, input dtype
    ("fft_1m_c64", lambda x: lax.fft(x, lax.FftType.FFT, (M,)), (M,), np.complex64),
    ("ifft_1m_c64", lambda x: lax.fft(x, lax.FftType.IFFT, (M,)), (M,), np.complex64),
    ("rfft_1m_f32", jnp.fft.rfft, (M,), np.float32),
    ("irfft_1m_c64", lambda x: jnp.fft.irfft(x, n=M), (M // 2 + 1,), np.complex64),
    ("fft_1m_c128", jnp.fft.fft, (M,), np.complex128),
    ("rfft_1m_f64", jnp.fft.rfft, (M,), np.float64),
    ("irfft_1m_c128", lambda x: jnp.fft.irfft(x, n=M), (M // 2 + 1,), np.complex128),
    ("fft_1e6_c64", jnp.fft.fft, (1000000,), np.complex64),
    ("fft_prime_1000003_c64", jnp.fft.fft, (1000003,), np.complex64),
    ("ifft_prime_1000003_c128", jnp.fft.ifft, (1000003,), np.complex128),
    ("rfft_odd_999999_f32", jnp.fft.rfft, (999999,), np.float32),
    ("fft2_1024x1024_c64", jnp.fft.fft2, (1024, 1024), np.complex64),
    ("ifft2_1024x1024_c128", jnp.fft.ifft2, (1024, 1024), np.complex128),
    ("rfft2_1024x1024_f32", jnp.fft.rfft2, (1024, 1024), np.float32),
    ("irfft2_1024x1024_c64", lambda x: jnp.fft.irfft2(x, s=(1024, 1024)), (1024, 513), np.complex64),
    ("fftn_64x128x128_c64", jnp.fft.fftn, (64, 128, 128), np.complex64),
    ("rfftn_3d_odd_f64", jnp.fft.rfftn, (30, 49, 63), np.float64),
    ("irfftn_3d_c64", lambda x: jnp.fft.irfftn(x, s=(32, 64, 96)), (4, 32, 64, 49), np.complex64),
    ("fft_batch_1024x1024_c64", jnp.fft.fft, (1024, 1024), np.complex64),
    ("ifft_batch_64x1000_c64", jnp.fft.ifft, (64, 1000), np.complex64),
    ("fft_batch_prime_16x1021_c64", jnp.fft.fft, (16, 1021), np.complex64),
    ("fft_batch_prime_5x40009_c128", jnp.fft.fft, (5, 40009), np.complex128),
    ("fft_axis0_8192x3_c64", lambda x: jnp.fft.fft(x, axis=0), (8192, 3), np.complex64),
    ("fft_axis0_65536x20_c64", lambda x: jnp.fft.fft(x, axis=0), (65536, 20), np.complex64),
    ("rfft_batch_16x4096_f32", jnp.fft.rfft, (16, 4096), np.float32),
]


@pytest.mark.parametrize("fn,shape,dtype", [pytest.param(f, s, d, id=i) for i, f, s, d in CASES])
def test_fft_large(fn, shape, dtype):
    jax.config.update("jax_enable_x64", True)
    x = _input(shape, dtype, seed=hash(shape) % 1000)
    got = np.asarray(run_on(stablert(), fn, x))
    want = np.asarray(run_on(cpu(), fn, x))
    assert got.shape == want.shape and got.dtype == want.dtype
    single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
    n = max(x.size, 2)
    tol = (1 if single else 4) * np.finfo(got.real.dtype).eps * np.log2(n)
    err = np.max(np.abs(got - want)) / np.max(np.abs(want))
    assert err <= tol, f"normwise error {err:.3g} > {tol:.3g}"


def _fft_convolution(x, k):
    n = x.shape[0] + k.shape[0]
    return jnp.fft.irfft(jnp.fft.rfft(x, n) * jnp.fft.rfft(k, n), n)


def test_fft_convolution_1m_multiplies_the_spectra_in_place():
    # rfft, rfft, spectrum product, irfft of 1M + 1K points, against XLA:CPU. The product
    # writes over the first spectrum (it dies there), so the plan holds three 4 MB
    # temporaries at most (a padded line and two spectra), not four.
    jax.config.update("jax_enable_x64", True)
    x = _input((M,), np.float32, seed=3)
    k = _input((1024,), np.float32, seed=4)
    got = np.asarray(run_on(stablert(), _fft_convolution, x, k))
    want = np.asarray(run_on(cpu(), _fft_convolution, x, k))
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 2 * np.finfo(np.float32).eps * np.log2(M + 1024)
    err = np.max(np.abs(got - want)) / np.max(np.abs(want))
    assert err <= tol, f"normwise error {err:.3g} > {tol:.3g}"
    args = [jax.device_put(a, stablert()) for a in (x, k)]
    temp = jax.jit(_fft_convolution).lower(*args).compile().memory_analysis().temp_size_in_bytes
    spectrum_bytes = 8 * ((M + 1024) // 2 + 1)
    assert temp <= 3 * spectrum_bytes + 4096, temp
