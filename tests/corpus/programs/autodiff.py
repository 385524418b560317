"""Autodiff: grad, value_and_grad, vjp, jvp, jacobians, hessians, custom rules, remat."""
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

from corpus_lib import P, S


@jax.custom_jvp
def _softclip(x):
    return jnp.tanh(x) * 3.0


@_softclip.defjvp
def _softclip_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softclip(x), t * 3.0 * (1 - jnp.tanh(x) ** 2)


@jax.custom_vjp
def _clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


_clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def _mlp_loss(params, x, y):
    w1, b1, w2 = params
    h = jax.nn.relu(x @ w1 + b1)
    return jnp.mean((h @ w2 - y) ** 2)


def _mlp_args():
    return (S((8, 16)), S((16,)), S((16, 1))), S((32, 8)), S((32, 1))


def _train_step(params, x, y):
    loss, grads = jax.value_and_grad(_mlp_loss)(params, x, y)
    return loss, jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)


def _remat_policy(x, w):
    f = jax.checkpoint(lambda v: jnp.sin(v @ w) @ w,
                       policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
    return jax.grad(lambda v: f(v).sum())(x)


def programs():
    params, x, y = _mlp_args()
    return [
        P("grad_sin", jax.grad(lambda x: jnp.sin(x).sum()), S((4,))),
        P("grad_mlp", jax.grad(_mlp_loss), params, x, y),
        P("value_and_grad_has_aux", jax.value_and_grad(
            lambda w, x: ((x @ w).sum(), x.mean()), has_aux=True), S((3, 2)), S((4, 3))),
        P("train_step_sgd", _train_step, params, x, y, donate_argnums=(0,)),
        P("vjp", lambda x, ct: jax.vjp(lambda v: jnp.exp(v) * v, x)[1](ct), S((5,)), S((5,))),
        P("jvp", lambda x, t: jax.jvp(jnp.tanh, (x,), (t,)), S((5,)), S((5,))),
        P("linearize", lambda x, t: jax.linearize(jnp.sin, x)[1](t), S((3,)), S((3,))),
        P("jacfwd", jax.jacfwd(lambda x: jnp.sin(x) * x.sum()), S((3,))),
        P("jacrev", jax.jacrev(lambda x: jnp.cumsum(x) ** 2), S((4,))),
        P("hessian", jax.hessian(lambda x: jnp.sum(x ** 3) + x[0] * x[1]), S((3,))),
        P("custom_jvp_grad", jax.grad(lambda x: _softclip(x).sum()), S((4,))),
        P("custom_jvp_primal", _softclip, S((4,))),
        P("custom_vjp_grad", jax.grad(lambda x: (_clip_gradient(x) ** 2).sum()), S((4,))),
        P("checkpoint_grad", jax.grad(lambda x: jax.checkpoint(
            lambda v: jnp.sin(jnp.sin(v)))(x).sum()), S((4,))),
        P("checkpoint_policy", _remat_policy, S((4, 4)), S((4, 4))),
        P("grad_of_scan", jax.grad(lambda w, xs: lax.scan(
            lambda h, x: (jnp.tanh(h * w + x), None), 0.0, xs)[0]), S(()), S((5,))),
        P("grad_of_fori_static", jax.grad(lambda x: lax.fori_loop(
            0, 3, lambda i, v: v * jnp.sin(v), x)), S(())),
        P("grad_of_cond", jax.grad(lambda x, p: lax.cond(p, jnp.sin, jnp.cos, x), argnums=0),
          S(()), S((), bool)),
        P("grad_of_switch", jax.grad(lambda x, i: lax.switch(i, [jnp.sin, jnp.exp], x)),
          S(()), S((), jnp.int32)),
        P("grad_of_gather_scatter", jax.grad(lambda x, i: (x[i] ** 2).sum()), S((6,)),
          S((3,), jnp.int32)),
        P("grad_of_sort", jax.grad(lambda x: jnp.sort(x)[:2].sum()), S((5,))),
        P("grad_of_conv", jax.grad(lambda w, x: lax.conv(x, w, (1, 1), "SAME").sum()),
          S((2, 1, 3, 3)), S((1, 1, 5, 5))),
        P("grad_of_cumsum_max", jax.grad(lambda x: jnp.cumsum(x).max()), S((5,))),
        P("grad_of_while_free_forward", lambda x: jax.jvp(lambda v: lax.while_loop(
            lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 2.0), (0, v))[1], (x,), (x,)),
          S(())),
        P("grad_complex_holomorphic", jax.grad(lambda z: (z * z).sum().real), S((3,), jnp.complex64)),
        P("grad_of_linalg", jax.grad(lambda a: jnp.linalg.slogdet(a)[1]), S((3, 3))),
        P("stop_gradient", jax.grad(lambda x: (x * lax.stop_gradient(x)).sum()), S((3,))),
        P("grad_argnums_tuple", jax.grad(lambda a, b: (a * b).sum(), argnums=(0, 1)), S((3,)),
          S((3,))),
        P("second_order_vmap_grad", jax.vmap(jax.grad(jax.grad(lambda x: x ** 4))), S((5,))),
        P("custom_vjp_nondiff", jax.grad(partial(lambda k, x: jnp.sum(x ** k), 3)), S((3,))),
    ]
