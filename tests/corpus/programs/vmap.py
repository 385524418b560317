"""vmap: batching of every kind of primitive and of control flow."""
import jax
import jax.numpy as jnp
from jax import lax

from corpus_lib import P, S, i32


def programs():
    return [
        P("vmap_matvec", jax.vmap(lambda m, v: m @ v), S((4, 3, 5)), S((4, 5))),
        P("vmap_in_axes", jax.vmap(lambda a, b: a * b, in_axes=(1, None)), S((3, 6)), S((3,))),
        P("vmap_out_axes", jax.vmap(lambda a: (a, a.sum()), out_axes=(1, 0)), S((4, 3))),
        P("vmap_nested", jax.vmap(jax.vmap(lambda a, b: jnp.dot(a, b))), S((2, 3, 4)),
          S((2, 3, 4))),
        P("vmap_cond_to_select", jax.vmap(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)),
          S((5,), bool), S((5, 2))),
        P("vmap_while_loop", jax.vmap(lambda n: lax.while_loop(lambda v: v < n, lambda v: v + 1,
                                                               0)), S((4,), i32)),
        P("vmap_scan", jax.vmap(lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)),
          S((3, 5))),
        P("vmap_dynamic_slice", jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,))),
          S((4, 6)), S((4,), i32)),
        P("vmap_dynamic_update_slice", jax.vmap(lambda x, u, i: lax.dynamic_update_slice(
            x, u, (i,))), S((4, 6)), S((4, 2)), S((4,), i32)),
        P("vmap_gather", jax.vmap(lambda x, i: x[i]), S((3, 7)), S((3, 2), i32)),
        P("vmap_scatter", jax.vmap(lambda x, i: x.at[i].add(1.0)), S((3, 7)), S((3, 2), i32)),
        P("vmap_sort_argsort", jax.vmap(lambda x: (jnp.sort(x), jnp.argsort(x))), S((3, 6))),
        P("vmap_conv", jax.vmap(lambda x, w: lax.conv(x[None], w, (1, 1), "VALID")[0]),
          S((4, 2, 6, 6)), S((4, 3, 2, 3, 3))),
        P("vmap_random", jax.vmap(lambda k: jax.random.normal(k, (3,))),
          S((5,), jax.random.key(0).dtype)),
        P("vmap_switch", jax.vmap(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x)),
          S((4,), i32), S((4,))),
        P("vmap_grad", jax.vmap(jax.grad(lambda w, x: jnp.tanh(w @ x))), S((6, 3)), S((6, 3))),
        P("vmap_linalg_solve", jax.vmap(jnp.linalg.solve), S((3, 4, 4)), S((3, 4))),
        P("vmap_spmd_axis_name_free", jax.vmap(lambda x: x - x.mean(), axis_name="b"), S((4, 5))),
        P("vmap_collective_axis", jax.vmap(lambda x: x / lax.psum(x, "b"), axis_name="b"),
          S((4, 5))),
        P("vmap_top_k", jax.vmap(lambda x: lax.top_k(x, 2)), S((3, 8))),
        P("vmap_reduce_window", jax.vmap(lambda x: lax.reduce_window(
            x, 0.0, lax.add, (2,), (1,), "VALID")), S((3, 8))),
        P("vmap_cumsum", jax.vmap(jnp.cumsum), S((3, 8))),
    ]
