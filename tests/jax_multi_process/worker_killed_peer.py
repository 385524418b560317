"""One process of a job in which the last process dies (os._exit; argument "die") or stops
without dying (sleeps; argument "hang") before a collective: the others must fail that
collective within STABLERT_COLLECTIVE_TIMEOUT_SECONDS with an error naming the process and the
collective, never hang. Prints "FAILED_AS_EXPECTED <seconds> <message>"."""
import os
import sys
import time

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.distributed.initialize()
n = jax.device_count()
mesh = Mesh(np.array(jax.devices()), ("x",))
g = np.ones((n * 4, 4), np.float32)
x = jax.make_array_from_callback(g.shape, NamedSharding(mesh, P("x")), lambda index: g[index])
f = jax.jit(jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"), out_specs=P()))
np.testing.assert_array_equal(np.asarray(f(x).addressable_data(0)), np.full((4, 4), n))  # all alive
print("OK first collective", flush=True)
if jax.process_index() == jax.process_count() - 1:
    if sys.argv[1] == "hang":
        time.sleep(float(os.environ["STABLERT_COLLECTIVE_TIMEOUT_SECONDS"]) + 4)
    os._exit(3)  # dies without shutting down
time.sleep(1.0)
start = time.monotonic()
try:
    f(x + 1).block_until_ready()
except Exception as error:  # noqa: BLE001 - the error's text is what is checked
    message = str(error).replace("\n", " ")
    print(f"FAILED_AS_EXPECTED {time.monotonic() - start:.1f} {message}", flush=True)
    os._exit(0)  # jax.distributed's shutdown would wait for the dead process
print("UNEXPECTED success", flush=True)
os._exit(1)
