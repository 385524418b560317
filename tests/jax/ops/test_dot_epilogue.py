"""Matrix products with their epilogue: a bias (broadcast along the rows), a relu, a scaling
by a scalar, a residual add -- which StableRT computes in the product's own step
(plan/fold_dot_epilogue.cc: oneDNN post-ops, or the kernel's own pass on the libxsmm and
matrix-vector paths) -- at realistic sizes: bit for bit against StableRT's own product with
the ops applied after it as XLA applies them, and against XLA:CPU in the same process; then
the relu's gradient (whose mask reads the relu's output) and special values exactly, on
integer-valued data."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from . import inputs as I
from .accuracy import check_accuracy, ld
from .compare import check_cases, cpu, run_on, stablert


def _normal(shape, seed, scale=1.0):
    return (I.rng(seed).standard_normal(shape) * scale).astype(np.float32)


# name: (product, epilogue, args): the case computes epilogue(jnp, product(a, b), *rest) for
# args (a, b, *rest); epilogue(np, ...) applies the same ops one by one in f32.
CASES = {
    "mlp_layer_256x1024x1024": (
        lambda x, w: x @ w, lambda xp, p, b: xp.maximum(p + b, 0),
        (_normal((256, 1024), 1), _normal((1024, 1024), 2, 0.03), _normal((1024,), 3))),
    "bias_1024": (
        lambda x, w: x @ w, lambda xp, p, b: p + b,
        (_normal((1024, 1024), 4), _normal((1024, 1024), 5), _normal((1024,), 6))),
    "scaled_scores_batched": (
        lambda q, k: jnp.einsum("bqd,bkd->bqk", q, k), lambda xp, p: p / np.float32(8.0),
        (_normal((8, 128, 64), 7), _normal((8, 128, 64), 8))),
    "residual_of_scaled_bias": (
        lambda a, w: a @ w, lambda xp, p, b, r: r + np.float32(2) * (p + b),
        (_normal((512, 384), 10), _normal((384, 768), 11), _normal((768,), 12), _normal((512, 768), 9))),
    "matvec_bias_relu_4096": (
        lambda x, w: x @ w, lambda xp, p, b: xp.maximum(p + b, 0),
        (_normal((1, 4096), 13), _normal((4096, 4096), 14), _normal((4096,), 15))),
    "transposed_weight_bias_relu": (
        lambda x, w: x @ w.T, lambda xp, p, b: xp.maximum(p + b, 0),
        (_normal((300, 640), 16), _normal((520, 640), 17), _normal((520,), 18))),
    "sgd_update_512x1024": (
        lambda x, g: x.T @ g, lambda xp, d, p: p - np.float32(1e-3) * d,
        (_normal((256, 512), 22), _normal((256, 1024), 23), _normal((512, 1024), 24))),
    "small_cell_bias_relu": (
        lambda x, w: x @ w, lambda xp, p, b: xp.maximum(p + b, 0),
        (_normal((16, 64), 19), _normal((64, 128), 20), _normal((128,), 21))),
}


# sum |terms| per output for the bound against XLA: the epilogue applied to |product terms|
# and |operands|, with every subtraction an addition.
MAGNITUDE = {"sgd_update_512x1024": lambda d, p: p + np.float32(1e-3) * d}


@pytest.mark.parametrize("name", list(CASES))
def test_dot_epilogue(name):
    """StableRT's product step with its epilogue equals its own product followed by the ops
    one by one in f32, as StableHLO defines them, bit for bit (XLA may contract a multiply
    and an add into one fused multiply-add, so it is not the reference for the last bit);
    and it is as close to XLA's result as any f32 product of K terms can be (Higham's bound
    K u sum |a b|, plus the epilogue's roundings)."""
    product, epilogue, args = CASES[name]
    fused = lambda *a: epilogue(jnp, product(a[0], a[1]), *a[2:])  # noqa: E731
    got = np.asarray(run_on(stablert(), fused, *args))
    own_product = np.asarray(run_on(stablert(), product, *args[:2]))
    with np.errstate(all="ignore"):
        then_ops = epilogue(np, own_product, *args[2:])
    assert then_ops.dtype == np.float32
    np.testing.assert_array_equal(got, then_ops, err_msg=f"{name}: fused epilogue against product then ops")
    xla = np.asarray(run_on(cpu(), fused, *args), np.float64)
    k = args[0].shape[-1] if name != "sgd_update_512x1024" else args[0].shape[0]
    a64 = [np.abs(np.asarray(a, np.float64)) for a in args]
    magnitude_of = MAGNITUDE.get(name, lambda *a: epilogue(np, *a))
    magnitude = np.abs(np.asarray(magnitude_of(product(a64[0], a64[1]), *a64[2:])))
    bound = (k + 4) * np.finfo(np.float32).eps / 2 * magnitude + 1e-30
    excess = np.abs(got.astype(np.float64) - xla) / bound
    i = np.unravel_index(int(np.argmax(excess)), excess.shape)
    assert excess[i] <= 1, f"{name}: stablert {got[i]} xla {xla[i]} at {i} (bound {bound[i]:.3g})"


def _ints(shape, seed, lo=-3, hi=4):
    return I.rng(seed).integers(lo, hi, shape).astype(np.float32)


def test_relu_layer_gradient_exact():
    """jax.grad through relu(x @ w + b): the pre-activation is an integer plus 0.5 (never 0),
    so every value is exact in f32 and both backends must agree bit for bit."""
    x, w, g = _ints((256, 512), 31), _ints((512, 1024), 32), _ints((256, 1024), 33)
    b = (_ints((1024,), 34) + 0.5).astype(np.float32)

    def layer_grads(x, w, b, g):
        loss = lambda x, w, b: jnp.sum(jax.nn.relu(x @ w + b) * g)  # noqa: E731
        return jax.grad(loss, argnums=(0, 1, 2))(x, w, b)

    check_cases(layer_grads, {"relu_layer": (x, w, b, g)}, op="dot_epilogue", dtype=np.float32, mode="exact")


def test_epilogue_special_values():
    """NaN and infinity in a row of the product reach the epilogue as XLA's ops see them."""
    x = _ints((64, 256), 41)
    x[3, 7], x[5, 0], x[9, 1] = np.nan, np.inf, -np.inf
    w, b = _ints((256, 256), 42), (_ints((256,), 43) + 0.5).astype(np.float32)
    check_cases(lambda x, w, b: jax.nn.relu(x @ w + b) / np.float32(4.0), {"special": (x, w, b)},
                op="dot_epilogue", dtype=np.float32)


MATVEC = {
    "x @ w": (lambda x, w: x @ w, (1, 4096)),
    "x @ w.T": (lambda x, w: x @ w.T, (1, 4096)),
    "w @ x": (lambda x, w: w @ x, (4096,)),
    "w.T @ x": (lambda x, w: w.T @ x, (4096,)),
    "x @ w, 3 columns": (lambda x, w: x @ w[:, :3], (1, 4096)),
}


@pytest.mark.parametrize("name", list(MATVEC))
def test_matrix_vector_forms(name):
    """The four forms JAX writes for a 4096x4096 matrix times a vector (kernels/dot_matvec.h
    streams the matrix in each; the transposes are read in place): within JAX's tolerance of
    XLA or as accurate, against a long double reference."""
    fn, x_shape = MATVEC[name]
    x, w = _normal(x_shape, 51), _normal((4096, 4096), 52)
    check_accuracy(fn, (x, w), lambda x, w: fn(ld(x), ld(w)), magnitude=lambda x, w: fn(np.abs(ld(x)), np.abs(ld(w))),
                   op="dot_matrix_vector", dtype=np.float32)
