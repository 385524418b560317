"""Random numbers: rng_bit_generator (every algorithm, every output type; bit-exact with XLA),
JAX's key implementations (threefry2x32 in plain integer ops, rbg and unsafe_rbg through
rng_bit_generator) and the distributions built on them, and stablehlo.rng (lax.rng_uniform).

stablehlo.rng's values are implementation-defined (XLA draws them from its own generator state),
so it is checked by properties (shape, dtype, range), not against XLA's numbers."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from . import not_yet
from .compare import Call, check_cases, run_on, stablert

ALGORITHMS = {
    "default": lax.RandomAlgorithm.RNG_DEFAULT,
    "three_fry": lax.RandomAlgorithm.RNG_THREE_FRY,
    "philox": lax.RandomAlgorithm.RNG_PHILOX,
}
BIT_DTYPES = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]


def _key(n, seed):
    return I.rng(seed).integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)


def rbg_cases(alg, dt):
    a = ALGORITHMS[alg]
    gen = lambda shape: (lambda k: lax.rng_bit_generator(k, shape, dtype=dt, algorithm=a))
    return {
        "vector": Call(gen((13,)), _key(4, 1)),
        "matrix": Call(gen((7, 5)), _key(4, 2)),
        "scalar": Call(gen(()), _key(4, 3)),
        "empty": Call(gen((0, 3)), _key(4, 4)),
        "large_odd": Call(gen((1001,)), _key(4, 5)),
        "zero_key": Call(gen((9,)), np.zeros(4, np.uint32)),
        "max_key": Call(gen((9,)), np.full(4, 2 ** 32 - 1, np.uint32)),
        "chained": Call(lambda k: lax.rng_bit_generator(lax.rng_bit_generator(k, (3,), dtype=dt, algorithm=a)[0],
                                                        (6,), dtype=dt, algorithm=a), _key(4, 6)),
    }


@pytest.mark.parametrize("op,dtype,alg", [not_yet.param(f"rng_bit_generator_{alg}", dt, alg)
                                          for alg in ALGORITHMS for dt in BIT_DTYPES])
def test_rng_bit_generator(op, dtype, alg):
    check_cases(None, rbg_cases(alg, np.dtype(dtype)), op=op, dtype=dtype, mode="exact")


KEY_IMPLS = ("threefry2x32", "rbg", "unsafe_rbg")


def distribution_cases(impl, dt):
    def key(seed):
        return jax.random.key_data(jax.random.key(seed, impl=impl))
    wrap = lambda k: jax.random.wrap_key_data(k, impl=impl)
    cases = {
        "bits": Call(lambda k: jax.random.bits(wrap(k), (17,), dtype=jnp.uint32), key(0)),
        "split_fold_in": Call(lambda k: jax.random.key_data(jax.random.fold_in(jax.random.split(wrap(k), 3)[1], 7)),
                              key(1)),
        "uniform": Call(lambda k: jax.random.uniform(wrap(k), (4, 5), dtype=dt), key(2)),
        "normal": Call(lambda k: jax.random.normal(wrap(k), (30,), dtype=dt), key(3)),
        "randint": Call(lambda k: jax.random.randint(wrap(k), (25,), -5, 1000), key(4)),
        "bernoulli": Call(lambda k: jax.random.bernoulli(wrap(k), 0.3, (40,)), key(5)),
        "permutation": Call(lambda k: jax.random.permutation(wrap(k), 20), key(6)),
        "gamma": Call(lambda k: jax.random.gamma(wrap(k), jnp.array([0.5, 1.0, 3.0], dt)), key(7)),
        "truncated_normal": Call(lambda k: jax.random.truncated_normal(wrap(k), -1.0, 2.0, (10,), dtype=dt), key(8)),
        "empty": Call(lambda k: jax.random.normal(wrap(k), (0, 3), dtype=dt), key(9)),
    }
    return cases


@pytest.mark.parametrize("op,dtype,impl", [not_yet.param(f"random_{impl}", dt, impl) for impl in KEY_IMPLS
                                           for dt in (np.float32, np.float64)])
def test_random_distributions(op, dtype, impl):
    check_cases(None, distribution_cases(impl, np.dtype(dtype)), op=op, dtype=dtype)


@pytest.mark.parametrize("op,dtype", [not_yet.param("rng_uniform", dt) for dt in (np.float32, np.float64, np.int32)])
def test_rng_uniform_properties(op, dtype):
    dt = np.dtype(dtype)
    lo, hi = np.array(-2, dt), np.array(5, dt)
    out = run_on(stablert(), lambda a, b: lax.rng_uniform(a, b, (1000,)), lo, hi)
    assert out.shape == (1000,) and out.dtype == dt
    assert np.all(out >= lo) and np.all(out < hi)
    assert len(np.unique(out)) > (5 if I.is_int(dt) else 900)
