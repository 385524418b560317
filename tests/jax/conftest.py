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


def _fraction_from(variable, example):
    """Reads VARIABLE=i/n (0 <= i < n); None when unset."""
    value = os.environ.get(variable, "")
    if not value:
        return None
    parts = value.split("/")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or not 0 <= int(parts[0]) < int(parts[1]):
        raise pytest.UsageError(f"{variable}={value!r}: expected 'i/n' with 0 <= i < n, e.g. '{example}'")
    return int(parts[0]), int(parts[1])


def _shard_of_run():
    """STABLERT_TEST_SHARD=i/n: this run takes every n-th selected test from the i-th (0-based)."""
    return _fraction_from("STABLERT_TEST_SHARD", "0/2")


def _sample_of_run():
    """STABLERT_TEST_SAMPLE=k/n: of each test function's selected cases, those whose position j
    (0-based, collection order) has j % n <= k, so every function keeps at least its first case."""
    return _fraction_from("STABLERT_TEST_SAMPLE", "0/2")


def _deselect(config, items, keep):
    kept = [item for i, item in enumerate(items) if keep(i, item)]
    dropped = [item for i, item in enumerate(items) if not keep(i, item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected, so the shards stay even
def pytest_collection_modifyitems(config, items):
    sample = _sample_of_run()
    if sample is not None:
        last, every = sample
        cases_seen, sampled = {}, []
        for item in items:
            function = item.nodeid.split("[")[0]
            position = cases_seen.get(function, 0)
            cases_seen[function] = position + 1
            sampled.append(position % every <= last)
        _deselect(config, items, lambda i, item: sampled[i])
    shard = _shard_of_run()
    if shard is not None:
        index, count = shard
        _deselect(config, items, lambda i, item: i % count == index)
