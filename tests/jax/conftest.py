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


def _shard_of_run():
    """STABLERT_TEST_SHARD=i/n: this run takes every n-th selected test from the i-th (0-based)."""
    value = os.environ.get("STABLERT_TEST_SHARD", "")
    if not value:
        return None
    parts = value.split("/")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or not 0 <= int(parts[0]) < int(parts[1]):
        raise pytest.UsageError(f"STABLERT_TEST_SHARD={value!r}: expected 'i/n' with 0 <= i < n, e.g. '0/2'")
    return int(parts[0]), int(parts[1])


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected, so the shards stay even
def pytest_collection_modifyitems(config, items):
    shard = _shard_of_run()
    if shard is None:
        return
    index, count = shard
    kept = [item for i, item in enumerate(items) if i % count == index]
    dropped = [item for i, item in enumerate(items) if i % count != index]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
