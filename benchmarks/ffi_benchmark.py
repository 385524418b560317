"""Time one jax.ffi.ffi_call (a user FFI handler) on StableRT and on XLA:CPU in one process.

The handler is tests/ffi/ffi_test_kernels.cc's StablertTestScale (y = x * scale, f32), built
as libstablert_ffi_test_kernels.so next to the plugin. Prints microseconds per call (best and
worst of 5 repetitions) for a small and a 1M-element array.

usage: PYTHONPATH=python STABLERT_LIBRARY_PATH=build/libstablert_pjrt.so \\
       python benchmarks/ffi_benchmark.py [path/to/libstablert_ffi_test_kernels.so]
"""
import ctypes
import os
import pathlib
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu,stablert")
import jax  # noqa: E402
import numpy as np  # noqa: E402


def main():
    default = pathlib.Path(os.environ.get("STABLERT_LIBRARY_PATH", "build/x")).parent / "libstablert_ffi_test_kernels.so"
    library = ctypes.cdll.LoadLibrary(sys.argv[1] if len(sys.argv) > 1 else str(default))
    for platform in ("cpu", "stablert"):
        jax.ffi.register_ffi_target("bench_scale", jax.ffi.pycapsule(library.StablertTestScale), platform=platform)

    def f(x):
        return jax.ffi.ffi_call("bench_scale", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, scale=np.float32(2.0))

    for n, calls in ((16, 2000), (1 << 20, 50)):
        row = []
        for name in ("cpu", "stablert"):
            device = jax.devices(name)[0]
            x = jax.device_put(np.ones(n, np.float32), device)
            g = jax.jit(f)
            g(x).block_until_ready()
            times = []
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(calls):
                    y = g(x)
                y.block_until_ready()
                times.append((time.perf_counter() - start) / calls * 1e6)
            row.append(f"{name} {min(times):.1f}-{max(times):.1f} us")
        print(f"f32[{n}]: " + " | ".join(row))


if __name__ == "__main__":
    main()
