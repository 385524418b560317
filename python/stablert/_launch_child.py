"""One process of a `python -m stablert.launch` job: registers the "stablert_launch" JAX
cluster environment (so that `jax.distributed.initialize()` without arguments finds the
coordinator, process count and process id the launcher put in the environment), then runs the
script as __main__ with its arguments."""
from __future__ import annotations

import os
import runpy
import sys


def _register_cluster() -> None:
    from jax._src.clusters import ClusterEnv  # subclasses register themselves (jax 0.10.2)

    from stablert.launch import COORDINATOR, NUM_PROCESSES, PROCESS_ID

    class StableRtLaunchCluster(ClusterEnv):
        name = "stablert_launch"

        @classmethod
        def is_env_present(cls) -> bool:
            return all(key in os.environ for key in (COORDINATOR, NUM_PROCESSES, PROCESS_ID))

        @classmethod
        def get_coordinator_address(cls, timeout_secs, override_coordinator_port=None) -> str:
            return os.environ[COORDINATOR]

        @classmethod
        def get_process_count(cls) -> int:
            return int(os.environ[NUM_PROCESSES])

        @classmethod
        def get_process_id(cls) -> int:
            return int(os.environ[PROCESS_ID])

        @classmethod
        def get_local_process_id(cls):
            return None  # every StableRT device of the process stays visible


def main() -> None:
    if len(sys.argv) < 2:
        sys.stderr.write("usage: python -m stablert._launch_child script.py args...\n")
        sys.exit(2)
    _register_cluster()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
