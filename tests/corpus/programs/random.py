"""jax.random: key implementations, splitting, every sampler."""
import jax
import jax.numpy as jnp

from corpus_lib import P, S, f32, key_arg, raw_key_arg

SAMPLERS = {
    "uniform": lambda k: jax.random.uniform(k, (3, 4), minval=-1.0, maxval=2.0),
    "normal": lambda k: jax.random.normal(k, (5,)),
    "bernoulli": lambda k: jax.random.bernoulli(k, 0.3, (6,)),
    "categorical": lambda k: jax.random.categorical(k, jnp.log(jnp.arange(1.0, 5.0)), shape=(3,)),
    "permutation": lambda k: jax.random.permutation(k, 10),
    "choice": lambda k: jax.random.choice(k, 10, (4,), replace=False),
    "randint": lambda k: jax.random.randint(k, (4,), 0, 100),
    "gamma": lambda k: jax.random.gamma(k, jnp.array([0.5, 1.0, 3.0])),
    "beta": lambda k: jax.random.beta(k, 2.0, 3.0, (3,)),
    "dirichlet": lambda k: jax.random.dirichlet(k, jnp.ones(4)),
    "truncated_normal": lambda k: jax.random.truncated_normal(k, -1.0, 1.0, (4,)),
    "poisson": lambda k: jax.random.poisson(k, 3.0, (4,)),
    "exponential": lambda k: jax.random.exponential(k, (4,)),
    "laplace": lambda k: jax.random.laplace(k, (4,)),
    "gumbel": lambda k: jax.random.gumbel(k, (4,)),
    "cauchy": lambda k: jax.random.cauchy(k, (4,)),
    "t": lambda k: jax.random.t(k, 3.0, (4,)),
    "bits": lambda k: jax.random.bits(k, (4,), jnp.uint8),
    "orthogonal": lambda k: jax.random.orthogonal(k, 3),
    "multivariate_normal": lambda k: jax.random.multivariate_normal(
        k, jnp.zeros(3), jnp.eye(3)),
    "rademacher": lambda k: jax.random.rademacher(k, (4,)),
    "maxwell": lambda k: jax.random.maxwell(k, (4,)),
    "binomial": lambda k: jax.random.binomial(k, 10.0, 0.4, (3,)),
}


def _unpartitionable_normal(k):
    with jax.threefry_partitionable(False):
        return jax.random.normal(k, (8,))


def programs():
    out = [P(f"sample_{name}", fn, key_arg()) for name, fn in SAMPLERS.items()]
    out += [
        P("raw_key_uniform", lambda k: jax.random.uniform(k, (4,)), raw_key_arg()),
        P("key_from_seed", lambda s: jax.random.key_data(jax.random.key(s)), S((), jnp.int32)),
        P("split_fold_in", lambda k: jax.random.key_data(
            jax.random.fold_in(jax.random.split(k, 3)[1], 7)), key_arg()),
        P("rbg_key", lambda s: jax.random.normal(jax.random.key(s, impl="rbg"), (4,)),
          S((), jnp.int32)),
        P("unsafe_rbg_key", lambda s: jax.random.uniform(
            jax.random.key(s, impl="unsafe_rbg"), (4,)), S((), jnp.int32)),
        P("threefry_not_partitionable", _unpartitionable_normal, key_arg()),
        P("dropout", lambda k, x: jnp.where(jax.random.bernoulli(k, 0.9, x.shape), x / 0.9, 0.0),
          key_arg(), S((4, 8))),
        P("vmap_split", lambda k: jax.random.key_data(jax.vmap(jax.random.split)(
            jax.random.split(k, 4))), key_arg()),
        P("uniform_f16", lambda k: jax.random.uniform(k, (4,), jnp.float16), key_arg()),
        P("uniform_bf16", lambda k: jax.random.normal(k, (4,), jnp.bfloat16), key_arg()),
        P("shuffle_rows", lambda k, x: jax.random.permutation(k, x, axis=0), key_arg(),
          S((6, 2), f32)),
    ]
    return out
