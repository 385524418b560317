"""One process of a job whose sharded program runs in the global view (STABLERT_PARTITIONER=0):
that cannot span processes, and the execution must fail with an error saying why. Prints
"FAILED_AS_EXPECTED <message>"."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.distributed.initialize()
mesh = Mesh(np.array(jax.devices()), ("x",))
g = np.arange(jax.device_count() * 4, dtype=np.float32)
x = jax.make_array_from_callback(g.shape, NamedSharding(mesh, P("x")), lambda index: g[index])
try:
    jax.jit(lambda v: jnp.sum(v * 2), out_shardings=NamedSharding(mesh, P()))(x).block_until_ready()
except Exception as error:  # noqa: BLE001 - the error's text is what is checked
    print("FAILED_AS_EXPECTED " + str(error).replace("\n", " "), flush=True)
    jax.distributed.shutdown()  # a barrier: neither process leaves before the other is done
    sys.exit(0)
print("UNEXPECTED success", flush=True)
os._exit(1)
