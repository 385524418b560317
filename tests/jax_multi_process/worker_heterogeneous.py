"""One process of a job in which process 1 selects only JAX's CPU backend and process 0 leaves
JAX_PLATFORMS unset (JAX then creates every installed backend, StableRT's too). Process 0's
StableRT client must fail at once, naming process 1, instead of waiting for its topology until
the timeout; process 0 prints "FAILED_AS_EXPECTED <seconds> <message>", process 1 "OK cpu only"."""
import os
import sys
import time

import jax

# The launcher's child imported jax already (JAX_PLATFORMS read): set the config instead.
jax.config.update("jax_platforms", "cpu" if os.environ["STABLERT_LAUNCH_PROCESS_ID"] == "1" else None)

jax.distributed.initialize()
start = time.monotonic()
if jax.process_index() == 1:
    assert jax.devices()[0].platform == "cpu"
    print("OK cpu only", flush=True)
else:
    try:
        jax.devices("stablert")
        print("UNEXPECTED success", flush=True)
        os._exit(1)
    except RuntimeError as error:
        print(f"FAILED_AS_EXPECTED {time.monotonic() - start:.1f} " + str(error).replace("\n", " "), flush=True)
jax.distributed.shutdown()
sys.exit(0)
