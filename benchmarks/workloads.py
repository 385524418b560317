"""The workloads of the end-to-end benchmark (benchmarks/jax_benchmark.py).

Each workload is a realistic JAX program a CPU user runs: training steps, inference, loops,
data movement, library-bound products. `workloads(jax, jnp, lax)` returns them as
(name, function, arguments, work) tuples, where `work` is (amount, unit) for a throughput
column, or None. Arguments are NumPy arrays (or pytrees of them) built from a fixed seed, so
both backends and every run see the same data.
"""
from __future__ import annotations

import numpy as np


def _transformer(jax, jnp, normal, batch, seq, d, heads, ffn):
    """A pre-norm transformer block: parameters, forward, and an Adam training step."""
    def layer_norm(x, g, b):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b

    def forward(p, x):
        h = layer_norm(x, p["ln1_g"], p["ln1_b"])
        q, k, v = jnp.split(h @ p["wqkv"], 3, axis=-1)
        split = lambda t: t.reshape(t.shape[0], t.shape[1], heads, d // heads)  # noqa: E731
        s = jnp.einsum("bqhd,bkhd->bhqk", split(q), split(k)) / np.sqrt(d // heads)
        mask = jnp.tril(jnp.ones((x.shape[1], x.shape[1]), bool))
        s = jnp.where(mask, s, -1e9)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), split(v)).reshape(x.shape)
        x = x + a @ p["wo"]
        h = layer_norm(x, p["ln2_g"], p["ln2_b"])
        return x + jax.nn.gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

    params = {
        "ln1_g": np.ones(d, np.float32), "ln1_b": np.zeros(d, np.float32),
        "wqkv": normal(d, 3 * d) / np.sqrt(d), "wo": normal(d, d) / np.sqrt(d),
        "ln2_g": np.ones(d, np.float32), "ln2_b": np.zeros(d, np.float32),
        "w1": normal(d, ffn) / np.sqrt(d), "b1": np.zeros(ffn, np.float32),
        "w2": normal(ffn, d) / np.sqrt(ffn), "b2": np.zeros(d, np.float32),
    }

    def adam_step(state, x, y):
        p, m, v, t = state
        loss, g = jax.value_and_grad(lambda p: jnp.mean((forward(p, x) - y) ** 2))(p)
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        scale = 1e-3 * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        p = jax.tree_util.tree_map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + 1e-8), p, m, v)
        return (p, m, v, t), loss

    zeros = jax.tree_util.tree_map(np.zeros_like, params)
    state = (params, zeros, zeros, np.float32(0))
    return forward, params, adam_step, state, normal(batch, seq, d), normal(batch, seq, d)


def _cnn_gradient(jax, jnp, lax, normal):
    def loss(p, x, labels):
        dn = ("NHWC", "HWIO", "NHWC")
        h = jax.nn.relu(lax.conv_general_dilated(x, p[0], (1, 1), "SAME", dimension_numbers=dn))
        h = jax.nn.relu(lax.conv_general_dilated(h, p[1], (2, 2), "SAME", dimension_numbers=dn))
        h = jax.nn.relu(lax.conv_general_dilated(h, p[2], (2, 2), "SAME", dimension_numbers=dn))
        logits = jnp.mean(h, axis=(1, 2)) @ p[3]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))

    params = [normal(3, 3, 3, 32) * 0.2, normal(3, 3, 32, 64) * 0.06, normal(3, 3, 64, 64) * 0.04,
              normal(64, 10) * 0.1]
    labels = np.eye(10, dtype=np.float32)[np.arange(32) % 10]
    return jax.grad(loss), (params, normal(32, 32, 32, 3), labels)


def _lstm_gradient(jax, jnp, lax, normal, steps=200, batch=16, inputs=64, hidden=128):
    def loss(p, xs):
        def cell(carry, x):
            h, c = carry
            gates = x @ p["wx"] + h @ p["wh"] + p["b"]
            i, f, g, o = jnp.split(gates, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        zeros = jnp.zeros((xs.shape[1], hidden), xs.dtype)
        _, hs = lax.scan(cell, (zeros, zeros), xs)
        return jnp.mean(hs ** 2)

    params = {"wx": normal(inputs, 4 * hidden) * 0.1, "wh": normal(hidden, 4 * hidden) * 0.1,
              "b": np.zeros(4 * hidden, np.float32)}
    return jax.grad(loss), (params, normal(steps, batch, inputs))


def _logistic_regression_loop(jax, jnp, lax, normal):
    def train(w, x, y):
        def step(_, w):
            g = x.T @ (jax.nn.sigmoid(x @ w) - y) / x.shape[0]
            return w - 0.1 * g
        return lax.fori_loop(0, 100, step, w)

    x = normal(1024, 64)
    y = (x @ normal(64) > 0).astype(np.float32)
    return train, (np.zeros(64, np.float32), x, y)


def _euler(jax, jnp, lax):
    def integrate(y):
        return lax.fori_loop(0, 2000, lambda _, y: y + 0.001 * (-0.5 * y + jnp.sin(y * 1.1) * 0.3 - y * y * 0.01 + 1.0),
                             y)
    return integrate


def _scan_stacked(jax, jnp, lax, normal, steps=800):
    w = normal(128, 128) * 0.01

    def run(c, xs):
        return lax.scan(lambda c, x: (jnp.tanh(c @ w + x),) * 2, c, xs)
    return run, (normal(16, 128), normal(steps, 16, 128))


def workloads(jax, jnp, lax):
    rng = np.random.default_rng(0)
    f32 = np.float32

    def normal(*shape):
        return rng.standard_normal(shape).astype(f32)

    def mlp_step(params, x, y):
        def loss(p):
            h = x
            for w, b in p[:-1]:
                h = jax.nn.relu(h @ w + b)
            w, b = p[-1]
            return jnp.mean(((h @ w + b) - y) ** 2)
        grads = jax.grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)

    mlp_params = [(normal(512, 1024) * 0.05, normal(1024) * 0.05), (normal(1024, 1024) * 0.03, normal(1024) * 0.03),
                  (normal(1024, 10) * 0.03, normal(10) * 0.03)]

    def attention(q, k, v):
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)

    def loop(x):
        return lax.fori_loop(0, 1000, lambda i, x: x * 0.999 + 1.0, x)

    def norm_chain(x, g, b):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.var(x, axis=-1, keepdims=True)
        h = jax.nn.gelu((x - mean) * lax.rsqrt(var + 1e-5) * g + b)
        return jax.nn.softmax(h, axis=-1)

    def fft_convolution(x, k):
        n = x.shape[0] + k.shape[0]
        return jnp.fft.irfft(jnp.fft.rfft(x, n) * jnp.fft.rfft(k, n), n)

    def embedding_segment_sum(table, ids, segments):
        return jax.ops.segment_sum(table[ids], segments, num_segments=4096)

    forward, tparams, adam_step, adam_state, tx, ty = _transformer(jax, jnp, normal, 8, 128, 256, 4, 1024)
    _, _, _, _, tx1, _ = _transformer(jax, jnp, normal, 1, 128, 256, 4, 1024)
    cnn_grad, cnn_args = _cnn_gradient(jax, jnp, lax, normal)
    lstm_grad, lstm_args = _lstm_gradient(jax, jnp, lax, normal)
    logistic, logistic_args = _logistic_regression_loop(jax, jnp, lax, normal)
    scan_run, scan_args = _scan_stacked(jax, jnp, lax, normal)
    key = np.array([0, 42], np.uint32)

    return [
        ("add scalar (dispatch latency)", lambda x: x + 1, (f32(1),), None),
        ("elementwise a*b+c, tanh, 4M f32", lambda a, b, c: jnp.tanh(a * b + c),
         tuple(normal(1 << 22) for _ in range(3)),
         (4 * 4 * (1 << 22), "GB/s")),
        ("broadcast chain (bcast(x, 4096^2)*2+1).sum()", lambda x: (jnp.broadcast_to(x, (4096, 4096)) * 2 + 1).sum(),
         (normal(4096),), None),
        ("layernorm+gelu+softmax 2048x1024 f32", norm_chain, (normal(2048, 1024), normal(1024), normal(1024)),
         (2 * 4 * 2048 * 1024, "GB/s")),
        ("reduce sum rows 4096x1024 f32", lambda x: jnp.sum(x, axis=1), (normal(4096, 1024),), (4 * 4096 * 1024, "GB/s")),
        ("softmax 1024x1024 f32", lambda x: jax.nn.softmax(x, axis=-1), (normal(1024, 1024),), None),
        ("matmul 256 f32", lambda a, b: a @ b, (normal(256, 256), normal(256, 256)), (2 * 256 ** 3, "GFLOP/s")),
        ("matmul 1024 f32", lambda a, b: a @ b, (normal(1024, 1024), normal(1024, 1024)), (2 * 1024 ** 3, "GFLOP/s")),
        ("matmul 2048 f32", lambda a, b: a @ b, (normal(2048, 2048), normal(2048, 2048)), (2 * 2048 ** 3, "GFLOP/s")),
        ("matmul 1024 bf16", lambda a, b: a @ b,
         (normal(1024, 1024).astype(jnp.bfloat16), normal(1024, 1024).astype(jnp.bfloat16)), (2 * 1024 ** 3, "GFLOP/s")),
        ("matrix-vector 1x4096x4096 f32", lambda a, b: a @ b, (normal(1, 4096), normal(4096, 4096)),
         (4 * 4096 * 4096, "GB/s")),
        ("batched matmul 64x128x128 f32", lambda a, b: a @ b, (normal(64, 128, 128), normal(64, 128, 128)),
         (2 * 64 * 128 ** 3, "GFLOP/s")),
        ("batched matmul 512x32x32 f32", lambda a, b: a @ b, (normal(512, 32, 32), normal(512, 32, 32)),
         (2 * 512 * 32 ** 3, "GFLOP/s")),
        ("vmapped small matmuls 4096x(8x8 @ 8x8) f32", jax.vmap(jnp.dot), (normal(4096, 8, 8), normal(4096, 8, 8)),
         None),
        ("conv2d NHWC 8x64x64x32 * 3x3x32x64", lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
         (normal(8, 64, 64, 32), normal(3, 3, 32, 64)), (2 * 8 * 64 * 64 * 64 * 3 * 3 * 32, "GFLOP/s")),
        ("CNN training gradient 32x32x32x3, 3 convs", cnn_grad, cnn_args, None),
        ("attention b4 s256 h8 d64 f32", attention, (normal(4, 256, 8, 64),) * 3, None),
        ("transformer block inference, batch 1, seq 128, d 256", forward, (tparams, tx1), None),
        ("transformer block training step with Adam, batch 8, seq 128, d 256", adam_step, (adam_state, tx, ty), None),
        ("MLP training step 512-1024-1024-10, batch 256", mlp_step, (mlp_params, normal(256, 512), normal(256, 10)), None),
        ("LSTM gradient, 200 steps, batch 16, 64->128", lstm_grad, lstm_args, None),
        ("scan of 800 steps stacking a 16x128 carry", scan_run, scan_args, None),
        ("logistic regression, 100 steps in fori_loop", logistic, logistic_args, None),
        ("fori_loop 1000 steps on 128 f32", loop, (normal(128),), None),
        ("fori_loop 2000 Euler steps on a scalar", _euler(jax, jnp, lax), (f32(1),), None),
        ("random.normal 1M + sort", lambda k: jnp.sort(jax.random.normal(k, (1 << 20,))), (key,), None),
        ("sort 1M f32", jnp.sort, (normal(1 << 20),), None),
        ("embedding take 64K of 50Kx128 + segment_sum", embedding_segment_sum,
         (normal(50_000, 128), rng.integers(0, 50_000, 1 << 16), np.sort(rng.integers(0, 4096, 1 << 16))), None),
        ("gather take 1M of 1M f32", lambda x, i: x[i], (normal(1 << 20), rng.integers(0, 1 << 20, 1 << 20)), None),
        ("scatter-add 1M into 64K f32", lambda x, i, u: x.at[i].add(u),
         (normal(1 << 16), rng.integers(0, 1 << 16, 1 << 20), normal(1 << 20)), None),
        ("FFT convolution 1M f32", fft_convolution, (normal(1 << 20), normal(1 << 10)), None),
        ("cumsum 4M f32", jnp.cumsum, (normal(1 << 22),), None),
    ]
