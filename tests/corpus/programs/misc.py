"""Everything else a jitted program can carry: host callbacks and ordered effects (tokens),
composites, name scopes and source locations, nested and inlined calls, custom partitioning,
memory kinds, donation and static arguments."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from corpus_lib import P, S, i32


@jax.jit
def _helper(a, b):
    return jnp.tanh(a) * b


@partial(jax.jit, inline=True)
def _inlined(a):
    return a * 3.0


def _pure_callback(x):
    return jax.pure_callback(lambda v: np.sin(v), jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                             vmap_method="sequential")


def _io_callback_ordered(x):
    from jax.experimental import io_callback
    y = io_callback(lambda v: v * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x, ordered=True)
    return y + 1


def _debug_print(x):
    jax.debug.print("x = {}", x)
    return x * 2


def _debug_callback_ordered(x):
    jax.debug.callback(lambda v: None, x, ordered=True)
    return x + 1


def _composite(x):
    f = lax.composite(lambda v, scale: v * scale, name="my.scaled", version=2)
    return f(x, scale=np.float32(3.0))


def _name_scopes(x):
    with jax.named_scope("encoder"):
        with jax.named_scope("layer0"):
            y = jnp.sin(x)
    return jax.named_call(lambda v: v * 2, name="doubler")(y)


def _custom_partitioning():
    from jax.experimental.custom_partitioning import custom_partitioning

    @custom_partitioning
    def f(x):
        return jnp.fft.fft(x)

    def partition(mesh, arg_shapes, result_shape):
        return mesh, jnp.fft.fft, result_shape.sharding, (arg_shapes[0].sharding,)

    def infer(mesh, arg_shapes, result_shape):
        return arg_shapes[0].sharding

    f.def_partition(partition=partition, infer_sharding_from_operands=infer,
                    sharding_rule="i j -> i j")
    return f


def _pinned_host():
    return jax.sharding.SingleDeviceSharding(jax.devices()[0], memory_kind="pinned_host")


def _device_put_host(x):
    return jax.device_put(x * 2, _pinned_host())


def _compile_time_constant(x):
    with jax.ensure_compile_time_eval():
        c = jnp.arange(3.0) * 2
    return x + c


def programs():
    return [
        P("nested_jit_calls", lambda x, y: _helper(x, y) - _helper(y, x), S((3,)), S((3,))),
        P("inlined_jit", lambda x: _inlined(x) + 1, S((3,))),
        P("pure_callback", _pure_callback, S((4,))),
        P("pure_callback_vmap", jax.vmap(_pure_callback), S((2, 4))),
        P("io_callback_ordered_tokens", _io_callback_ordered, S((3,))),
        P("debug_print", _debug_print, S((3,))),
        P("debug_callback_ordered", _debug_callback_ordered, S((3,))),
        P("composite_explicit", _composite, S((4,))),
        P("name_scopes_locations", _name_scopes, S((4,))),
        P("static_argnums", lambda x, n: x * n, S((3,)), 4, static_argnums=(1,)),
        P("static_argnames", lambda x, mode: jnp.sin(x) if mode == "sin" else x, S((3,)),
          "sin", static_argnames=("mode",)),
        P("donate_argnames", lambda x, y: x + y, S((4,)), S((4,)), donate_argnames=("x",)),
        P("donate_all_outputs_alias", lambda x: (x * 2, x + 1), S((5,)), donate_argnums=(0,)),
        P("custom_partitioning", _custom_partitioning(), S((8, 8), jnp.complex64)),
        P("memory_kind_out_sharding", lambda x: x * 2, S((4,)), out_shardings=_pinned_host()),
        P("memory_kind_device_put", _device_put_host, S((4,))),
        P("ensure_compile_time_eval", _compile_time_constant, S((3,))),
        P("closed_over_constant_array", lambda x: x + jnp.asarray(np.arange(6.0).reshape(2, 3),
                                                                  jnp.float32), S((2, 3))),
        P("remat_of_scan_training", jax.grad(lambda w, xs: lax.scan(
            jax.checkpoint(lambda h, x: (jnp.tanh(h @ w + x), None)), jnp.zeros(4), xs)[0]
            .sum()), S((4, 4)), S((5, 4))),
        P("jnp_vectorize", jnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()"),
          S((3, 4)), S((3, 4))),
        P("lax_reduce_custom_monoid", lambda x: lax.reduce(x, np.float32(1.0),
                                                           lambda a, b: a * b + 0.0, (0,)),
          S((4, 3))),
        P("with_shape_of_int_index", lambda x, i: x.at[i].set(x[i + 1], mode="drop"), S((8,)),
          S((), i32)),
    ]
