"""The program after StableRT's passes, dumped as XLA HLO, is a program XLA runs.

A dump directory (`compiler_options={"xla_dump_to": ...}`) gets `*after_optimizations.txt`
(HLO text) and, with `xla_dump_hlo_as_proto`, `*after_optimizations.hlo.pb` (an
xla.HloModuleProto), as XLA's CPU backend writes them. Each test compiles a JAX program on
stablert with both, then:
  - converts the proto to StableHLO with jaxlib's own converter, compiles that on JAX's CPU
    backend and checks that it computes what stablert computed on the same arguments;
  - parses the text with XLA's HLO parser and checks that it describes the same module as
    the proto (XLA prints both the same way).
"""
import glob
import os
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax._src import xla_bridge
from jax._src.lib import _jax

import jaxlib._hlo as xla_hlo

DUMP_OPTIONS = {"xla_dump_hlo_as_proto": True, "xla_dump_hlo_as_text": True}


def _dump(fn, args, device, **options):
    """Runs jit(fn) on `device` with a dump directory; returns (result, proto bytes, text)."""
    with tempfile.TemporaryDirectory() as directory:
        jitted = jax.jit(fn, keep_unused=True, compiler_options={"xla_dump_to": directory, **options})
        result = jitted(*[jax.device_put(a, device) for a in args])
        protos = glob.glob(os.path.join(directory, "*after_optimizations.hlo.pb"))
        texts = glob.glob(os.path.join(directory, "*after_optimizations.txt"))
        errors = glob.glob(os.path.join(directory, "*hlo_error.txt"))
        assert not errors, open(errors[0]).read()
        proto = open(protos[0], "rb").read() if protos else None
        text = open(texts[0]).read() if texts else None
        return result, proto, text, protos, texts


def _run_hlo_on_cpu(proto, args):
    """Compiles an HloModuleProto on JAX's CPU backend (through jaxlib's HLO->StableHLO
    converter) and runs it on `args`; returns the flat list of outputs as NumPy arrays."""
    backend = xla_bridge.get_backend("cpu")
    module = _jax.mlir.hlo_to_stablehlo(proto)
    devices = _jax.DeviceList(tuple(backend.devices()[:1]))
    executable = backend.compile_and_load(module, devices, _jax.CompileOptions())
    buffers = [jax.device_put(np.asarray(a), backend.devices()[0]) for a in args]
    results = executable.execute_sharded(buffers).disassemble_into_single_device_arrays()
    return [np.asarray(r[0]) for r in results]


def _check(fn, *args, rtol=1e-6, atol=1e-6):
    device = jax.devices("stablert")[0]
    result, proto, text, _, _ = _dump(fn, args, device, **DUMP_OPTIONS)
    assert proto is not None and text is not None
    expected = jax.tree_util.tree_leaves(result)
    got = _run_hlo_on_cpu(proto, args)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        if np.issubdtype(e.dtype, np.inexact):
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)
    # The text is the same module as the proto.
    parsed = xla_hlo.hlo_module_from_text(text)
    from_proto = xla_hlo.XlaComputation(proto).get_hlo_module()
    assert parsed.to_string() == from_proto.to_string()
    return text


rng = np.random.default_rng(0)
f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731


def test_elementwise_and_broadcasts():
    text = _check(lambda x, y: jnp.sin(x) * 2.0 + jnp.exp(y[None, :]) - jnp.tanh(x).clip(-0.5, 0.5), f32(4, 3), f32(3))
    assert text.startswith("HloModule ")
    assert "ENTRY " in text


def test_reductions_and_argmax():
    _check(lambda x: (x.sum(axis=1), x.max(axis=0), jnp.argmax(x, axis=1), x.mean()), f32(64, 33), rtol=1e-5)


def test_products_and_convolutions():
    _check(lambda a, b: jnp.einsum("bij,bjk->bik", a, b), f32(3, 8, 5), f32(3, 5, 7), rtol=1e-5, atol=1e-5)
    _check(lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
           f32(2, 9, 9, 4), f32(3, 3, 4, 6), rtol=1e-5, atol=1e-5)


def test_indexing():
    idx = np.array([3, 0, 7, 3], np.int32)
    _check(lambda x, i: (x[i], x.at[i].add(1.0), lax.dynamic_slice(x, (i[0], np.int32(1)), (2, 3))), f32(9, 5), idx)
    _check(lambda x: (jnp.pad(x, ((1, 2), (0, 3))), jnp.concatenate([x, x[::-1]], 0), x.T, jnp.flip(x, 1)), f32(4, 6))


def test_control_flow_with_captured_values():
    def loop(x, y):
        return lax.fori_loop(0, 5, lambda i, c: c * y + i, x)

    _check(loop, f32(6), f32(6))
    _check(lambda p, x, y: lax.cond(p > 0, lambda: x + y, lambda: x * y), np.float32(1.0), f32(5), f32(5))
    _check(lambda i, x: lax.switch(i, [lambda: x + 1, lambda: x * 3, lambda: -x]), np.int32(1), f32(5))


def test_sort_scan_windows_and_gradients():
    _check(lambda x: (jnp.sort(x), jnp.argsort(x), jnp.cumsum(x)), f32(50), rtol=1e-5, atol=1e-5)

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum()

    _check(jax.grad(pool), f32(2, 8, 8, 3))


def test_types_constants_and_random():
    _check(lambda x: (x.astype(jnp.bfloat16) * jnp.bfloat16(1.5), lax.bitcast_convert_type(x, jnp.int32),
                      jnp.where(x > 0, x, jnp.array([np.inf, -np.inf, np.nan, -0.0], np.float32)),
                      lax.reduce_precision(x, 5, 10)), f32(4))
    _check(lambda k: jax.random.normal(jax.random.wrap_key_data(k), (16,)), np.array([0, 42], np.uint32))
    _check(lambda x: (x.astype(np.int64) * 3 - 1, x.astype(np.uint8) < 7, jnp.float64(0.1) * x), f32(5) * 10)


def test_linear_algebra_and_fft():
    a = f32(4, 4)
    spd = a @ a.T + 4 * np.eye(4, dtype=np.float32)
    _check(lambda m, b: (jnp.linalg.cholesky(m), jnp.linalg.solve(m, b)), spd, f32(4, 2), rtol=1e-4, atol=1e-5)
    _check(lambda x: jnp.fft.rfft(x), f32(16), rtol=1e-5, atol=1e-5)


def test_optimization_barrier():
    _check(lambda x, y: lax.optimization_barrier((x + 1, y * 2)), f32(3), f32(2))


def test_text_only_by_default_and_proto_when_asked(stablert_device):
    _, proto, text, protos, texts = _dump(lambda x: x + 1, [np.float32(1)], stablert_device)
    assert proto is None and len(texts) == 1
    _, proto, text, protos, texts = _dump(lambda x: x + 1, [np.float32(1)], stablert_device, xla_dump_hlo_as_proto=True)
    assert len(protos) == 1 and not texts


def test_dump_again_when_loading_from_the_compilation_cache(stablert_device):
    """A cache hit deserializes with the second call's options: that dump holds the same text."""
    from jax._src import compilation_cache as cc
    from jax._src import config

    with tempfile.TemporaryDirectory() as cache_dir:
        cc.reset_cache()
        with config.compilation_cache_dir(cache_dir), config.persistent_cache_min_compile_time_secs(0), \
                config.persistent_cache_min_entry_size_bytes(0):
            try:
                _, _, text1, _, _ = _dump(lambda x: x * 7 + 1, [np.float32(2)], stablert_device)
                _, _, text2, protos, _ = _dump(lambda x: x * 7 + 1, [np.float32(2)], stablert_device, **DUMP_OPTIONS)
            finally:
                cc.reset_cache()
    assert text1 is not None and text1 == text2
    assert len(protos) == 1
