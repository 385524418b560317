"""The JAX shims installed by the stablert package: donation and the compilation cache."""
import os
import subprocess
import sys
import textwrap
import warnings

import jax
import jax.numpy as jnp
import numpy as np


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
