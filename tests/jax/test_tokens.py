"""Tokens at the executable's boundary, against JAX's CPU backend.

A `!stablehlo.token` result is a buffer of type token (rank 0, no bytes) on StableRT as on
XLA's CPU backend, so JAX sees the same `core.Token` arrays: they flow into other programs and
cannot be read as NumPy arrays.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import core


def _run(device):
    with jax.default_device(device):
        token = jax.lax.create_token()
        with pytest.raises(RuntimeError, match="Cannot convert a token-shape buffer to a numpy array"):
            token._buf._value

        @jax.jit
        def step(arr, tok):
            return jnp.cumsum(arr) * 2, tok

        x = jnp.arange(10.0)
        out, out_token = step(x, token)
        out2, out_token2 = step(out, out_token)
        assert isinstance(out_token, core.Token) and isinstance(out_token2, core.Token)
        assert out_token is not token
        return (token._buf.dtype, token._buf.shape, out_token2._buf.dtype, out_token2._buf.shape,
                np.asarray(out2))


def test_token_buffers_match_cpu(stablert_device, cpu_device):
    got = _run(stablert_device)
    want = _run(cpu_device)
    assert got[:4] == want[:4]
    np.testing.assert_allclose(got[4], want[4], rtol=1e-12)
    np.testing.assert_allclose(got[4], np.cumsum(np.cumsum(np.arange(10.0)) * 2) * 2, rtol=1e-12)


def test_ordered_effects_still_run_in_order(stablert_device):
    # Ordered effects thread bool[0] runtime tokens through the entry; they still work.
    seen = []

    @jax.jit
    def f(x):
        jax.debug.callback(lambda v: seen.append(int(v)), x, ordered=True)
        return x + 1

    with jax.default_device(stablert_device):
        y = 0
        for _ in range(4):
            y = f(y)
        jax.effects_barrier()
    assert seen == [0, 1, 2, 3]
    assert int(y) == 4
