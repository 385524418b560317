#!/usr/bin/env python3
"""Writes the read benchmark's programs as JAX's PJRT client sends them (VHLO 1.17.0, mixed
serialization, as tests/corpus/generate_corpus.py):

  OUT_DIR/transformer_unrolled.mlirbc   training step of a decoder-only transformer whose
                                        layers are unrolled (no scan): several MB, ~100k ops
  OUT_DIR/training_step.mlirbc          a typical training step: a 2-layer transformer with
                                        Adam, as a user's jitted `train_step`
  OUT_DIR/<name>.mlir                   each artifact as MLIR text (the pretty form with
                                        locations, as `as_text(debug_info=True)` prints it)

usage: make_large_program.py OUT_DIR [--layers N]   (default 768 layers, ~3 MB)
"""
import argparse
import os
import pathlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax._src.lib import _jax  # noqa: E402
from jaxlib.mlir.dialects import stablehlo  # noqa: E402

D, HEADS, FF, SEQ, BATCH, VOCAB = 64, 4, 256, 32, 4, 512


def init(key, layers):
    def dense(k, n, m):
        return jax.random.normal(k, (n, m), jnp.float32) / jnp.sqrt(n)
    keys = iter(jax.random.split(key, 6 * layers + 2))
    blocks = [{"qkv": dense(next(keys), D, 3 * D), "out": dense(next(keys), D, D),
               "up": dense(next(keys), D, FF), "down": dense(next(keys), FF, D),
               "ln1": jnp.ones(D), "ln2": jnp.ones(D)} for _ in range(layers)]
    return {"embed": dense(next(keys), VOCAB, D), "blocks": blocks,
            "head": dense(next(keys), D, VOCAB)}


def layer_norm(x, scale):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale


def attention(x, p):
    b, s, _ = x.shape
    q, k, v = jnp.split(x @ p["qkv"], 3, axis=-1)
    heads = lambda t: t.reshape(b, s, HEADS, D // HEADS).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = heads(q), heads(k), heads(v)
    logits = q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(D // HEADS)
    mask = jnp.tril(jnp.ones((s, s), bool))
    weights = jax.nn.softmax(jnp.where(mask, logits, -1e9), axis=-1)
    return (weights @ v).transpose(0, 2, 1, 3).reshape(b, s, D) @ p["out"]


def loss_fn(params, tokens):
    x = params["embed"][tokens[:, :-1]]
    for p in params["blocks"]:  # unrolled: one copy of the block per layer
        x = x + attention(layer_norm(x, p["ln1"]), p)
        x = x + jax.nn.gelu(layer_norm(x, p["ln2"]) @ p["up"]) @ p["down"]
    logits = x @ params["head"]
    labels = jax.nn.one_hot(tokens[:, 1:], VOCAB)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))


def sgd_step(params, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    return loss, jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)


def adam_step(params, m, v, step, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    m = jax.tree.map(lambda a, g: 0.9 * a + 0.1 * g, m, grads)
    v = jax.tree.map(lambda a, g: 0.999 * a + 0.001 * g * g, v, grads)
    t = step + 1
    scale = jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    params = jax.tree.map(lambda p, a, b: p - 1e-3 * scale * a / (jnp.sqrt(b) + 1e-8),
                          params, m, v)
    return loss, params, m, v, t


def serialize(lowered):
    module = lowered.compiler_ir("stablehlo")
    target = stablehlo.get_current_version()
    return _jax.mlir.serialize_portable_artifact(module, target, True)


def write_text(path, data):
    # The artifact's program as MLIR text: the text reader's input for the same program.
    module = _jax.mlir.deserialize_portable_artifact(data, context=jax_mlir.make_ir_context())
    path.write_text(module.operation.get_asm(enable_debug_info=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--layers", type=int, default=768)
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    tokens = jax.ShapeDtypeStruct((BATCH, SEQ + 1), jnp.int32)
    abstract = lambda tree: jax.tree.map(  # noqa: E731
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), tree)

    big = abstract(jax.eval_shape(lambda: init(jax.random.key(0), args.layers)))
    data = serialize(jax.jit(sgd_step, donate_argnums=0).lower(big, tokens))
    (args.out_dir / "transformer_unrolled.mlirbc").write_bytes(data)
    write_text(args.out_dir / "transformer_unrolled.mlir", data)
    print(f"transformer_unrolled.mlirbc: {args.layers} layers, {len(data)} bytes")

    small = abstract(jax.eval_shape(lambda: init(jax.random.key(0), 2)))
    step = jax.ShapeDtypeStruct((), jnp.int32)
    data = serialize(jax.jit(adam_step, donate_argnums=(0, 1, 2)).lower(
        small, small, small, step, tokens))
    (args.out_dir / "training_step.mlirbc").write_bytes(data)
    write_text(args.out_dir / "training_step.mlir", data)
    print(f"training_step.mlirbc: 2 layers with Adam, {len(data)} bytes")


if __name__ == "__main__":
    main()
