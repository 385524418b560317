"""fft: the four kinds (FFT, IFFT, RFFT, IRFFT), ranks 1 to 3, power-of-two, odd and prime
lengths, length 1, batch dimensions, zero-size batches, complex64/complex128 (float32/float64 for
RFFT). Tolerance: single precision as JAX's fft_test (1e-4); double precision 1e-12, since
transform algorithms differ in summation order."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from . import not_yet
from .compare import Call, check_cases

FFT_TOL = {np.float32: 1e-4, np.complex64: 1e-4, np.float64: 1e-12, np.complex128: 1e-12}

LENGTHS = {
    "rank1_pow2": (8,),
    "rank1_odd": (15,),
    "rank1_prime": (17,),
    "rank1_len1": (1,),
    "rank1_long": (1000,),
    "rank2": (6, 8),
    "rank2_odd": (5, 7),
    "rank3": (4, 3, 6),
}


def _complex(dt, shape, seed):
    return I.random(dt, shape, seed, scale=1.0)


def fft_cases(kind, dt):
    real = np.dtype(np.float32 if dt == np.complex64 else np.float64)
    cases = {}
    for i, (name, lengths) in enumerate(LENGTHS.items()):
        shape = (2,) + lengths  # one batch dimension
        if kind == "fft":
            cases[name] = Call(lambda x, n=lengths: lax.fft(x, lax.FftType.FFT, n), _complex(dt, shape, i))
        elif kind == "ifft":
            cases[name] = Call(lambda x, n=lengths: lax.fft(x, lax.FftType.IFFT, n), _complex(dt, shape, i))
        elif kind == "rfft":
            cases[name] = Call(lambda x, n=lengths: lax.fft(x, lax.FftType.RFFT, n), I.random(real, shape, i, scale=1.0))
        else:  # irfft: input has the last dimension n//2+1
            in_shape = shape[:-1] + (lengths[-1] // 2 + 1,)
            cases[name] = Call(lambda x, n=lengths: lax.fft(x, lax.FftType.IRFFT, n), _complex(dt, in_shape, i))
    if kind in ("fft", "ifft"):
        cases["empty_batch"] = Call(lambda x: lax.fft(x, lax.FftType.FFT if kind == "fft" else lax.FftType.IFFT, (4,)),
                                    np.zeros((0, 4), dt))
        cases["jnp_fftn_axes"] = Call(lambda x: jnp.fft.fftn(x, axes=(0, 2)) if kind == "fft" else
                                      jnp.fft.ifftn(x, axes=(0, 2)), _complex(dt, (3, 2, 5), 20))
        specials = np.array([0, 1, -1, 1j, np.inf, 0, 2, 3], dt)
        cases["with_inf"] = Call(lambda x: lax.fft(x, lax.FftType.FFT if kind == "fft" else lax.FftType.IFFT, (8,)),
                                 specials)
    if kind == "rfft":
        cases["jnp_rfft_n_pad"] = Call(lambda x: jnp.fft.rfft(x, n=12), I.random(real, (3, 7), 21))
    if kind == "irfft":
        cases["jnp_irfft_odd_n"] = Call(lambda x: jnp.fft.irfft(x, n=9), _complex(dt, (2, 5), 22))
    return cases


@pytest.mark.parametrize("op,dtype", [not_yet.param(kind, dt) for kind in ("fft", "ifft", "rfft", "irfft")
                                      for dt in I.COMPLEX])
def test_fft(op, dtype):
    # dtype names the complex type; RFFT takes the matching real type
    check_cases(None, fft_cases(op, np.dtype(dtype)), op=op, dtype=dtype, tol=FFT_TOL)
