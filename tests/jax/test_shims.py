"""The JAX shims installed by the stablert package: donation, the compilation cache, linear algebra
lowerings and lax.platform_dependent. Each names the JAX version it was checked with (0.10.2)."""
import os
import re
import subprocess
import sys
import textwrap
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.lax import linalg as lx


def test_donated_arguments_are_consumed(stablert_device, cpu_device):
    def f(x, y):
        return x + y, x * y

    a = np.arange(6, dtype=np.float32)
    b = np.full(6, 3, np.float32)
    expected = [np.asarray(r) for r in jax.jit(f)(jax.device_put(a, cpu_device), jax.device_put(b, cpu_device))]
    x = jax.device_put(a, stablert_device)
    y = jax.device_put(b, stablert_device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Some donated buffers were not usable" would fail here
        results = jax.jit(f, donate_argnums=0)(x, y)
    assert x.is_deleted(), "the donated argument must be consumed"
    assert not y.is_deleted()
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_donating_the_same_array_twice_is_an_error(stablert_device):
    x = jax.device_put(np.ones(4, np.float32), stablert_device)
    f = jax.jit(lambda a, b: (a + b, a - b), donate_argnums=(0, 1))
    try:
        f(x, x)
    except Exception as error:  # JAX itself or the plugin must refuse
        assert "donat" in str(error).lower()
    else:
        raise AssertionError("donating one buffer twice was accepted")


def test_persistent_compilation_cache_round_trip(tmp_path):
    script = textwrap.dedent(f"""
        import os, jax, jax.numpy as jnp, numpy as np
        jax.config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        f = jax.jit(lambda x: jnp.tanh(x) * 3 + 1)
        x = np.linspace(-1, 1, 16, dtype=np.float32)
        first = np.asarray(f(x))
        entries = os.listdir({str(tmp_path)!r})
        assert entries, "nothing was written to the compilation cache"
        jax.clear_caches()
        second = np.asarray(f(x))
        np.testing.assert_array_equal(first, second)
        print("cached", len(entries))
    """)
    env = dict(os.environ, JAX_PLATFORMS="stablert")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().startswith("cached")


# --- Linear algebra lowerings (python/stablert/_jax_shims.py: _use_cpu_linalg_lowerings) ---
# Each primitive must lower on stablert to the same LAPACK custom call as on JAX's CPU backend
# and give the same numbers (tests/jax/ops/test_linalg.py covers the numerics per dtype).

_F = np.float32


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(_F)


def _sym(n, seed=0):
    a = _rand((n, n), seed)
    return a + a.T


_LINALG_PROGRAMS = {
    "eigh": (lambda a: jnp.linalg.eigh(a), lambda: (_sym(4),), "lapack_ssyevd_ffi"),
    "eig": (lambda a: jnp.linalg.eigvals(a), lambda: (_rand((4, 4)),), "lapack_sgeev_ffi"),
    "schur": (lambda a: lx.schur(a), lambda: (_sym(4),), "lapack_sgees_ffi"),
    "hessenberg": (lambda a: lx.hessenberg(a), lambda: (_rand((4, 4)),), "lapack_sgehrd_ffi"),
    "tridiagonal": (lambda a: lx.tridiagonal(a), lambda: (_sym(4),), "lapack_ssytrd_ffi"),
    "geqp3": (lambda a: lx.qr(a, pivoting=True), lambda: (_rand((5, 3)),), "lapack_sgeqp3_ffi"),
    "svd": (lambda a: jnp.linalg.svd(a), lambda: (_rand((5, 3)),), "lapack_sgesdd_ffi"),
    "lu": (lambda a: lx.lu(a), lambda: (_rand((4, 4)),), "lapack_sgetrf_ffi"),
    "geqrf": (lambda a: jnp.linalg.qr(a), lambda: (_rand((5, 3)),), "lapack_sgeqrf_ffi"),
    "householder_product": (lambda a, t: lx.householder_product(a, t), lambda: (_rand((5, 3)), _rand((2,), 1)),
                            "lapack_sorgqr_ffi"),
    "tridiagonal_solve": (lambda dl, d, du, b: lx.tridiagonal_solve(dl, d, du, b),
                          lambda: (np.array([0, 1, 1, 1], _F), np.array([4, 4, 4, 4], _F), np.array([1, 1, 1, 0], _F),
                                   _rand((4, 2))), "lapack_sgtsv_ffi"),
}


def _custom_call_targets(fn, args, device):
    text = jax.jit(fn).lower(*[jax.device_put(a, device) for a in args]).as_text()
    return sorted(set(re.findall(r"custom_call @(\w+)", text)))


def test_every_linalg_shim_is_tested():
    from stablert import _jax_shims

    assert set(_jax_shims._LINALG_CPU_RULES) == set(_LINALG_PROGRAMS)


@pytest.mark.parametrize("name", sorted(_LINALG_PROGRAMS))
def test_linalg_lowers_like_cpu(name, stablert_device, cpu_device):
    fn, make_args, target = _LINALG_PROGRAMS[name]
    args = make_args()
    on_cpu = _custom_call_targets(fn, args, cpu_device)
    on_stablert = _custom_call_targets(fn, args, stablert_device)
    assert target in on_cpu, on_cpu
    assert on_stablert == on_cpu
    if name == "eig":
        return  # complex results: numerics in tests/jax/ops/test_linalg.py once supported
    want = jax.tree.map(np.asarray, jax.jit(fn)(*[jax.device_put(a, cpu_device) for a in args]))
    got = jax.tree.map(np.asarray, jax.jit(fn)(*[jax.device_put(a, stablert_device) for a in args]))
    for w, g in zip(jax.tree.leaves(want), jax.tree.leaves(got)):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_cholesky_and_triangular_solve_stay_stablehlo_ops(stablert_device):
    a = _sym(4) + 10 * np.eye(4, dtype=_F)
    text = jax.jit(lambda a: lx.triangular_solve(lx.cholesky(a), a, left_side=True, lower=True)).lower(
        jax.device_put(a, stablert_device)).as_text()
    assert "stablehlo.cholesky" in text and "stablehlo.triangular_solve" in text
    assert "custom_call" not in text


def test_cholesky_of_non_positive_definite_is_nan_like_cpu(stablert_device, cpu_device):
    a = np.array([[[4, 2], [2, 5]], [[1, 2], [2, 1]], [[-1, 0], [0, 1]]], _F)
    f = jax.jit(lambda a: lx.cholesky(a, symmetrize_input=False))
    want = np.asarray(f(jax.device_put(a, cpu_device)))
    got = np.asarray(f(jax.device_put(a, stablert_device)))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)


def test_unknown_custom_call_fails_at_compile_time_naming_the_target(stablert_device):
    f = jax.jit(lambda x: jax.ffi.ffi_call("no_such_target_ffi", jax.ShapeDtypeStruct((4,), np.float32))(x))
    compiled = None
    with pytest.raises(Exception, match=r"UNIMPLEMENTED.*no_such_target_ffi"):
        compiled = f.lower(jax.device_put(np.ones(4, np.float32), stablert_device)).compile()
    assert compiled is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_tridiagonal_solve_perturbed_like_cpu(dtype, stablert_device, cpu_device):
    # jaxlib's own target tridiagonal_solve_perturbed_ffi (not LAPACK): singular and
    # pivoting systems give the same finite solutions as on CPU.
    f = jax.jit(lambda dl, d, du, b: lx.tridiagonal_solve(dl, d, du, b, perturb_singular=True))
    systems = [
        (np.zeros(3), np.zeros(3), np.zeros(3), np.ones((3, 2))),                   # zero matrix
        (np.array([0, 1.0]), np.array([1, 1.0]), np.array([1, 0.0]), np.ones((2, 1))),  # singular 2x2
        (np.array([0, 2, 1e-3, 5]), np.array([1e-9, 3, 4, 1]), np.array([1, 1e-7, 2, 0]),
         np.arange(8.0).reshape(4, 2)),                                              # pivoting
        (np.array([0.0]), np.array([0.0]), np.array([0.0]), np.ones((1, 3))),           # 1x1 singular
    ]
    for system in systems:
        args = [np.asarray(a, dtype) for a in system]
        want = np.asarray(f(*[jax.device_put(a, cpu_device) for a in args]))
        got = np.asarray(f(*[jax.device_put(a, stablert_device) for a in args]))
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-5)


# --- lax.platform_dependent (_platform_dependent_takes_cpu_branch) ---

def test_platform_dependent_takes_cpu_branch(stablert_device):
    x = jax.device_put(np.float32(1), stablert_device)
    f = jax.jit(lambda x: lax.platform_dependent(x, cpu=lambda x: x + 1, default=lambda x: x - 1))
    assert float(f(x)) == 2.0
    g = jax.jit(lambda x: lax.platform_dependent(x, cpu=lambda x: x + 1, tpu=lambda x: x * 10))
    assert float(g(x)) == 2.0  # no default branch: would fail to lower without the shim


def test_platform_dependent_stablert_branch_wins(stablert_device, cpu_device):
    f = jax.jit(lambda x: lax.platform_dependent(x, cpu=lambda x: x + 1, stablert=lambda x: x * 5,
                                                 default=lambda x: x - 1))
    assert float(f(jax.device_put(np.float32(1), stablert_device))) == 5.0
    assert float(f(jax.device_put(np.float32(1), cpu_device))) == 2.0


def test_platform_dependent_inside_vmap_and_grad(stablert_device):
    def h(x):
        return lax.platform_dependent(x, cpu=lambda x: jnp.sin(x), default=lambda x: jnp.cos(x))

    x = jax.device_put(np.linspace(0, 1, 4, dtype=_F), stablert_device)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(jax.grad(h)))(x)), np.cos(np.linspace(0, 1, 4)), rtol=1e-6)


# --- primitives with only platform-specific rules (_cpu_rules_as_fallback) ---

def _primitive_with_rules(name, platforms):
    """A primitive computing sin(x), lowered only for `platforms`; the rule records the platform
    it was lowered for and refuses any other, as JAX's own lowering-error test primitive does."""
    from functools import partial

    from jax._src import core, dispatch
    from jax._src.interpreters import mlir

    prim = core.Primitive(name)
    prim.def_abstract_eval(lambda aval: aval)
    prim.def_impl(partial(dispatch.apply_primitive, prim))
    lowered_for = []

    def rule(platform, ctx, x):
        lowered_for.append(platform)
        return [mlir.hlo.sine(x)]

    for platform in platforms:
        mlir.register_lowering(prim, partial(rule, platform), platform=platform)
    return prim, lowered_for


def test_primitive_with_only_a_cpu_rule_lowers_with_it(stablert_device):
    prim, lowered_for = _primitive_with_rules("stablert_test_cpu_only", ("cpu", "tpu"))
    x = jax.device_put(np.float32(1), stablert_device)
    np.testing.assert_allclose(float(jax.jit(prim.bind)(x)), np.sin(np.float32(1)), rtol=1e-6)
    assert lowered_for == ["cpu"]
    # lax.platform_dependent lowers only the branch for the platform (the cpu one on stablert).
    f = jax.jit(lambda x: lax.platform_dependent(x, cpu=prim.bind, tpu=prim.bind))
    np.testing.assert_allclose(float(f(x)), np.sin(np.float32(1)), rtol=1e-6)
    assert "tpu" not in lowered_for


def test_stablert_rule_wins_over_the_cpu_rule(stablert_device):
    prim, lowered_for = _primitive_with_rules("stablert_test_own_rule", ("cpu", "stablert"))
    jax.jit(prim.bind)(jax.device_put(np.float32(1), stablert_device)).block_until_ready()
    assert lowered_for == ["stablert"]


def test_primitive_without_cpu_rule_still_names_the_platform(stablert_device):
    prim, _ = _primitive_with_rules("stablert_test_tpu_only", ("tpu",))
    with pytest.raises(NotImplementedError, match="not found for platform stablert"):
        jax.jit(prim.bind)(jax.device_put(np.float32(1), stablert_device))


def test_host_callbacks_lower_to_host_transfers_on_stablert(stablert_device, cpu_device):
    """_host_callbacks_by_send_and_recv (jax 0.10.2): stablert takes JAX's TPU path
    (stablehlo.send/recv host transfers, one channel per operand and result); cpu keeps its
    custom call."""
    def f(x):
        y = jax.pure_callback(lambda a: a * 2, jax.ShapeDtypeStruct((3,), np.float32), x)
        jax.debug.print("{}", y)
        return y

    x = np.arange(3, dtype=np.float32)
    stablert_text = jax.jit(f).lower(jax.device_put(x, stablert_device)).as_text()
    cpu_text = jax.jit(f).lower(jax.device_put(x, cpu_device)).as_text()
    assert stablert_text.count('"stablehlo.send"') == 2 and stablert_text.count('"stablehlo.recv"') == 2
    assert "is_host_transfer = true" in stablert_text and "custom_call" not in stablert_text
    assert "xla_ffi_python_cpu_callback" in cpu_text and "stablehlo.send" not in cpu_text


def test_partitioned_callbacks_run_once_on_one_device(stablert_device, cpu_device, capfd):
    """Partitioned callbacks (refused by JAX on TPU) take the same path; on one device they
    run once, as on cpu, with no shard layout (tests/jax_multi_device covers several)."""
    f = jax.jit(lambda x: jax.debug.print("p {}", x, partitioned=True))
    text = f.lower(jax.device_put(np.float32(1), stablert_device)).as_text()
    assert "stablert.shard_layout" not in text and '"stablehlo.send"' in text
    outputs = []
    for device in (stablert_device, cpu_device):
        f(jax.device_put(np.float32(1), device))
        jax.effects_barrier()
        outputs.append(capfd.readouterr().out)
    assert outputs[0] == outputs[1] == "p 1.0\n"


def test_host_transfer_channels_differ_across_lowerings(stablert_device):
    """debug_callback/debug_print are uncacheable on stablert, as on TPU: each lowering and
    each use gets its own channels, so two prints of one jaxpr never share a channel."""
    def g(x):
        jax.debug.print("a {}", x)
        return x

    f = jax.jit(lambda x: g(g(x)))
    text = f.lower(jax.device_put(np.float32(1), stablert_device)).as_text()
    handles = re.findall(r"channel_handle<handle = (\d+)", text)
    assert len(handles) == len(set(handles)) == 4


def test_inspect_array_sharding_on_one_device_calls_back_at_lowering(stablert_device):
    """_inspect_sharding_from_layouts (jax 0.10.2): on one device JAX's own rule runs (it calls
    back while lowering, with a replicated sharding); several devices: tests/jax_multi_device."""
    from jax._src import debugging

    seen = []
    f = jax.jit(lambda v: (debugging.inspect_array_sharding(v, callback=seen.append), v + 1)[1])
    f.lower(jax.device_put(np.zeros(3, np.float32), stablert_device))
    assert len(seen) == 1 and seen[0].is_fully_replicated


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erf_inv"])
def test_special_functions_lower_to_chlo_composites(name, stablert_device, cpu_device):
    fn = getattr(lax, name)
    x = np.array([0.25, 0.5, 3.5, -2.5, 0.999], np.float32)
    text = jax.jit(fn).trace(x).lower(lowering_platforms=("stablert",)).as_text()
    assert f'stablehlo.composite "chlo.{name}"' in text, text
    # XLA keeps its own lowering (the chlo op).
    assert "stablehlo.composite" not in jax.jit(fn).trace(x).lower(lowering_platforms=("cpu",)).as_text()
    # Values, gradients and batching as on the CPU backend.
    for f in (fn, jax.vmap(fn), jax.grad(lambda v: fn(v).sum())):
        got = np.asarray(jax.jit(f)(jax.device_put(x, stablert_device)))
        want = np.asarray(jax.jit(f)(jax.device_put(x, cpu_device)))
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
