"""pytest setup for multi-device tests: 4 StableRT devices and 4 CPU devices in one process.

Run as its own pytest session (test.sh does): the device counts are fixed when JAX first
creates its backends.
"""
import os

os.environ["STABLERT_DEVICE_COUNT"] = os.environ.get("STABLERT_DEVICE_COUNT", "4")
os.environ.setdefault("JAX_PLATFORMS", "cpu,stablert")
os.environ.setdefault("JAX_NUM_CPU_DEVICES", os.environ["STABLERT_DEVICE_COUNT"])

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from jax.sharding import Mesh  # noqa: E402


@pytest.fixture(scope="session")
def device_count():
    return int(os.environ["STABLERT_DEVICE_COUNT"])


def meshes(platform, shape, names):
    devices = np.array(jax.devices(platform)[: int(np.prod(shape))]).reshape(shape)
    return Mesh(devices, names)


@pytest.fixture(scope="session")
def mesh_pair():
    """(stablert mesh, cpu mesh) of the same 2-D shape, auto axis types."""
    def make(shape, names):
        return meshes("stablert", shape, names), meshes("cpu", shape, names)
    return make
