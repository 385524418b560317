"""The run-splitting variables of tests/jax/conftest.py, which test.sh and the sanitized run use:
STABLERT_TEST_SHARD=i/n splits the selected cases into disjoint runs that together take all of
them, and STABLERT_TEST_SAMPLE=k/n keeps part of each test function's cases but every function."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "ops", "test_sort.py")


def collected(**env_vars):
    env = {k: v for k, v in os.environ.items() if k not in ("STABLERT_TEST_SHARD", "STABLERT_TEST_SAMPLE")}
    env.update(env_vars)
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", TARGET],
                         env=env, capture_output=True, text=True, timeout=300, cwd=os.path.dirname(HERE))
    return out, [line for line in out.stdout.splitlines() if "::" in line]


@pytest.fixture(scope="module")
def every():
    return collected()[1]


def function_of(nodeid):
    return nodeid.split("[")[0]


def test_shards_are_disjoint_and_take_every_case(every):
    _, first = collected(STABLERT_TEST_SHARD="0/2")
    _, second = collected(STABLERT_TEST_SHARD="1/2")
    assert len(every) > 10 and first and second
    assert not set(first) & set(second)
    assert sorted(first + second) == sorted(every)


def test_sample_keeps_every_function_and_half_of_the_cases(every):
    _, sample = collected(STABLERT_TEST_SAMPLE="0/2")
    assert set(sample) <= set(every)
    assert {function_of(n) for n in sample} == {function_of(n) for n in every}
    assert len(every) // 2 <= len(sample) < len(every)
    _, halves = collected(STABLERT_TEST_SAMPLE="0/2", STABLERT_TEST_SHARD="0/2")
    _, others = collected(STABLERT_TEST_SAMPLE="0/2", STABLERT_TEST_SHARD="1/2")
    assert sorted(halves + others) == sorted(sample)


@pytest.mark.parametrize("variable", ["STABLERT_TEST_SHARD", "STABLERT_TEST_SAMPLE"])
def test_malformed_values_are_named(variable):
    out, _ = collected(**{variable: "2/2"})
    assert out.returncode != 0
    assert f"{variable}='2/2': expected 'i/n' with 0 <= i < n" in out.stdout + out.stderr
