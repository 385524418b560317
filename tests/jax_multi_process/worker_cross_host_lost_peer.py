"""One process of a job in which process 1 dies (os._exit; argument "die") or stops without
dying (sleeps; argument "hang") instead of sending an array that process 0 receives through
jax.device_put: process 0 must fail reading it within STABLERT_COLLECTIVE_TIMEOUT_SECONDS with an
error naming the transfer and the process, never hang. Prints
"FAILED_AS_EXPECTED <seconds> <message>"."""
import os
import sys
import time

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import SingleDeviceSharding

jax.distributed.initialize()
assert jax.process_count() == 2
x = np.arange(64, dtype=np.float32).reshape(8, 8)
src = jax.local_devices(process_index=1)[0]
dst = jax.local_devices(process_index=0)[0]
# One transfer with both alive first.
z = jax.device_put(jax.device_put(x, SingleDeviceSharding(src)), SingleDeviceSharding(dst))
if jax.process_index() == 0:
    np.testing.assert_array_equal(np.asarray(z.addressable_data(0)), x)
# Process 1's send is asynchronous: it must not exit before process 0 has the bytes.
multihost_utils.sync_global_devices("first transfer")
print("OK first transfer", flush=True)
if jax.process_index() == 1:
    if sys.argv[1] == "hang":
        time.sleep(float(os.environ["STABLERT_COLLECTIVE_TIMEOUT_SECONDS"]) + 4)
    os._exit(3)  # dies without sending
time.sleep(1.0)
start = time.monotonic()
try:
    y = jax.device_put(x + 1, SingleDeviceSharding(src))  # process 1's array: nothing here
    np.asarray(jax.device_put(y, SingleDeviceSharding(dst)).addressable_data(0))
except Exception as error:  # noqa: BLE001 - the error's text is what is checked
    message = str(error).replace("\n", " ")
    print(f"FAILED_AS_EXPECTED {time.monotonic() - start:.1f} {message}", flush=True)
    os._exit(0)  # jax.distributed's shutdown would wait for the lost process
print("UNEXPECTED success", flush=True)
os._exit(1)
