"""A first JAX program on StableRT: run with JAX_PLATFORMS=stablert."""
import jax
import jax.numpy as jnp
import numpy as np


def main() -> None:
    print("devices:", jax.devices())
    print("jnp.add(1, 1) =", jnp.add(1, 1))
    print("jax.jit(lambda x: x * 2)(1.) =", jax.jit(lambda x: x * 2)(1.0))
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = jax.device_put(a)
    print("device_put round trip equal:", np.array_equal(np.asarray(x), a), "on", x.devices())
    f = jax.jit(lambda x, y: jnp.maximum(x * y + 1.0, 0.0))
    print("jit(max(x*y+1, 0)) =", f(x, x))


if __name__ == "__main__":
    main()
