"""pytest setup for the JAX tests: both StableRT and JAX's own CPU backend in one process.

JAX's CPU backend is the reference every StableRT result is compared with.
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu,stablert")
os.environ.setdefault("JAX_ENABLE_X64", "1")

import jax  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(scope="session")
def stablert_device():
    return jax.devices("stablert")[0]


@pytest.fixture(scope="session")
def cpu_device():
    return jax.devices("cpu")[0]
