"""Shapes: scalars, zero-size arrays, unit and high-rank dimensions, large constants."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from corpus_lib import P, S, i32


def programs():
    return [
        P("scalar_f32", lambda x, y: x * y + 1.0, S(()), S(())),
        P("scalar_int_bool", lambda x: (x + 1, x > 0), S((), i32)),
        P("no_arguments", lambda: jnp.arange(5) * 2),
        P("no_results", lambda x: None, S((3,))),
        P("unused_argument_kept", lambda x, y: x * 2, S((3,)), S((4,)), keep_unused=True),
        P("unused_argument_dropped", lambda x, y: x * 2, S((3,)), S((4,))),
        P("zero_size_elementwise", lambda x: jnp.sin(x) + 1, S((0,))),
        P("zero_size_2d", lambda x: x.T @ x, S((0, 3))),
        P("zero_size_reduce", lambda x: (x.sum(axis=0), x.max(initial=-1.0, axis=1)), S((3, 0))),
        P("zero_size_concat", lambda x, y: jnp.concatenate([x, y]), S((0, 2)), S((3, 2))),
        P("zero_size_result", lambda x: x[2:2], S((5,))),
        P("zero_size_gather", lambda x, i: x[i], S((4, 3)), S((0,), i32)),
        P("zero_size_scan", lambda xs: lax.scan(lambda c, x: (c + x, x), 0.0, xs), S((0,))),
        # atan's decomposition holds a splat constant of the operand's (zero-size) shape.
        P("zero_size_splat_constant", lambda x: lax.atan(x), S((0, 3))),
        P("zero_size_int_bool", lambda x, m: (x * 2, m & m), S((2, 0, 3), i32), S((0,), bool)),
        P("unit_dims", lambda x: jnp.squeeze(x, (0, 2)) + x[0, :, 0, None], S((1, 5, 1, 4))),
        P("rank_6", lambda x: jnp.transpose(x, (5, 4, 3, 2, 1, 0)).sum(axis=(0, 2)),
          S((2, 1, 3, 1, 2, 2))),
        P("rank_8_reduce", lambda x: x.mean(axis=(1, 3, 5, 7)), S((2,) * 8)),
        P("large_dense_constant", lambda x: x + np.linspace(0, 1, 10000, dtype=np.float32)
          .reshape(100, 100), S((100, 100))),
        P("large_splat_constant", lambda x: x * jnp.full((512, 512), 0.5), S((512, 512))),
        P("large_int_constant", lambda x: x + np.arange(4096, dtype=np.int32), S((4096,), i32)),
        P("many_arguments", lambda *xs: sum(xs), *[S((2,)) for _ in range(40)]),
        P("many_results", lambda x: tuple(x * k for k in range(30)), S((2,))),
        P("pytree_arguments", lambda d: d["a"] + d["b"][0] * d["b"][1],
          {"a": S((3,)), "b": (S((3,)), S((3,)))}),
        P("broadcast_scalar_to_zero", lambda x: jnp.broadcast_to(x, (0, 4)), S(())),
        P("iota_large", lambda: lax.iota(i32, 100000)),
        P("reshape_to_scalar", lambda x: x.reshape(()), S((1, 1, 1))),
        P("dynamic_slice_zero_size", lambda x, i: lax.dynamic_slice(x, (i,), (0,)), S((4,)),
          S((), i32)),
        P("eval_shape_free", lambda x: jax.eval_shape(jnp.sin, x) and x, S((2,))),
    ]
