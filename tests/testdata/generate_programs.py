#!/usr/bin/env python3
"""Builds small JAX programs and writes them as StableHLO portable artifacts.

Each program is lowered with jax.jit and serialized the way jaxlib's PJRT C API client does
before PJRT_Client_Compile: a VHLO portable artifact in MLIR bytecode at a target version,
with mixed (sdy-preserving) serialization for targets >= 1.11.0 and Shardy export for older
targets. Three targets are written per program: the oldest StableHLO accepts (0.9.0), JAX's
default target (the WEEK_12 compatibility anchor) and jaxlib's current version.

usage: generate_programs.py [OUT_DIR]   (default: programs/ next to this script)
Run with the JAX in /work/main/.venv; the sdy program needs 2 CPU devices, set below.
"""
import os
import pathlib
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.lib import _jax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402
from jaxlib.mlir.dialects import stablehlo  # noqa: E402

MIXED_SERIALIZATION_MIN = (1, 11, 0)


def version_tuple(v):
    return tuple(int(x) for x in v.split("."))


def serialize(module, target):
    # Mirrors xla::Serialize: targets >= 1.11.0 keep other dialects (sdy) in place.
    mixed = version_tuple(target) >= MIXED_SERIALIZATION_MIN
    return _jax.mlir.serialize_portable_artifact(module, target, mixed)


def targets():
    default = stablehlo.get_version_from_compatibility_requirement(
        stablehlo.StablehloCompatibilityRequirement.WEEK_12)
    out = [stablehlo.get_minimum_version(), default, stablehlo.get_current_version()]
    return sorted(set(out), key=version_tuple)


# --- programs: name -> (function, example args, jit kwargs) ---------------------------------

def add_i32(x, y):
    return x + y


def mul_const(x):
    return x * 2.0


def broadcast_reshape_convert(x):
    b = jnp.broadcast_to(x, (2, 3))
    return jnp.reshape(b, (6,)).astype(jnp.int32)


def reduce_sum(x):
    return jnp.sum(x, axis=1)


def while_loop(n, x):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))


@jax.jit
def _private_helper(a, b):
    return jnp.tanh(a) * b + 1.0


def call_private(x, y):
    return _private_helper(x, y) - _private_helper(y, x)


def sharded_add(x, y):
    return jnp.sin(x) + y


def two_device_mesh():
    return Mesh(np.array(jax.devices()[:2]), ("x",))


def shard_map_psum(x):
    return jax.shard_map(lambda b: lax.psum(b, "x"), mesh=two_device_mesh(), in_specs=P("x"),
                         out_specs=P())(x)


def sharding_constraint(x):
    y = jnp.cos(x)
    return lax.with_sharding_constraint(y, NamedSharding(two_device_mesh(), P(None, "x"))) * 3.0


def matmul_softmax(a, b):
    return jax.nn.softmax(a @ b, axis=-1)


def gather_scatter(x, idx):
    return x[idx].sum() + x.at[idx].add(1.0)


def conv2d(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def sort_argmax_cumsum(x):
    return jnp.sort(x), jnp.argmax(x, axis=-1), jnp.cumsum(x, axis=0)


def cond_erf_topk(p, x):
    y = lax.cond(p > 0, lambda v: lax.erf(v), lambda v: -v, x)
    return lax.top_k(y, 2)


def slices_and_rng(key, x):
    noise = jax.random.uniform(key, (4, 4))
    y = jnp.concatenate([x[:2], x[2:] * 2], axis=0)
    return lax.dynamic_slice(jnp.pad(y + noise, 1), (1, 1), (2, 2)).T


def constants_of_many_dtypes(x):
    i4 = jnp.array([-8, -1, 0, 7], dtype=jnp.int4)
    u4 = jnp.array([0, 1, 14, 15], dtype=jnp.uint4)
    bf = jnp.array([1.5, -2.0, 0.0, 3.0], dtype=jnp.bfloat16)
    f8 = jnp.array([0.5, -1.0, 2.0, 448.0], dtype=jnp.float8_e4m3fn)
    c = jnp.array([1 + 2j, 3 - 4j, 0j, -1j], dtype=jnp.complex64)
    b = jnp.array([True, False, True, True])
    u8 = jnp.array([0, 255, 128, 1], dtype=jnp.uint8)
    return (x + i4.astype(jnp.float32) + u4.astype(jnp.float32) + bf.astype(jnp.float32)
            + f8.astype(jnp.float32) + jnp.real(c * x) + jnp.where(b, x, -x)
            + u8.astype(jnp.float32))


def donated_add(x, y):
    return x + y, x * y


def scale_shift(x):
    return x * 2.0 + 1.0


def programs():
    f32 = np.float32
    out = {
        "add_i32": (add_i32, (np.int32(1), np.int32(2)), {}),
        "mul_const": (mul_const, (np.zeros((4,), f32),), {}),
        "broadcast_reshape_convert": (broadcast_reshape_convert, (np.zeros((3,), f32),), {}),
        "reduce_sum": (reduce_sum, (np.zeros((2, 3), f32),), {}),
        "while_loop": (while_loop, (np.int32(3), np.zeros((2,), f32)), {}),
        "call_private": (call_private, (np.zeros((2,), f32), np.zeros((2,), f32)), {}),
    }
    i32 = np.int32
    out.update({
        "matmul_softmax": (matmul_softmax, (np.zeros((2, 3), f32), np.zeros((3, 4), f32)), {}),
        "gather_scatter": (gather_scatter, (np.zeros((5,), f32), np.array([1, 3], i32)), {}),
        "conv2d": (conv2d, (np.zeros((1, 4, 4, 2), f32), np.zeros((3, 3, 2, 3), f32)), {}),
        "sort_argmax_cumsum": (sort_argmax_cumsum, (np.zeros((3, 4), f32),), {}),
        "cond_erf_topk": (cond_erf_topk, (np.int32(1), np.zeros((5,), f32)), {}),
        "constants_of_many_dtypes": (constants_of_many_dtypes, (np.zeros((4,), f32),), {}),
        "donated_add": (donated_add, (np.zeros((3,), f32), np.zeros((3,), f32)),
                        {"donate_argnums": (0,)}),
        # 64 MiB in: the async host-to-device transfer tests fill it in 1 MiB chunks.
        "scale_shift_16m": (scale_shift, (jax.ShapeDtypeStruct((16 * 1024 * 1024,), f32),), {}),
        "slices_and_rng": (slices_and_rng, (jax.random.key_data(jax.random.key(0)),
                                            np.zeros((4, 4), f32)), {}),
    })
    devices = jax.devices()
    if len(devices) >= 2:
        mesh = two_device_mesh()
        sharding = NamedSharding(mesh, P("x"))
        out["sdy_sharded_add"] = (sharded_add, (np.zeros((4, 2), f32), np.zeros((4, 2), f32)),
                                  {"in_shardings": (sharding, sharding),
                                   "out_shardings": sharding})
        out["sdy_shard_map_psum"] = (shard_map_psum, (np.zeros((4, 2), f32),),
                                     {"in_shardings": sharding})
        out["sdy_sharding_constraint"] = (sharding_constraint, (np.zeros((4, 2), f32),),
                                          {"in_shardings": sharding})
    return out


# Programs JAX on CPU does not emit, written as StableHLO text: name -> MLIR.
TEXT_PROGRAMS = {
    # A host transfer: x goes to the host on channel 1, y comes back on channel 2; returns x + y.
    "host_transfer": """
func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.create_token : !stablehlo.token
  %1 = "stablehlo.send"(%arg0, %0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>,
      is_host_transfer = true}> : (tensor<3xf32>, !stablehlo.token) -> !stablehlo.token
  %2:2 = "stablehlo.recv"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 3>,
      is_host_transfer = true}> : (!stablehlo.token) -> (tensor<3xf32>, !stablehlo.token)
  %3 = stablehlo.add %arg0, %2#0 : tensor<3xf32>
  return %3 : tensor<3xf32>
}
""",
}

# Custom calls to XLA FFI targets, as jax.ffi.ffi_call emits them (tests/capi/ffi_extension_test.cc
# registers the handlers): y = handler(x) with the f32 attribute `bias`; capi_ffi_user_data
# also reads the execution's user data.
for _name, _target in (("ffi_add_bias", "capi_ffi_add_bias"), ("ffi_fails", "capi_ffi_fails"),
                       ("ffi_unregistered", "capi_ffi_never_registered"),
                       ("ffi_user_data", "capi_ffi_user_data")):
    TEXT_PROGRAMS[_name] = f"""
func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {{
  %0 = stablehlo.custom_call @{_target}(%arg0) {{api_version = 1 : i32, backend_config = "",
      mhlo.backend_config = {{bias = 1.5 : f32}}}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}}
"""


def text_modules():
    from jax._src.interpreters import mlir
    from jaxlib.mlir import ir

    context = mlir.make_ir_context()
    return {name: ir.Module.parse(text, context=context) for name, text in TEXT_PROGRAMS.items()}


def write(out_dir, name, module):
    for target in targets():
        try:
            data = serialize(module, target)
        except Exception as e:  # e.g. composites (chlo.erf) do not exist before 0.19.0
            print(f"{name} at {target}: not serializable ({str(e).splitlines()[0]})")
            continue
        path = out_dir / f"{name}.{target.replace('.', '_')}.mlirbc"
        path.write_bytes(data)
        print(f"{path.name}: {len(data)} bytes")


def main():
    out_dir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else (
        pathlib.Path(__file__).resolve().parent / "programs")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, (fn, args, kwargs) in programs().items():
        write(out_dir, name, jax.jit(fn, **kwargs).lower(*args).compiler_ir("stablehlo"))
    for name, module in text_modules().items():
        write(out_dir, name, module)


if __name__ == "__main__":
    main()
