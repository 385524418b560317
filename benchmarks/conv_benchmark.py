"""Convolution benchmark: StableRT against JAX's CPU backend (XLA) in the same process.

Times a 2-D convolution (NHWC input and HWIO kernel, or NCHW and OIHW; SAME padding) forward, its gradient with
respect to the input and its gradient with respect to the kernel, each jitted on its own,
on both backends; prints the best and median of --repeats runs after warm-up and the ratio
of the best times (below 1: StableRT is faster).

    .venv/bin/python benchmarks/conv_benchmark.py [--batch 16] [--size 32] [--cin 32] [--cout 64]
        [--kernel 3] [--stride 1] [--layout NHWC|NCHW] [--repeats 20]
"""
import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def _best_median(fn, args, repeats):
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return min(times), float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--cin", type=int, default=32)
    parser.add_argument("--cout", type=int, default=64)
    parser.add_argument("--kernel", type=int, default=3)
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument("--layout", choices=("NHWC", "NCHW"), default="NHWC")
    parser.add_argument("--repeats", type=int, default=20)
    a = parser.parse_args()

    nhwc = a.layout == "NHWC"
    dimension_numbers = ("NHWC", "HWIO", "NHWC") if nhwc else ("NCHW", "OIHW", "NCHW")

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (a.stride, a.stride), "SAME", dimension_numbers=dimension_numbers)

    rng = np.random.default_rng(0)
    x_shape = (a.batch, a.size, a.size, a.cin) if nhwc else (a.batch, a.cin, a.size, a.size)
    w_shape = (a.kernel, a.kernel, a.cin, a.cout) if nhwc else (a.cout, a.cin, a.kernel, a.kernel)
    x = rng.standard_normal(x_shape, dtype=np.float32)
    w = rng.standard_normal(w_shape, dtype=np.float32)
    y = np.asarray(jax.jit(conv, backend="cpu")(x, w))
    dy = rng.standard_normal(y.shape, dtype=np.float32)
    flops = 2.0 * y.size * a.kernel * a.kernel * a.cin
    workloads = [
        ("forward", conv, (x, w)),
        ("input gradient", lambda w, dy: jax.vjp(lambda x: conv(x, w), x)[1](dy)[0], (w, dy)),
        ("kernel gradient", lambda x, dy: jax.vjp(lambda w: conv(x, w), w)[1](dy)[0], (x, dy)),
    ]
    cpu, stablert = jax.devices("cpu")[0], jax.devices("stablert")[0]
    print(f"conv2d {a.layout} {'x'.join(map(str, x_shape))} * {'x'.join(map(str, w_shape))} "
          f"stride {a.stride}, {flops / 1e9:.3f} GFLOP per call, best/median of {a.repeats}")
    print(f"{'workload':<16} {'StableRT ms':>18} {'XLA ms':>18} {'ratio':>7} {'GFLOP/s':>9}")
    for name, fn, args in workloads:
        results = []
        for device in (stablert, cpu):
            dev_args = [jax.device_put(v, device) for v in args]
            results.append(_best_median(jax.jit(fn), dev_args, a.repeats))
        (s_best, s_med), (x_best, x_med) = results
        print(f"{name:<16} {s_best * 1e3:8.2f} / {s_med * 1e3:7.2f} {x_best * 1e3:8.2f} / {x_med * 1e3:7.2f} "
              f"{s_best / x_best:7.2f} {flops / s_best / 1e9:9.1f}")


if __name__ == "__main__":
    main()
