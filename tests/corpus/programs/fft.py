"""FFT: jnp.fft in every kind, rank and precision."""
import jax.numpy as jnp

from corpus_lib import P, S

c64, c128 = jnp.complex64, jnp.complex128


def programs():
    return [
        P("fft", lambda x: jnp.fft.fft(x), S((16,), c64)),
        P("ifft", lambda x: jnp.fft.ifft(x, n=12), S((10,), c64)),
        P("rfft", lambda x: jnp.fft.rfft(x), S((4, 16))),
        P("irfft", lambda x: jnp.fft.irfft(x, n=16), S((4, 9), c64)),
        P("fft2", lambda x: jnp.fft.fft2(x), S((2, 8, 8), c64)),
        P("ifft2_ortho", lambda x: jnp.fft.ifft2(x, norm="ortho"), S((8, 8), c64)),
        P("fftn_3d", lambda x: jnp.fft.fftn(x), S((4, 4, 4), c64)),
        P("rfftn", lambda x: jnp.fft.rfftn(x, axes=(0, 2)), S((6, 3, 8))),
        P("irfftn", lambda x: jnp.fft.irfftn(x, s=(8, 8)), S((8, 5), c64)),
        P("hfft_ihfft", lambda x, y: (jnp.fft.hfft(x), jnp.fft.ihfft(y)), S((5,), c64), S((8,))),
        P("fft_axis0_forward", lambda x: jnp.fft.fft(x, axis=0, norm="forward"), S((8, 3), c64)),
        P("fftshift_freq", lambda x: (jnp.fft.fftshift(x), jnp.fft.fftfreq(8),
                                      jnp.fft.rfftfreq(8)), S((8,))),
        P("fft_c128", lambda x: jnp.fft.fft(x), S((8,), c128), x64=True),
        P("rfft_f64", lambda x: jnp.fft.rfft(x), S((8,), jnp.float64), x64=True),
        P("fft_real_input", lambda x: jnp.fft.fft(x), S((6,))),
        P("fft_odd_size", lambda x: jnp.fft.fft(x), S((7,), c64)),
    ]
