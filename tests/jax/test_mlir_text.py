"""StableHLO as MLIR text through PJRT_Client_Compile (format "mlir").

Third-party hosts send what `jax.jit(f).lower(*args).as_text()` prints, not a portable
artifact. Each program's text (JAX's pretty form, with and without locations, and MLIR's
generic form) is written to a file and run by `stablert run` on the plugin under test: the
host library passes the text unchanged to PJRT_Client_Compile. Every output is checked
against JAX's CPU backend in this process, with JAX's tolerances for f32.
"""

import jax
import jax.numpy as jnp
import jax.scipy.special
import numpy as np
import pytest
from jax import lax

import stablert
from cli_runner import run_cli


def mlp(x, w, b):
    return jnp.tanh(x @ w + b), jnp.sum(x, axis=1)


def loops_and_sort(x, w, b):
    y = lax.fori_loop(0, 5, lambda i, v: v * 0.5 + jnp.sin(v), x)
    return jnp.sort(y, axis=1), jnp.cumsum(y, axis=0), jnp.argmax(y, axis=1)


def gathers_and_conv(x, w, b):
    idx = jnp.array([3, 0, 7, 1])
    taken = jnp.take(x, idx, axis=0)
    kernel = w[:9, :4].reshape(3, 3, 1, 4)
    image = x[None, :16, :16, None]
    conv = lax.conv_general_dilated(image, kernel, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
    cond = lax.cond(b[0] > 0, lambda: x[:4] * 2, lambda: x[:4] - 1)
    return taken, conv, cond, jnp.where(x > 0, x, b[0]).astype(jnp.float16), x[1:9:2, ::3]


PROGRAMS = {"mlp": mlp, "loops_and_sort": loops_and_sort, "gathers_and_conv": gathers_and_conv}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64), dtype=np.float32)
    w = rng.standard_normal((64, 16), dtype=np.float32) / 8
    b = rng.standard_normal((16,), dtype=np.float32)
    directory = tmp_path_factory.mktemp("inputs")
    args = []
    for name, value in (("x", x), ("w", w), ("b", b)):
        np.save(directory / f"{name}.npy", value)
        args += ["--in", str(directory / f"{name}.npy")]
    return (x, w, b), args


def texts(fn, values):
    lowered = jax.jit(fn, keep_unused=True).lower(*values)
    module = lowered.compiler_ir("stablehlo")
    return {
        "pretty": lowered.as_text(),
        "debug_info": lowered.as_text(debug_info=True),
        "generic": module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True),
    }


@pytest.mark.parametrize("form", ["pretty", "debug_info", "generic"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_text_program_matches_jax_cpu(inputs, tmp_path, name, form, cpu_device):
    values, args = inputs
    fn = PROGRAMS[name]
    text = texts(fn, values)[form]
    assert not text.startswith("ML\xefR")
    program = tmp_path / "program.mlir"
    program.write_text(text)
    result = run_cli("run", stablert.library_path(), str(program), *args, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    expected = jax.jit(fn, keep_unused=True)(*(jax.device_put(v, cpu_device) for v in values))
    for i, want in enumerate(jax.tree_util.tree_leaves(expected)):
        got = np.load(tmp_path / f"output{i}.npy")
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, (i, got.dtype, want.dtype)
        if want.dtype == np.float16:
            np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3)
        elif np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, want)


def test_text_and_bytecode_dump_alike(inputs, tmp_path):
    values, _ = inputs
    lowered = jax.jit(mlp).lower(*values)
    (tmp_path / "f.mlir").write_text(lowered.as_text())
    text = run_cli("dump", str(tmp_path / "f.mlir"))
    assert text.returncode == 0, text.stderr
    assert "stablehlo.dot_general" in text.stdout and "stablehlo.tanh" in text.stdout
    again = run_cli("dump", "--stablehlo", str(tmp_path / "f.mlir"))
    assert again.returncode == 0, again.stderr
    (tmp_path / "g.mlir").write_text(again.stdout)
    round_trip = run_cli("dump", str(tmp_path / "g.mlir"))
    assert round_trip.returncode == 0, round_trip.stderr
    assert round_trip.stdout == text.stdout


def test_malformed_and_chlo_text_are_clear_errors(inputs, tmp_path):
    values, args = inputs
    broken = lowered_text = jax.jit(mlp).lower(*values).as_text()
    broken = lowered_text.replace("stablehlo.tanh %", "stablehlo.tanh %missing_", 1)
    (tmp_path / "broken.mlir").write_text(broken)
    result = run_cli("run", stablert.library_path(), str(tmp_path / "broken.mlir"), *args)
    assert result.returncode == 1
    assert "INVALID_ARGUMENT" in result.stderr and "use of undefined value '%missing_" in result.stderr, result.stderr
    # CHLO ops without an expansion are named in the error (JAX prints every CHLO op it emits
    # in a form the reader expands; complex chlo.erf comes from other producers only).
    (tmp_path / "chlo.mlir").write_text(
        "module {\n  func.func @main(%x: tensor<32x64xcomplex<f32>>) -> tensor<32x64xcomplex<f32>> {\n"
        "    %0 = chlo.erf %x : tensor<32x64xcomplex<f32>> -> tensor<32x64xcomplex<f32>>\n"
        "    return %0 : tensor<32x64xcomplex<f32>>\n  }\n}\n")
    np.save(tmp_path / "z.npy", np.zeros((32, 64), np.complex64))
    result = run_cli("run", stablert.library_path(), str(tmp_path / "chlo.mlir"), "--in", str(tmp_path / "z.npy"))
    assert result.returncode == 1 and "UNIMPLEMENTED" in result.stderr and "CHLO op 'chlo.erf' on tensor<32x64xcomplex<f32>>" in result.stderr, result.stderr


# --- CHLO ops: `as_text()` keeps them; the reader expands them into StableHLO ops the way
# MLIR's chlo-legalize-to-stablehlo does for JAX's CPU backend.

EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.5, 1e-7, -1e-7, 1e-38, 1e-30, -1e-30, 4.0, -4.0,
         9.0, -9.0, 12.5, 20.0, -20.0, 88.0, 89.0, -89.0, 100.0, 1e10, -1e10, 1e20, 3e38, -3e38,
         np.inf, -np.inf, np.nan]
UNIT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.999, -0.999, 0.9999999, -0.9999999, 1e-7, -1e-7, 1e-30,
              0.99, -0.25, 1.5, -1.5, 2.0, np.inf, -np.inf, np.nan]


def chlo_inputs(kind: str) -> np.ndarray:
    """Edge values followed by realistic random values (16384 of them)."""
    rng = np.random.default_rng(1)
    if kind == "unit":
        body = rng.uniform(-1.0, 1.0, 16384)
        edges = UNIT_EDGES
    elif kind == "positive":
        body = np.concatenate([rng.uniform(1.0, 10.0, 12800), rng.exponential(100.0, 3584)])
        edges = EDGES
    else:
        body = np.concatenate([rng.standard_normal(12800) * 3, rng.standard_normal(3584) * 30])
        edges = EDGES
    return np.concatenate([np.array(edges), body]).astype(np.float32)


# name -> (function, input kind). Each lowers to the CHLO op of its name.
CHLO_CASES = {
    "erf": (lax.erf, "real"),
    "erfc": (lax.erfc, "real"),
    "erf_inv": (lax.erf_inv, "unit"),
    "lgamma": (lax.lgamma, "real"),
    "digamma": (lax.digamma, "real"),
    "sinh": (jnp.sinh, "real"),
    "cosh": (jnp.cosh, "real"),
    "asin": (jnp.arcsin, "unit"),
    "acos": (jnp.arccos, "unit"),
    "atan": (jnp.arctan, "real"),
    "asinh": (jnp.arcsinh, "real"),
    "acosh": (jnp.arccosh, "positive"),
    "atanh": (jnp.arctanh, "unit"),
    "square": (jnp.square, "real"),
    "top_k": (lambda x: lax.top_k(x[:16384].reshape(128, -1), 5), "real"),
    "top_k_ties": (lambda x: lax.top_k(jnp.round(x[:16380]).reshape(-1, 10), 4), "real"),
    "square_c64": (lambda x: jnp.square(lax.complex(x, jnp.roll(x, 1))), "real"),
    # Real parts kept off exp's overflow edge (|re| ~ 89), where StableRT's complex exp
    # overflows to (inf, inf) and XLA's keeps a finite component.
    "sinh_c64": (lambda x: jnp.sinh(lax.complex(x * 0.25, jnp.roll(x, 1))), "real"),
    "cosh_c64": (lambda x: jnp.cosh(lax.complex(x * 0.25, jnp.roll(x, 1))), "real"),
    "erf_f16": (lambda x: lax.erf(x.astype(jnp.float16)), "real"),
    "erf_inv_bf16": (lambda x: lax.erf_inv(x.astype(jnp.bfloat16)).astype(jnp.float32), "unit"),
    "lgamma_bf16": (lambda x: lax.lgamma(x.astype(jnp.bfloat16)).astype(jnp.float32), "real"),
    "asinh_f16": (lambda x: jnp.arcsinh(x.astype(jnp.float16)), "real"),
    "atanh_f16": (lambda x: jnp.arctanh(x.astype(jnp.float16)), "unit"),
    "acos_bf16": (lambda x: jnp.arccos(x.astype(jnp.bfloat16)).astype(jnp.float32), "unit"),
    "acosh_bf16": (lambda x: jnp.arccosh(x.astype(jnp.bfloat16)).astype(jnp.float32), "positive"),
    "digamma_f16": (lambda x: lax.digamma(x.astype(jnp.float16)), "real"),
    "next_after": (lambda x: lax.nextafter(x, jnp.roll(x, 1)), "real"),
    "next_after_to_zero": (lambda x: lax.nextafter(x, jnp.zeros_like(x)), "real"),
    "next_after_f16": (lambda x: lax.nextafter(x.astype(jnp.float16), jnp.float16(1.0)), "real"),
    # s = |x| + 1.5, not + 1: XLA folds (|x| + 1) - 1 to |x|, which changes zeta near s = 1.
    "zeta": (lambda x: jax.scipy.special.zeta(jnp.abs(x) + 1.5, jnp.roll(x, 3)), "real"),
    "zeta_integers": (lambda x: jax.scipy.special.zeta(jnp.round(jnp.abs(x)) + 1.0, jnp.round(x)), "real"),
    "polygamma": (lambda x: jax.scipy.special.polygamma((jnp.round(jnp.abs(x)) % 4).astype(jnp.int32), x), "real"),
    "polygamma_bf16": (lambda x: jax.scipy.special.polygamma(jnp.ones(x.shape, jnp.int32), x.astype(jnp.bfloat16)).astype(jnp.float32),
                       "positive"),
    "bessel_i1e": (jax.scipy.special.i1e, "real"),
    "bessel_i1e_f16": (lambda x: jax.scipy.special.i1e(x.astype(jnp.float16)), "real"),
    "composed": (lambda x: lax.erf_inv(jnp.clip(x * 0.1, -1, 1)) + lax.lgamma(jnp.abs(x) + 1) * jnp.sinh(x * 0.01),
                 "real"),
}


# lgamma's zeros (x = 1, 2) come from cancelling terms of magnitude ~10: a 1-ulp difference
# between StableRT's and XLA's log/log1p kernels shows as ~1e-6 absolute there.
CHLO_ATOL = {"lgamma": 4e-6, "composed": 4e-6}


def assert_matches(got, want, bf16=False, atol=None):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype, got.shape, want.shape)
    if np.issubdtype(want.dtype, np.integer):
        np.testing.assert_array_equal(got, want)
        return
    if np.issubdtype(want.dtype, np.complexfloating):
        assert_matches(got.real, want.real, bf16, atol)
        assert_matches(got.imag, want.imag, bf16, atol)
        return
    rtol, default_atol = (1e-3, 1e-3) if want.dtype == np.float16 else (1e-2, 1e-2) if bf16 else (1e-5, 1e-6)
    atol = atol or default_atol
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got64), np.isnan(want64))
    np.testing.assert_array_equal(np.isposinf(got64), np.isposinf(want64))
    np.testing.assert_array_equal(np.isneginf(got64), np.isneginf(want64))
    finite = np.isfinite(want64)
    np.testing.assert_allclose(got64[finite], want64[finite], rtol=rtol, atol=atol)


@pytest.mark.parametrize("form", ["pretty", "generic"])
@pytest.mark.parametrize("name", sorted(CHLO_CASES))
def test_chlo_op_matches_jax_cpu(tmp_path, name, form, cpu_device):
    fn, kind = CHLO_CASES[name]
    x = chlo_inputs(kind)
    lowered = jax.jit(fn).lower(x)
    text = lowered.as_text() if form == "pretty" else lowered.compiler_ir("stablehlo").operation.get_asm(
        print_generic_op_form=True)
    op = "chlo." + name.split("_f16")[0].split("_bf16")[0].split("_c64")[0].replace("_ties", "").replace("_to_zero", "").replace(
        "_integers", "")
    if name != "composed":
        assert op in text, text
    (tmp_path / "program.mlir").write_text(text)
    np.save(tmp_path / "x.npy", x)
    result = run_cli("run", stablert.library_path(), str(tmp_path / "program.mlir"), "--in", str(tmp_path / "x.npy"),
                     "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    expected = jax.jit(fn)(jax.device_put(x, cpu_device))
    for i, want in enumerate(jax.tree_util.tree_leaves(expected)):
        assert_matches(np.load(tmp_path / f"output{i}.npy"), np.asarray(want), bf16="bf16" in name,
                       atol=CHLO_ATOL.get(name))


F64_CASES = {
    "erf": (lax.erf, "real"),
    "erfc": (lax.erfc, "real"),
    "erf_inv": (lax.erf_inv, "unit"),
    "lgamma": (lax.lgamma, "real"),
    "digamma": (lax.digamma, "real"),
    "sinh": (jnp.sinh, "real"),
    "asinh": (jnp.arcsinh, "real"),
    "acosh": (jnp.arccosh, "positive"),
    "bessel_i1e": (jax.scipy.special.i1e, "real"),
    "next_after": (lambda x: lax.nextafter(x, jnp.roll(x, 1)), "real"),
    "zeta": (lambda x: jax.scipy.special.zeta(jnp.abs(x) + 1.5, jnp.roll(x, 3)), "real"),
    "top_k": (lambda x: lax.top_k(x[:16384].reshape(128, -1), 5), "real"),
}


@pytest.mark.parametrize("name", sorted(F64_CASES))
def test_chlo_op_f64_matches_jax_cpu(tmp_path, name, cpu_device):
    fn, kind = F64_CASES[name]
    x = chlo_inputs(kind).astype(np.float64)
    # Edge values of f64's range as well.
    x[:4] = [1e-300, -1e300, np.finfo(np.float64).max, np.finfo(np.float64).tiny]
    with jax.enable_x64(True):
        text = jax.jit(fn).lower(x).as_text()
        assert "chlo." + name in text and "f64" in text, text
        expected = jax.tree_util.tree_leaves(jax.jit(fn)(jax.device_put(x, cpu_device)))
    (tmp_path / "program.mlir").write_text(text)
    np.save(tmp_path / "x.npy", x)
    result = run_cli("run", stablert.library_path(), str(tmp_path / "program.mlir"), "--in", str(tmp_path / "x.npy"),
                     "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for i, want in enumerate(expected):
        want = np.asarray(want)
        got = np.load(tmp_path / f"output{i}.npy")
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        if np.issubdtype(want.dtype, np.integer):
            np.testing.assert_array_equal(got, want)
            continue
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-14)


def complex_inverse_trig_inputs(dtype):
    """Points across the plane: random ones, both sides of every branch cut (tiny and signed
    zero imaginary parts beyond +-1 on the real axis, tiny real parts beyond +-i), around +-1
    and +-i, and magnitudes up to the largest finite value of the part type."""
    part = np.float32 if dtype == np.complex64 else np.float64
    finfo = np.finfo(part)
    rng = np.random.default_rng(7)
    points = list(rng.standard_normal(256) * 3 + 1j * rng.standard_normal(256) * 3)
    beyond = [1.0 + 1e-6, 1.5, 2.0, 10.0, 1e3, 1e6]
    for a in beyond:
        for tiny in (0.0, -0.0, 1e-30, -1e-30, 1e-7, -1e-7):
            for sign in (1.0, -1.0):
                points.append(complex(sign * a, tiny))
                points.append(complex(tiny, sign * a))
    near = [0.0, 1e-20, 1e-8, 1e-3, 0.5, 0.999, 1.0, 1.001, 2.0]
    large = [1e10, 1e18, 1e30, float(finfo.max) / 4, float(finfo.max)]
    if part == np.float64:
        large += [1e100, 1e200]
    for a in near + large:
        for b in near + large:
            for sa in (1.0, -1.0):
                for sb in (1.0, -1.0):
                    points.append(complex(sa * a, sb * b))
    x = np.empty(len(points), dtype)
    x.real = [p.real for p in points]
    x.imag = [p.imag for p in points]
    return x


def complex_tan_inputs(dtype):
    """Random points, real parts across many periods and near the poles of the real tangent,
    imaginary parts from tiny to beyond where tanh saturates (and exp overflows), signed
    zeros, infinities and NaNs in either part."""
    part = np.float32 if dtype == np.complex64 else np.float64
    finfo = np.finfo(part)
    rng = np.random.default_rng(11)
    points = list(rng.standard_normal(512) * 4 + 1j * rng.standard_normal(512) * 4)
    reals = [0.0, -0.0, 1e-30, 0.5, -0.5, 1.0, np.pi / 2, -np.pi / 2, 1.5707963, 3.0, np.pi, 10.0, -100.0, 1e4,
             1e10, float(finfo.max), np.inf, -np.inf, np.nan]
    imags = [0.0, -0.0, 1e-30, 1e-7, 0.5, -1.0, 5.0, 9.0, -10.0, 20.0, 40.0, -44.0, 89.0, 100.0, 400.0, 710.0,
             1e10, -1e30, float(finfo.max), np.inf, -np.inf, np.nan]
    for a in reals:
        for b in imags:
            points.append(complex(a, b))
    x = np.empty(len(points), dtype)
    x.real = [p.real for p in points]
    x.imag = [p.imag for p in points]
    return x


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["c64", "c128"])
def test_complex_chlo_tan_matches_jax_cpu(tmp_path, dtype, cpu_device):
    """chlo.tan on complex operands (other producers emit it; JAX lowers jnp.tan to
    stablehlo.tan) against jnp.tan on XLA's CPU backend."""
    x = complex_tan_inputs(dtype)
    t = f"tensor<{x.size}xcomplex<{'f32' if dtype == np.complex64 else 'f64'}>>"
    (tmp_path / "program.mlir").write_text(
        f"module {{\n  func.func @main(%x: {t}) -> {t} {{\n    %0 = chlo.tan %x : {t} -> {t}\n"
        f"    return %0 : {t}\n  }}\n}}\n")
    with jax.enable_x64(True):
        want = np.asarray(jax.jit(jnp.tan)(jax.device_put(x, cpu_device)))
    np.save(tmp_path / "x.npy", x)
    result = run_cli("run", stablert.library_path(), str(tmp_path / "program.mlir"), "--in", str(tmp_path / "x.npy"),
                     "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    got = np.load(tmp_path / "output0.npy")
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    # NaNs and infinities where XLA has them, part by part; JAX's complex tolerances elsewhere.
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=str(x[np.isnan(g) != np.isnan(w)]))
        np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
    finite = np.isfinite(want)
    rtol = 1e-6 if dtype == np.complex64 else 1e-14
    # Every point against XLA, except where the result is ill-conditioned: near the real
    # tangent's poles with a tiny imaginary part (condition number |z tan'(z) / tan(z)| ~ 1e7)
    # one ulp of expm1 changes it by tens of percent, and XLA's f32 expm1 rounds differently
    # from the kernel's (both are as far from the exact value there). Such points may differ
    # from XLA only if one input ulp moves the result by > 0.1% and the value is within the
    # error the conditioning allows of the exact one.
    eps = np.finfo(np.float32 if dtype == np.complex64 else np.float64).eps
    with np.errstate(all="ignore"):
        z = x.astype(np.complex128)
        exact = np.tan(z)
        kappa = np.abs(z * (1 + exact * exact) / exact)
    off = finite & ~np.isclose(got, want, rtol=rtol, atol=0)
    assert off.sum() <= 4, x[off]
    for i in np.nonzero(off)[0]:
        assert kappa[i] * eps > 1e-3, (x[i], got[i], want[i], kappa[i])
        assert abs(got[i] - exact[i]) <= 4 * kappa[i] * eps * abs(exact[i]), (x[i], got[i], exact[i], kappa[i])
    np.testing.assert_allclose(got[finite & ~off], want[finite & ~off], rtol=rtol, atol=0)


COMPLEX_INVERSE_TRIG = {"asin": jnp.arcsin, "acos": jnp.arccos, "atan": jnp.arctan, "asinh": jnp.arcsinh,
                        "acosh": jnp.arccosh, "atanh": jnp.arctanh}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("name", sorted(COMPLEX_INVERSE_TRIG))
def test_complex_inverse_trig_matches_jax_cpu(tmp_path, name, dtype, cpu_device):
    fn = COMPLEX_INVERSE_TRIG[name]
    x = complex_inverse_trig_inputs(dtype)
    with jax.enable_x64(True):
        text = jax.jit(fn).lower(x).as_text()
        assert "chlo." + name in text, text
        want = np.asarray(jax.jit(fn)(jax.device_put(x, cpu_device)))
    (tmp_path / "program.mlir").write_text(text)
    np.save(tmp_path / "x.npy", x)
    result = run_cli("run", stablert.library_path(), str(tmp_path / "program.mlir"), "--in", str(tmp_path / "x.npy"),
                     "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    got = np.load(tmp_path / "output0.npy")
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    # JAX's tolerances for complex results, on the complex difference.
    rtol = 1e-6 if dtype == np.complex64 else 1e-14
    finite = np.isfinite(want)
    assert np.isfinite(got[finite]).all(), x[finite & ~np.isfinite(got)]
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=0)
    # Where XLA overflows (atanh near +-1 with a tiny imaginary part: its squares underflow),
    # the expansion must be the exact value (numpy in complex128).
    overflow = ~finite
    if overflow.any():
        exact = getattr(np, "arc" + name[1:])(x[overflow].astype(np.complex128))
        np.testing.assert_allclose(got[overflow], exact, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_mulhi_matches_jax_cpu(tmp_path, dtype, cpu_device):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    edges = np.array([info.min, info.max, 0, 1, info.max // 2 + 1, info.min // 2 - 1 if info.min else 2], dtype)
    x = np.concatenate([edges.repeat(len(edges)), rng.integers(info.min, info.max, 4096, dtype, endpoint=True)])
    y = np.concatenate([np.tile(edges, len(edges)), rng.integers(info.min, info.max, 4096, dtype, endpoint=True)])
    with jax.enable_x64(True):
        text = jax.jit(lax.mulhi).lower(x, y).as_text()
        assert "chlo.mulhi" in text, text
        want = np.asarray(jax.jit(lax.mulhi)(jax.device_put(x, cpu_device), jax.device_put(y, cpu_device)))
    (tmp_path / "program.mlir").write_text(text)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    result = run_cli("run", stablert.library_path(), str(tmp_path / "program.mlir"), "--in", str(tmp_path / "x.npy"),
                     "--in", str(tmp_path / "y.npy"), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    got = np.load(tmp_path / "output0.npy")
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# CHLO ops JAX itself does not print (other producers do): hand-written text, checked
# against numpy.
HAND_WRITTEN = """module {
  func.func @main(%x: tensor<4x3xf32>, %r: tensor<3xf32>, %c: tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>,
      tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>,
      tensor<4x3xi1>, tensor<4x3xf32>) {
    %0 = chlo.broadcast_add %x, %r : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %1 = chlo.broadcast_multiply %x, %c {broadcast_dimensions = array<i64: 0>} : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
    %2 = chlo.is_inf %x : tensor<4x3xf32> -> tensor<4x3xi1>
    %3 = chlo.is_pos_inf %x : tensor<4x3xf32> -> tensor<4x3xi1>
    %4 = "chlo.is_neg_inf"(%x) : (tensor<4x3xf32>) -> tensor<4x3xi1>
    %5 = "chlo.constant_like"(%x) {value = 2.5 : f32} : (tensor<4x3xf32>) -> tensor<4x3xf32>
    %6 = chlo.conj %x : tensor<4x3xf32> -> tensor<4x3xf32>
    %7 = chlo.broadcast_maximum %c, %x {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %8 = chlo.broadcast_compare %x, %r {comparison_direction = #chlo<comparison_direction LT>} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
    %9 = "chlo.broadcast_select"(%8, %x, %r) : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xi1>, tensor<4x3xf32>
  }
}
"""


def test_hand_written_chlo_ops(tmp_path):
    x = np.array([[1.0, -2.0, np.inf], [-np.inf, np.nan, 0.0], [3.0, 4.0, -5.0], [1e30, -1e-30, 7.0]], np.float32)
    r = np.array([10.0, 20.0, 30.0], np.float32)
    c = np.array([1.0, 2.0, -3.0, 0.5], np.float32)
    args = []
    for name, value in (("x", x), ("r", r), ("c", c)):
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--in", str(tmp_path / f"{name}.npy")]
    (tmp_path / "program.mlir").write_text(HAND_WRITTEN)
    result = run_cli("run", stablert.library_path(), str(tmp_path / "program.mlir"), *args, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    want = [x + r, x * c[:, None], np.isinf(x), np.isposinf(x), np.isneginf(x), np.full_like(x, 2.5), x,
            np.maximum(c[:, None], x), x < r, np.where(x < r, x, r)]
    for i, w in enumerate(want):
        got = np.load(tmp_path / f"output{i}.npy")
        assert got.dtype == w.dtype, (i, got.dtype)
        np.testing.assert_array_equal(got, w)


def test_chlo_errors_name_the_op(tmp_path):
    bad = HAND_WRITTEN.replace("%1 = chlo.broadcast_multiply %x, %c {broadcast_dimensions = array<i64: 0>}",
                               "%1 = chlo.broadcast_multiply %x, %c {broadcast_dimensions = array<i64: 1>}")
    (tmp_path / "bad.mlir").write_text(bad)
    result = run_cli("dump", str(tmp_path / "bad.mlir"))
    assert result.returncode != 0
    assert "INVALID_ARGUMENT" in result.stderr and "chlo.broadcast_multiply" in result.stderr, result.stderr
    assert "MLIR text 6:5" in result.stderr and "does not broadcast" in result.stderr, result.stderr
