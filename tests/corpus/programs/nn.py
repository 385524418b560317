"""jax.nn: activations, normalizations, attention, one-hot, initializers."""
import jax
import jax.numpy as jnp

from corpus_lib import P, S, i32

ACTIVATIONS = ["relu", "relu6", "sigmoid", "softplus", "soft_sign", "silu", "swish",
               "log_sigmoid", "leaky_relu", "hard_sigmoid", "hard_silu", "hard_tanh", "elu",
               "celu", "selu", "gelu", "glu", "squareplus", "mish", "sparse_plus",
               "sparse_sigmoid", "tanh", "identity"]


def programs():
    out = [P(f"act_{name}", lambda x, name=name: getattr(jax.nn, name)(x), S((4, 6)))
           for name in ACTIVATIONS]
    q, kv = S((2, 5, 4, 8)), S((2, 7, 4, 8))
    out += [
        P("gelu_exact", lambda x: jax.nn.gelu(x, approximate=False), S((4, 6))),
        P("softmax", lambda x: jax.nn.softmax(x, axis=-1), S((3, 10))),
        P("softmax_where", lambda x, m: jax.nn.softmax(x, where=m), S((3, 10)), S((3, 10), bool)),
        P("log_softmax", lambda x: jax.nn.log_softmax(x, axis=0), S((3, 10))),
        P("logsumexp", lambda x: jax.nn.logsumexp(x, axis=1, keepdims=True), S((3, 10))),
        P("standardize", lambda x: jax.nn.standardize(x, axis=-1), S((4, 8))),
        P("one_hot", lambda i: jax.nn.one_hot(i, 10), S((5,), i32)),
        P("one_hot_int8", lambda i: jax.nn.one_hot(i, 4, dtype=jnp.int8, axis=0), S((3,), i32)),
        P("dot_product_attention", lambda q, k, v: jax.nn.dot_product_attention(q, k, v),
          q, kv, kv),
        P("dot_product_attention_causal", lambda q, k, v: jax.nn.dot_product_attention(
            q, k, v, is_causal=True), q, q, q),
        P("dot_product_attention_bias_mask", lambda q, k, v, b, m: jax.nn.dot_product_attention(
            q, k, v, bias=b, mask=m), q, kv, kv, S((2, 4, 5, 7)), S((2, 4, 5, 7), bool)),
        P("initializer_glorot", lambda k: jax.nn.initializers.glorot_normal()(k, (4, 5)),
          S((2,), jnp.uint32)),
        P("initializer_orthogonal", lambda k: jax.nn.initializers.orthogonal()(k, (4, 4)),
          S((2,), jnp.uint32)),
        P("layer_norm_mlp", lambda x, w1, w2: jax.nn.gelu(
            jax.nn.standardize(x, axis=-1) @ w1) @ w2, S((8, 16)), S((16, 32)), S((32, 16))),
    ]
    return out
