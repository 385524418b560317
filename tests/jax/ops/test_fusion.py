"""Fused elementwise chains (plan/fuse_elementwise.cc, kernels/fused.cc): chains of
elementwise ops, broadcasts and converts run tile by tile as one step, reductions of the
chain folded in. Realistic sizes (millions of elements, odd shapes so tiles and thread
shares end mid-row), several element types, values used inside and outside a chain, chains
inside loops; compared with XLA:CPU in the same process."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from .compare import Call, check_cases
from .xla_f16 import rounded_each_op, xla_rounds_f16_mul_add_once

ROWS, COLS = 2047, 1031  # 2.1M elements


@pytest.mark.parametrize("dtype", [np.float32, np.float64, ml_dtypes.bfloat16, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_long_float_chains(dtype):
    dt = np.dtype(dtype)
    x = I.random(dt, (ROWS, COLS), 1)
    y = I.random(dt, (ROWS, COLS), 2)
    row = I.random(dt, (COLS,), 3)

    def rounded_chain(round_, a, b, r):  # round_ after every op: identity, or to f16
        t = round_(round_(a * b) + r[None, :])
        t = round_(round_(round_(jnp.tanh(t)) * 0.5) - jnp.abs(b))
        t = jnp.where(t > 0, round_(t * a), round_(jnp.exp(jnp.minimum(t, 3))))
        return round_(jnp.clip(t, -2, 2) + a)

    def chain(a, b, r):
        return rounded_chain(lambda v: v, a, b, r).astype(dt)

    if dt == np.float16 and xla_rounds_f16_mul_add_once():
        # XLA rounds f16 multiply-adds once on this CPU (xla_f16.py); the branch on t > 0 turns
        # a one-ulp difference near 0 into a difference of 1. The reference is then XLA
        # computing the chain in f32 with every op rounded to f16, as StableHLO defines it.
        got = np.asarray(jax.jit(chain)(*(jax.device_put(v, jax.devices("stablert")[0]) for v in (x, y, row))))
        ref = np.asarray(jax.jit(rounded_each_op(rounded_chain))(*(jax.device_put(v, jax.devices("cpu")[0])
                                                                  for v in (x, y, row))))
        np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=1e-3, atol=1e-3)
        return
    check_cases(chain, {"chain": (x, y, row)}, op="fused chain", dtype=dt)


def test_large_chain_three_distinct_inputs():
    # The benchmark row "elementwise a*b+c, tanh, 4M f32" (1 KiB tile slots in steps this
    # large), an odd count so the last tile and the thread shares end mid-tile, and a value
    # that is both an output and read by later sub-ops.
    f32 = np.dtype(np.float32)
    n = (1 << 22) + 37
    a, b, c = (I.random(f32, (n,), seed, scale=2.0) for seed in (21, 22, 23))
    check_cases(lambda a, b, c: jnp.tanh(a * b + c), {"tanh_fma": (a, b, c)}, op="fused chain", dtype=f32)

    def two_outputs(a, b, c):
        t = a * b + c
        return t, jnp.exp(jnp.tanh(t)) * c  # products only: no cancellation amplifies ulps

    check_cases(two_outputs, {"two_outputs": (a, b, c)}, op="fused chain", dtype=f32)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint8, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_long_integer_chains(dtype):
    dt = np.dtype(dtype)
    x = I.random(dt, (ROWS, COLS), 4)
    y = I.random(dt, (ROWS, COLS), 5)

    def chain(a, b):
        t = (a ^ b) + (a & dt.type(7)) * b
        t = jnp.where(t > b, t - b, t | dt.type(3))
        t = jnp.maximum(t, a) - jnp.minimum(a, b)
        return (t >> dt.type(1)) + (t << dt.type(2))

    check_cases(chain, {"chain": (x, y)}, op="fused chain", dtype=dt, mode="exact")


def test_gelu_layernorm_softmax():
    x = I.random(np.dtype(np.float32), (2048, 1024), 6, scale=3.0)
    g = I.random(np.dtype(np.float32), (1024,), 7)
    b = I.random(np.dtype(np.float32), (1024,), 8)

    def layernorm(v):
        m = v.mean(-1, keepdims=True)
        c = v - m
        return c / jnp.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * g + b

    check_cases(lambda v: jax.nn.gelu(v), {"gelu": (x,)}, op="fused gelu")
    check_cases(lambda v: jax.nn.gelu(v, approximate=False), {"gelu_erf": (x,)}, op="fused gelu")
    # The row means round differently from XLA's in the last bit (as unfused), which x - mean
    # amplifies where it cancels: a few elements differ by ~1e-6 absolute.
    check_cases(layernorm, {"layernorm": (x,)}, op="fused layernorm", tol=1e-5)
    check_cases(lambda v: jax.nn.softmax(v, axis=-1), {"softmax": (x,)}, op="fused softmax")
    check_cases(lambda v: jax.nn.softmax(jax.nn.gelu(layernorm(v)), axis=-1), {"ln_gelu_softmax": (x,)},
                op="fused layernorm gelu softmax", tol=1e-5)


def test_threefry_bits_exact_and_normal():
    key = jax.random.PRNGKey(42)
    check_cases(lambda k: jax.random.bits(k, (1 << 20,), jnp.uint32), {"bits": (key,)}, op="fused threefry",
                mode="exact")
    check_cases(lambda k: jax.random.uniform(k, (1 << 20,)), {"uniform": (key,)}, op="fused threefry", mode="exact")
    # erf_inv near +-1 differs from XLA's in the last bits (unfused too): tails to ~6e-6.
    check_cases(lambda k: jax.random.normal(k, (1 << 20,), jnp.float32), {"normal": (key,)}, op="fused threefry",
                tol=1e-5)


def test_threefry_chains_keys_shapes_and_loops():
    # The threefry rounds run as one add-rotate-xor chain (kernels/fused_arx.h) with the keys
    # read at run time: extreme and random keys, 2-D odd shapes (tiles and thread shares end
    # mid-row), many small hashes (split), and hashes inside a loop body.
    keys = [np.array(k, np.uint32) for k in ([0, 0], [0xFFFFFFFF, 0xFFFFFFFF], [0x12345678, 0x9ABCDEF0])]
    wrap = jax.random.wrap_key_data
    cases = {f"bits_2d_key{i}": Call(lambda k: jax.random.bits(wrap(k), (1031, 517), jnp.uint32), k)
             for i, k in enumerate(keys)}
    cases["bits_u64"] = Call(lambda k: jax.random.bits(wrap(k), (3, 70001), jnp.uint64), keys[2])
    cases["uniform_f64"] = Call(lambda k: jax.random.uniform(wrap(k), (100003,), jnp.float64), keys[1])
    cases["split"] = Call(lambda k: jax.random.key_data(jax.random.split(wrap(k), 100003)), keys[2])
    cases["loop_fold_in"] = Call(
        lambda k: lax.fori_loop(0, 5, lambda i, a: a ^ jax.random.bits(jax.random.fold_in(wrap(k), i), (4099,),
                                                                        jnp.uint32), jnp.zeros(4099, jnp.uint32)),
        keys[1])
    check_cases(lambda *a: None, cases, op="fused threefry", mode="exact")


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64], ids=lambda d: np.dtype(d).name)
def test_iota_folded_into_chains(dtype):
    # Integer iotas read only by a chain are generated in the fused step's tiles: along each
    # dimension of an odd 3-D shape, with a folded reduction, and in a loop body.
    dt = np.dtype(dtype)
    x = I.random(dt, (37, 1031, 5), 11)
    shape = x.shape

    def along(d):
        return lambda a: (lax.broadcasted_iota(dt, shape, d) * dt.type(3) + a) ^ dt.type(5)

    cases = {f"dim{d}": Call(along(d), x) for d in range(3)}
    cases["sum"] = Call(lambda a: jnp.sum((lax.broadcasted_iota(dt, shape, 1) + a) & dt.type(255), axis=(1, 2)), x)
    cases["loop"] = Call(lambda a: lax.fori_loop(
        0, 3, lambda i, c: c + (lax.broadcasted_iota(dt, shape, 2) ^ a) * i.astype(dt), jnp.zeros_like(a)), x)
    check_cases(lambda *a: None, cases, op="fused iota", dtype=dt, mode="exact")


@pytest.mark.parametrize("n", [4096, 8192])
def test_broadcast_chain_reductions(n):
    x = I.random(np.dtype(np.float32), (n,), 9)
    cases = {
        "sum": Call(lambda v: (jnp.broadcast_to(v, (n, n)) * 2 + 1).sum(), x),
        "max": Call(lambda v: (jnp.broadcast_to(v, (n, n)) * 2 + 1).max(), x),
        "row_sums": Call(lambda v: (jnp.broadcast_to(v, (n, n)) * v[:, None] + 1).sum(axis=1), x),
        "mean_sq": Call(lambda v: jnp.mean(jnp.square(jnp.broadcast_to(v, (n, n)) - 0.5)), x),
    }
    check_cases(lambda *a: None, cases, op="fused reduction")


def test_long_sum_accuracy_16m():
    # 16M-element sums: pairwise within tiles and across them, as the unfused reduction.
    x = I.random(np.dtype(np.float32), (4096, 4096), 10)
    check_cases(lambda v: jnp.sum(v * 0.1 + 1.0), {"sum": (x,)}, op="fused reduction")
    check_cases(lambda v: jnp.sum(jnp.exp(v) * v, axis=1), {"rows": (x,)}, op="fused reduction")
    check_cases(lambda v: jnp.sum(jnp.full((1 << 24,), 0.1, jnp.float32) * v.reshape(-1)), {"tenth": (x,)},
                op="fused reduction")


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64], ids=lambda d: np.dtype(d).name)
def test_integer_reductions(dtype):
    dt = np.dtype(dtype)
    x = I.random(dt, (ROWS, COLS), 11)
    cases = {
        "sum": Call(lambda v: jnp.sum(v * dt.type(3) + dt.type(1), dtype=dt), x),
        "max_rows": Call(lambda v: jnp.max(v ^ dt.type(5), axis=1), x),
        "min": Call(lambda v: jnp.min((v >> dt.type(1)) + dt.type(2)), x),
    }
    check_cases(lambda *a: None, cases, op="fused reduction", dtype=dt, mode="exact")


def test_mixed_converts():
    x = I.random(np.dtype(np.float32), (ROWS, COLS), 12)
    i = I.random(np.dtype(np.int32), (ROWS, COLS), 13)
    cases = {
        "f32->bf16->f32": Call(lambda a: a.astype(ml_dtypes.bfloat16).astype(jnp.float32) * a + 1, x),
        "i32->f32->f16": Call(lambda a, b: (b.astype(jnp.float32) * a).astype(jnp.float16), x, i),
        "f32->i32->u8": Call(lambda a: (a * 10).astype(jnp.int32).astype(jnp.uint8) + 1, x),
        "pred->f32": Call(lambda a: (a > 0).astype(jnp.float32) * a - 1, x),
        "f64 sum of f32": Call(lambda a: jnp.sum(a.astype(jnp.float64) * 2), x),
    }
    check_cases(lambda *a: None, cases, op="fused converts")


def test_values_used_inside_and_outside():
    x = I.random(np.dtype(np.float32), (ROWS, COLS), 14)

    def f(a):
        t = jnp.exp(a * 0.5)  # read inside the chain and returned
        u = t * a + 1
        s = jnp.sum(u)  # u read by the sum and by the sort below: not folded
        return t, u * 2, s, jnp.sort(u[:7, :5], axis=1)

    def g(a):
        t = jnp.tanh(a)
        return jnp.sum(t, axis=1), t[::3, ::2] * 2  # t read by a slice outside the chain

    check_cases(f, {"outputs": (x,)}, op="fused outputs")
    # Row sums of 1031 elements round differently from XLA's (as unfused): ~1e-6 relative.
    check_cases(g, {"reduce and slice": (x,)}, op="fused outputs", tol=1e-5)


def test_fusion_inside_loops():
    x = I.random(np.dtype(np.float32), (1024, 1031), 15)
    row = I.random(np.dtype(np.float32), (1031,), 16)

    def f(a, r):
        def body(i, carry):
            c, total = carry
            c = jnp.tanh(c * 0.9 + r[None, :] * 0.1) + 0.01 * i.astype(jnp.float32)
            return c, total + jnp.sum(c * c, axis=1)
        return lax.fori_loop(0, 5, body, (a, jnp.zeros((a.shape[0],), jnp.float32)))

    check_cases(f, {"fori_loop": (x, row)}, op="fused loop bodies")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_reductions_and_chains_of_broadcasts(dtype):
    # passes/shrink_broadcasts.h: chains on broadcasts run on the broadcast operand; reductions
    # over broadcast dimensions run on it (integer sums wrap as XLA's do, bools any/all).
    dt = np.dtype(dtype)
    n, m = 3001, 2048  # 6.1M elements per broadcast
    col = I.random(dt, (n,), 12)
    row = I.random(dt, (m,), 13)
    if dt == np.bool_:
        cases = {
            "any_rows": Call(lambda c: jnp.any(jnp.broadcast_to(c[:, None], (n, m)) & True, axis=1), col),
            "all": Call(lambda r: jnp.all(~jnp.broadcast_to(r, (n, m))), row),
        }
        check_cases(lambda *a: None, cases, op="reduce of broadcast", dtype=dt, mode="exact")
        return
    one = dt.type(1)
    cases = {
        "sum_all": Call(lambda r: jnp.sum(jnp.broadcast_to(r, (n, m)) * one + one, dtype=dt), row),
        "sum_created_axis": Call(lambda r: jnp.sum(jnp.broadcast_to(r, (n, m)), axis=0, dtype=dt), row),
        "sum_operand_axis": Call(lambda c: jnp.sum(jnp.broadcast_to(c[:, None], (n, m)), axis=0, dtype=dt), col),
        "max_rows": Call(lambda c: jnp.max(jnp.broadcast_to(c[:, None], (n, m)) - one, axis=1), col),
        "min_3d": Call(lambda r: jnp.min(jnp.broadcast_to(r, (7, n, m)), axis=(0, 1)), row),
        "where": Call(lambda c: jnp.where(jnp.broadcast_to(c[:, None], (n, m)) > one,
                                          jnp.broadcast_to(c[:, None], (n, m)), one).sum(axis=1, dtype=dt), col),
    }
    mode = "exact" if not np.issubdtype(dt, np.floating) else None
    check_cases(lambda *a: None, cases, op="reduce of broadcast", dtype=dt, **({"mode": mode} if mode else {}))


def test_sums_of_broadcast_special_values():
    # -0, NaN, Inf and overflow through a sum of copies computed as a product.
    special = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 3e38, -3e38, 1e-45, 1.5], np.float32)
    cases = {
        "rows": Call(lambda v: jnp.sum(jnp.broadcast_to(v, (5000, v.shape[0])), axis=0), special),
        "inf_minus_inf": Call(lambda v: jnp.sum(jnp.broadcast_to(v[3:5], (5000, 2))), special),
        "zeros": Call(lambda v: jnp.sum(jnp.broadcast_to(v[:1], (5000, 1)), axis=0), special),
    }
    check_cases(lambda *a: None, cases, op="reduce of broadcast")


def test_broadcast_chain_compiles_to_work_on_the_operand(stablert_device):
    # The 8192x8192 chain runs on the 8192-element operand: a few thousand flops and KB, not
    # 8192^2-element passes.
    f = jax.jit(lambda v: (jnp.broadcast_to(v, (8192, 8192)) * 2 + 1).sum())
    x = jax.device_put(np.ones(8192, np.float32), stablert_device)
    compiled = f.lower(x).compile()
    cost = compiled.cost_analysis()
    assert cost["flops"] < 1e5 and cost["bytes accessed"] < 1e6, cost
    assert compiled.memory_analysis().temp_size_in_bytes < 1 << 20
    assert float(f(x)) == 8192.0 * 8192.0 * 3.0


def _layernorm(v, g, b):
    m = v.mean(-1, keepdims=True)
    c = v - m
    return c / jnp.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * g + b


def _jax_layernorm(v, g, b):
    mean = jnp.mean(v, axis=-1, keepdims=True)
    var = jnp.var(v, axis=-1, keepdims=True)
    return (v - mean) * lax.rsqrt(var + 1e-5) * g + b


@pytest.mark.parametrize("length", [1, 7, 1000, 4096, 100000])
def test_row_normalizations_by_row_length(length):
    """Row reductions broadcast back into the next chain (fused_rows steps): softmax,
    log_softmax, two layer norms and layer norm + gelu + softmax over rows of several
    lengths, about 2M elements each (odd row counts, so blocks end short)."""
    rows = max(3, (1 << 21) // length) | 1
    f32 = np.dtype(np.float32)
    x = I.random(f32, (rows, length), 20 + length % 97, scale=3.0)
    g = I.random(f32, (length,), 21)
    b = I.random(f32, (length,), 22)
    check_cases(lambda v: jax.nn.softmax(v, axis=-1), {"softmax": (x,)}, op="fused softmax")
    check_cases(lambda v: jax.nn.log_softmax(v, axis=-1), {"log_softmax": (x,)}, op="fused softmax")
    # x - mean cancels where the row mean rounds differently from XLA's (as unfused).
    check_cases(_layernorm, {"layernorm": (x, g, b)}, op="fused layernorm", tol=1e-5)
    check_cases(_jax_layernorm, {"layernorm_var": (x, g, b)}, op="fused layernorm", tol=1e-5)
    check_cases(lambda v, gg, bb: jax.nn.softmax(jax.nn.gelu(_jax_layernorm(v, gg, bb)), axis=-1),
                {"ln_gelu_softmax": (x, g, b)}, op="fused layernorm gelu softmax", tol=1e-5)


def test_row_softmax_special_values():
    """NaN and inf rows, fully and partly masked (-inf) rows, huge values: as XLA."""
    f32 = np.dtype(np.float32)
    rows, length = 1025, 1031
    x = I.random(f32, (rows, length), 23, scale=3.0)
    x[3, 17] = np.nan
    x[5, :] = np.nan
    x[7, 100] = np.inf
    x[9, :] = -np.inf
    x[11, :] = np.inf
    x[13, ::2] = -np.inf
    x[15, :] = 3e38
    mask = I.random(np.dtype(np.bool_), (rows, length), 24)
    mask[17, :] = False

    def masked(v, m):
        return jax.nn.softmax(jnp.where(m, v, -jnp.inf), axis=-1)

    check_cases(lambda v: jax.nn.softmax(v, axis=-1), {"softmax": (x,)}, op="fused softmax")
    check_cases(masked, {"masked": (x, mask)}, op="fused softmax")
    check_cases(lambda v: _jax_layernorm(v, 1.0, 0.0), {"layernorm": (x,)}, op="fused layernorm", tol=1e-5)


def test_row_softmax_shapes_and_types():
    """Softmax over the last axis of 4-D attention scores, over two trailing axes, a
    reduction result used twice (outputs of the rows step), and bf16/f16 rows."""
    f32 = np.dtype(np.float32)
    s = I.random(f32, (4, 8, 127, 129), 25, scale=3.0)
    check_cases(lambda v: jax.nn.softmax(v, axis=-1), {"scores": (s,)}, op="fused softmax")
    check_cases(lambda v: jax.nn.softmax(v, axis=(-2, -1)), {"two_axes": (s,)}, op="fused softmax")

    def stats(v):
        m = v.max(-1, keepdims=True)
        e = jnp.exp(v - m)
        z = e.sum(-1, keepdims=True)
        return e / z, m, z, e

    check_cases(stats, {"stats": (s.reshape(-1, 129),)}, op="fused softmax")
    for dt in (np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)):
        x = I.random(dt, (2049, 1001), 26, scale=2.0)
        check_cases(lambda v: jax.nn.softmax(v, axis=-1), {"softmax": (x,)}, op="fused softmax", dtype=dt)


def test_residual_add_then_layernorm():
    """A residual add before the layer norm joins the rows step (its sum is never stored)."""
    f32 = np.dtype(np.float32)
    x = I.random(f32, (2049, 1000), 27)
    a = I.random(f32, (2049, 1000), 28)
    g = I.random(f32, (1000,), 29)
    b = I.random(f32, (1000,), 30)
    check_cases(lambda v, w, gg, bb: _jax_layernorm(v + w * 0.5, gg, bb), {"residual_ln": (x, a, g, b)},
                op="fused layernorm", tol=1e-5)


def test_boolean_row_reductions_in_row_blocks():
    """A row's any/all (reduce_or/reduce_and of i1) feeding a chain over the same rows: the
    row-blocked fusion keeps the boolean reduction out of its fused sub-steps (the fused
    kernel folds no i1 reduction), as scipy's solve_sylvester produces."""
    x = I.random(np.dtype(np.float32), (64, 300), 41)
    cases = {
        "any_rows": Call(lambda x: jnp.where(jnp.any(x > 2.0, axis=-1, keepdims=True), x, -x) * 2.0, x),
        "all_rows": Call(lambda x: jnp.where(jnp.all(x > -3.0, axis=-1, keepdims=True), x * 3.0, x) - 1.0, x),
    }
    check_cases(None, cases, op="boolean_row_reductions", dtype=np.dtype(np.float32))


def test_norm_chain_plans_into_one_row_step(stablert_device, tmp_path):
    """The benchmark's layer norm + GELU + softmax (benchmarks/workloads.py) plans into one
    fused_rows step of 8 sub-steps (mean, 1/n, centred sum of squares, 1/stddev, the GELU chain
    with its row max, the max's init, exp with its sum, the divide), whose row values reach the
    chains as [1, 0] broadcasts (read per row by the fused kernel, not materialized): x read
    once, the result written once. A count, not a time: a split or an extra step here means
    extra passes over memory."""
    def norm_chain(v, g, b):
        mean = jnp.mean(v, axis=-1, keepdims=True)
        var = jnp.var(v, axis=-1, keepdims=True)
        h = jax.nn.gelu((v - mean) * lax.rsqrt(var + 1e-5) * g + b)
        return jax.nn.softmax(h, axis=-1)

    args = jax.device_put((np.ones((2048, 1024), np.float32), np.ones(1024, np.float32),
                           np.ones(1024, np.float32)), stablert_device)
    jax.jit(norm_chain).lower(*args).compile(compiler_options={"xla_dump_to": str(tmp_path)})
    (plan,) = tmp_path.glob("stablert.*.plan.txt")
    text = plan.read_text()
    steps = [line.strip() for line in text[text.index("\nsteps:\n") + 8:].splitlines()
             if line.startswith("  ") and not line.startswith("    ")]
    assert len(steps) == 1 and steps[0].startswith("fused_rows "), steps
    sub_steps = steps[0][steps[0].index("steps=[") + 7:]
    depth, count = 0, 0
    for i, ch in enumerate(sub_steps):  # top-level {...} entries of steps=[...]
        if ch == "{":
            count += depth == 0
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "]" and depth == 0:
            break
    assert count == 8, sub_steps
    arena = int(text.split("\narena: ")[1].split(" bytes")[0])
    assert arena < 2048 * 1024 * 4, f"{arena} bytes of arena: a full-size intermediate"
