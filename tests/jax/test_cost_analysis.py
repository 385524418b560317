"""`compiled.cost_analysis()` (PJRT_Executable_GetCostAnalysis) against XLA:CPU's in the same process.

Flops of dots and convolutions are exact (2·M·N·K; a convolution's multiply-adds over the
input, padding excluded, as XLA counts them), and so are the flops of elementwise ops and
reductions and the transcendentals. Bytes accessed count what every plan step reads and
writes: equal to XLA's for a single op; more than XLA's for chains XLA fuses, and an operand
read twice counts twice (docs/decisions.md, "Cost analysis").
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

KEYS = ("flops", "transcendentals", "bytes accessed")


def costs(fn, args, device):
    args = jax.device_put(args, device)
    analysis = jax.jit(fn).lower(*args).compile().cost_analysis()
    if isinstance(analysis, (list, tuple)):  # older JAX: one dict per program
        analysis = analysis[0]
    return {k: float(analysis.get(k, 0.0)) for k in KEYS}


def f32(*shape):
    return np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)


CASES = {
    # name: (fn, args, keys that must equal XLA's exactly)
    "matmul 256x512x128": (lambda a, b: a @ b, (f32(256, 512), f32(512, 128)), KEYS),
    "matmul 1024x1024x1024": (lambda a, b: a @ b, (f32(1024, 1024), f32(1024, 1024)), KEYS),
    "batched dot": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (f32(8, 64, 32), f32(8, 32, 16)), KEYS),
    "matvec": (lambda a, v: a @ v, (f32(512, 256), f32(256)), ("flops", "transcendentals")),
    "exp 1M": (jnp.exp, (f32(1 << 20),), KEYS),
    "tanh + mul": (lambda a: jnp.tanh(a) * a, (f32(1 << 16),), ("flops", "transcendentals")),
    # abs once: XLA merges repeated subexpressions (CSE), StableRT computes each one.
    "log1p sqrt sin": (lambda a: (lambda b: jnp.log1p(b) + jnp.sqrt(b) + jnp.sin(a))(jnp.abs(a)), (f32(4096),),
                       ("flops", "transcendentals")),
    "compare select": (lambda a, b: jnp.where(a > b, a, b - 1), (f32(1000, 100), f32(1000, 100)),
                       ("flops", "transcendentals")),
    "sum all 1M": (jnp.sum, (f32(1024, 1024),), ("flops", "transcendentals")),
    "max axis 1": (lambda a: a.max(axis=1), (f32(512, 256),), ("flops", "transcendentals")),
    "sum axis 0": (lambda a: a.sum(axis=0), (f32(512, 256),), ("flops", "transcendentals")),
    "conv SAME": (lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME"),
                  (f32(8, 32, 28, 28), f32(64, 32, 3, 3)), ("flops", "transcendentals")),
    "conv strided dilated": (lambda a, b: lax.conv_general_dilated(a, b, (2, 2), "VALID", rhs_dilation=(2, 2)),
                             (f32(4, 16, 33, 31), f32(8, 16, 3, 3)), ("flops", "transcendentals")),
    "conv grouped padded": (lambda a, b: lax.conv_general_dilated(a, b, (1, 1), ((2, 1), (0, 3)),
                                                                  feature_group_count=4),
                            (f32(2, 16, 20, 20), f32(32, 4, 5, 3)), ("flops", "transcendentals")),
    "conv lhs dilated (transposed)": (lambda a, b: lax.conv_general_dilated(a, b, (1, 1), ((2, 2), (2, 2)),
                                                                            lhs_dilation=(2, 2)),
                                      (f32(2, 8, 16, 16), f32(8, 8, 3, 3)), ("flops", "transcendentals")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cost_analysis_matches_xla(stablert_device, cpu_device, name):
    fn, args, exact = CASES[name]
    ours, xla = costs(fn, args, stablert_device), costs(fn, args, cpu_device)
    for key in exact:
        # Both report float32 values through the C API (XLA's own client: doubles).
        assert np.float32(ours[key]) == np.float32(xla[key]), (key, ours, xla)
    # Bytes are at least what XLA's fused program moves: every input read, every output written.
    assert ours["bytes accessed"] >= 0.99 * xla["bytes accessed"] or "conv" in name, (ours, xla)
    assert ours["bytes accessed"] > 0


def test_cost_analysis_is_stable_and_counts_reduction_bytes(stablert_device):
    x = jax.device_put(f32(1024, 1024), stablert_device)
    compiled = jax.jit(jnp.sum).lower(x).compile()
    first, second = compiled.cost_analysis(), compiled.cost_analysis()
    assert first == second
    # The input, the init value and the scalar result.
    assert first["bytes accessed"] == 1024 * 1024 * 4 + 4 + 4, first


def test_cost_analysis_of_a_loop_counts_its_body_once(stablert_device, cpu_device):
    def loop(a, b):
        return lax.fori_loop(0, 10, lambda i, acc: acc @ b, a)

    args = (f32(64, 64), f32(64, 64))
    ours, xla = costs(loop, args, stablert_device), costs(loop, args, cpu_device)
    assert ours["flops"] >= 2 * 64 ** 3, ours
    assert ours["flops"] < 10 * 2 * 64 ** 3, ours
    assert xla["flops"] < 10 * 2 * 64 ** 3, xla


def test_cost_analysis_of_data_movement_is_bytes_only(stablert_device):
    x = f32(512, 256)
    ours = costs(lambda a: a.T[::2], (x,), stablert_device)
    assert ours["flops"] == 0 and ours["transcendentals"] == 0
    assert ours["bytes accessed"] >= x.nbytes, ours
