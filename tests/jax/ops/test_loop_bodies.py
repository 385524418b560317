"""What recurrent loop bodies compute, against XLA:CPU: products whose transposed result the
product computes itself with its operands swapped (plan/fold_dot_transpose.cc; JAX's weight
gradients), unit-dim broadcasts and transposes lowered to aliases, the small and skinny
products libxsmm runs (kernels/xsmm_matmul.h), and the two loop workloads of
benchmarks/workloads.py at their benchmark sizes: a scan of 800 steps stacking a 16x128
carry, and the gradient of an LSTM over 200 steps (batch 16, 64 -> 128). Products take
integer-valued floats (every sum exact in f32), so any difference is a real one."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import inputs as I
from .compare import Call, check_cases

F32 = np.dtype(np.float32)


def test_transposed_products():
    def weight_gradient(g, x):  # (g^T . x)^T, as JAX's transpose rule writes it
        return jnp.dot(g.T, x).T

    def nt_transposed(a, b):  # (a . b^T)^T: both operand layouts flip
        return jnp.dot(a, b.T).T

    def batched(a, b):  # [B,M,N] -> [B,N,M]
        return jnp.swapaxes(jnp.einsum("bmk,bkn->bmn", a, b), 1, 2)

    def also_read(g, x):  # the product is read untransposed too: the transpose stays
        p = jnp.dot(g.T, x)
        return p.T, p * 2

    def accumulated(g, x, acc):  # a backward scan's weight-gradient accumulation
        def body(i, acc):
            gi = lax.dynamic_slice_in_dim(g, i, 1)[0]
            xi = lax.dynamic_slice_in_dim(x, i, 1)[0]
            return acc + jnp.dot(gi.T, xi).T
        return lax.fori_loop(0, g.shape[0], body, acc)

    cases = {
        # libxsmm (16 x 128 x 512 after the swap) and oneDNN (1024 x 256 x 512) sizes.
        "weight_grad_16x512_16x128": Call(weight_gradient, I.small_ints(F32, (16, 512), 1), I.small_ints(F32, (16, 128), 2)),
        "weight_grad_256x1024_256x512": Call(weight_gradient, I.small_ints(F32, (256, 1024), 3),
                                             I.small_ints(F32, (256, 512), 4)),
        "nt_transposed_300x64_500x64": Call(nt_transposed, I.small_ints(F32, (300, 64), 5), I.small_ints(F32, (500, 64), 6)),
        "batched_8x64x32x48": Call(batched, I.small_ints(F32, (8, 64, 32), 7), I.small_ints(F32, (8, 32, 48), 8)),
        "also_read_16x64_16x32": Call(also_read, I.small_ints(F32, (16, 64), 9), I.small_ints(F32, (16, 32), 10)),
        "accumulated_50_steps": Call(accumulated, I.small_ints(F32, (50, 16, 512), 11), I.small_ints(F32, (50, 16, 128), 12),
                                     I.small_ints(F32, (128, 512), 13)),
    }
    check_cases(None, cases, op="dot_transposed", dtype=F32)


def test_accumulating_products():
    def forward_gates(x, wx, h, wh, b):  # an LSTM cell's pre-activations: two products, a bias
        return x @ wx + h @ wh + b

    cases = {
        "acc_plus_product_16x128x512": Call(lambda acc, a, b: acc + a @ b, I.small_ints(F32, (16, 512), 1),
                                            I.small_ints(F32, (16, 128), 2), I.small_ints(F32, (128, 512), 3)),
        "product_plus_acc_300x200x400": Call(lambda acc, a, b: a @ b + acc, I.small_ints(F32, (300, 400), 4),
                                             I.small_ints(F32, (300, 200), 5), I.small_ints(F32, (200, 400), 6)),
        "addend_read_later": Call(lambda acc, a, b: (acc + a @ b, acc * 2), I.small_ints(F32, (64, 64), 7),
                                  I.small_ints(F32, (64, 32), 8), I.small_ints(F32, (32, 64), 9)),
        "matvec_plus_acc": Call(lambda acc, v, m: v @ m + acc, I.small_ints(F32, (2048,), 10),
                                I.small_ints(F32, (2048,), 11), I.small_ints(F32, (2048, 2048), 12)),
        "tiny_plus_acc": Call(lambda acc, a, b: acc + a @ b, I.small_ints(F32, (3, 5), 13),
                              I.small_ints(F32, (3, 4), 14), I.small_ints(F32, (4, 5), 15)),
        "forward_gates": Call(forward_gates, I.small_ints(F32, (16, 64), 16), I.small_ints(F32, (64, 512), 17),
                              I.small_ints(F32, (16, 128), 18), I.small_ints(F32, (128, 512), 19),
                              I.small_ints(F32, (512,), 20)),
    }
    check_cases(None, cases, op="dot_accumulate", dtype=F32)


def test_unit_dim_broadcasts_and_transposes():
    cases = {
        "expand_dims_1M": Call(lambda x: x[None] * 2.0, I.random(F32, (1024, 1024), 1)),
        "stack_one": Call(lambda x: jnp.stack([x]) + 1.0, I.random(F32, (512, 300), 2)),
        "move_unit_dim": Call(lambda x: jnp.transpose(x[:, None, :], (1, 0, 2)) - x[None],
                              I.random(F32, (700, 900), 3)),
        "unit_dims_around": Call(lambda x: jnp.transpose(x.reshape(1, 1000, 1, 1000), (2, 0, 1, 3)) * x[None, None],
                                 I.random(F32, (1000, 1000), 4)),
    }
    check_cases(None, cases, op="unit_dim_views", dtype=F32)


def test_skinny_products():
    shapes = [(16, 128, 128), (16, 64, 512), (16, 128, 512), (128, 16, 512), (96, 96, 96), (32, 256, 128),
              (64, 65, 64), (200, 500, 8), (16, 600, 16)]
    cases = {f"{m}x{k}x{n}": Call(jnp.dot, I.small_ints(F32, (m, k), i), I.small_ints(F32, (k, n), i + 50))
             for i, (m, k, n) in enumerate(shapes)}
    cases["lhs_transposed_128x16x512"] = Call(lambda a, b: a.T @ b, I.small_ints(F32, (16, 128), 90),
                                              I.small_ints(F32, (16, 512), 91))
    check_cases(None, cases, op="dot_skinny", dtype=F32)


def test_benchmark_scan_800():
    w = I.random(F32, (128, 128), 1) * 0.01
    run = lambda c, xs: lax.scan(lambda c, x: (jnp.tanh(c @ w + x),) * 2, c, xs)
    check_cases(None, {"scan_800_16x128": Call(run, I.random(F32, (16, 128), 2), I.random(F32, (800, 16, 128), 3))},
                op="scan_loop_body", dtype=F32)


def test_benchmark_lstm_gradient():
    steps, batch, inputs, hidden = 200, 16, 64, 128

    def loss(wx, wh, b, xs):
        def cell(carry, x):
            h, c = carry
            gates = x @ wx + h @ wh + b
            i, f, g, o = jnp.split(gates, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        zeros = jnp.zeros((xs.shape[1], hidden), xs.dtype)
        _, hs = lax.scan(cell, (zeros, zeros), xs)
        return jnp.mean(hs ** 2)

    grad = jax.grad(loss, argnums=(0, 1, 2))
    args = (I.random(F32, (inputs, 4 * hidden), 1) * 0.1, I.random(F32, (hidden, 4 * hidden), 2) * 0.1,
            I.random(F32, (4 * hidden,), 3) * 0.1, I.random(F32, (steps, batch, inputs), 4))
    check_cases(None, {"lstm_grad_200_16_64_128": Call(grad, *args)}, op="lstm_loop_body", dtype=F32)


def test_small_fused_bodies():
    """Loop bodies whose steps are one fused tile each, run as bound calls (kernels::BoundCall)
    in a tight loop: the benchmark's 1000-step loop on 128 floats, bodies reading the counter
    and a carried scalar broadcast into the tile (refilled every iteration), bodies with a
    select and a convert, and a body too long to bind whole."""
    def decay(x):
        return lax.fori_loop(0, 1000, lambda i, x: x * 0.999 + 1.0, x)

    def counter_scaled(x):  # the counter broadcast over the tile changes every iteration
        return lax.fori_loop(0, 300, lambda i, x: x * 0.99 + i.astype(jnp.float32) * 1e-3, x)

    def carried_scalar(x, s):  # a carried scalar broadcast into the tile
        def body(i, c):  # s's update is exact, with or without a fused multiply-add (XLA's)
            x, s = c
            return jnp.tanh(x * s + 0.1), s * 0.5 + 0.375
        return lax.fori_loop(0, 200, body, (x, s))

    def clipped(x):
        def body(i, x):
            y = x * 1.01 - 0.3
            return jnp.where(y > 1.0, y - 2.0, y).astype(jnp.float64).astype(jnp.float32)
        return lax.fori_loop(0, 500, body, x)

    def long_body(x, y):
        def body(i, c):
            x, y = c
            for k in range(12):
                x = jnp.sin(x * 0.9 + y * 0.01 * k)
                y = y * 0.99 + x[::-1] * 0.01
            return x, y
        return lax.fori_loop(0, 20, body, (x, y))

    cases = {
        "decay_128": Call(decay, I.random(F32, (128,), 21)),
        "counter_scaled_300": Call(counter_scaled, I.random(F32, (200,), 22)),
        "carried_scalar_200": Call(carried_scalar, I.random(F32, (64,), 23), np.float32(0.7)),
        "clipped_500": Call(clipped, I.random(F32, (256,), 24)),
        "long_body_20": Call(long_body, I.random(F32, (96,), 25), I.random(F32, (96,), 26)),
    }
    check_cases(None, cases, op="small_fused_loop", dtype=F32)
