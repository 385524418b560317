"""Control flow: scan, fori_loop, while_loop, cond, switch, map, associative_scan, nesting."""
import jax
import jax.numpy as jnp
from jax import lax

from corpus_lib import P, S, i32


def _rnn(h, xs, w):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h.sum()
    return lax.scan(step, h, xs)


def _nested(n, x):
    def body(i, acc):
        def inner(c, v):
            return c + v, c * v
        acc2, ys = lax.scan(inner, acc, jnp.arange(3.0) + i)
        return lax.cond(i % 2 == 0, lambda a: a + ys.sum(), lambda a: a - 1.0, acc2)
    return lax.fori_loop(0, n, body, x)


def _while_in_scan(xs):
    def step(c, x):
        r = lax.while_loop(lambda s: s[0] < x, lambda s: (s[0] + 1.0, s[1] * 1.5), (0.0, c))
        return r[1], r[0]
    return lax.scan(step, 1.0, xs)


def _cond_in_while(n, x):
    def body(s):
        i, v = s
        v = lax.switch(i % 3, [lambda a: a + 1, lambda a: a * 2, lambda a: a - 3], v)
        return i + 1, v
    return lax.while_loop(lambda s: s[0] < n, body, (0, x))


def programs():
    h, xs, w = S((4,)), S((6, 4)), S((4, 4))
    return [
        P("scan_rnn", _rnn, h, xs, w),
        P("scan_reverse", lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs, reverse=True),
          S((5,))),
        P("scan_unroll", lambda xs: lax.scan(lambda c, x: (c * x, c), 1.0, xs, unroll=2), S((6,))),
        P("scan_fully_unrolled", lambda xs: lax.scan(lambda c, x: (c + x, x), 0.0, xs,
                                                     unroll=True), S((4,))),
        P("scan_length_only", lambda c: lax.scan(lambda c, _: (c + 1, c), c, None, length=5),
          S((), i32)),
        P("scan_pytree_carry", lambda a, b, xs: lax.scan(
            lambda c, x: ((c[0] + x, c[1] * 2), {"y": x * c[0]}), (a, b), xs),
          S(()), S((2,), i32), S((3,))),
        P("fori_loop_static", lambda x: lax.fori_loop(0, 5, lambda i, v: v * 2.0 + i, x), S((3,))),
        P("fori_loop_dynamic", lambda n, x: lax.fori_loop(0, n, lambda i, v: v + i, x),
          S((), i32), S((3,), i32)),
        P("while_loop", lambda x: lax.while_loop(lambda v: v.sum() < 100.0, lambda v: v * 2.0, x),
          S((3,))),
        P("while_loop_tuple", lambda n: lax.while_loop(
            lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] + s[0], s[2] * 1.1), (0, 0, 1.0)),
          S((), i32)),
        P("cond", lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), S((), bool), S((3,))),
        P("cond_int_predicate", lambda p, x, y: lax.cond(p > 0, lambda a, b: a + b,
                                                         lambda a, b: a - b, x, y),
          S((), i32), S((2,)), S((2,))),
        P("cond_multiple_results", lambda p, x: lax.cond(
            p, lambda v: (v, v.sum(), 1), lambda v: (-v, v.max(), 2), x), S((), bool), S((4,))),
        P("cond_no_operands", lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0), S((), bool)),
        P("switch", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), S((), i32),
          S((3,))),
        P("switch_many", lambda i, x: lax.switch(i, [lambda v, k=k: v * k for k in range(6)], x),
          S((), i32), S((3,))),
        P("map", lambda xs: lax.map(lambda x: jnp.dot(x, x), xs), S((5, 3))),
        P("map_batched", lambda xs: lax.map(jnp.sum, xs, batch_size=2), S((6, 3))),
        P("associative_scan", lambda xs: lax.associative_scan(jnp.add, xs), S((8,))),
        P("associative_scan_reverse_max", lambda xs: lax.associative_scan(
            jnp.maximum, xs, reverse=True, axis=1), S((2, 7))),
        P("nested_fori_scan_cond", _nested, S((), i32), S(())),
        P("while_in_scan", _while_in_scan, S((4,))),
        P("switch_in_while", _cond_in_while, S((), i32), S(())),
        P("scan_of_scan", lambda xs: lax.scan(lambda c, row: (c + lax.scan(
            lambda d, v: (d + v, None), 0.0, row)[0], None), 0.0, xs), S((3, 4))),
        P("cond_in_cond", lambda a, b, x: lax.cond(
            a, lambda v: lax.cond(b, jnp.exp, jnp.log, v), lambda v: v, x),
          S((), bool), S((), bool), S((2,))),
        P("while_with_closure_consts", lambda x: lax.while_loop(
            lambda v: v[0] < 10.0, lambda v: v + jnp.arange(3.0), x), S((3,))),
        P("platform_dependent", lambda x: lax.platform_dependent(
            x, cpu=jnp.sin, default=jnp.cos), S((3,))),
    ]
