"""StableRT: a PJRT plugin that runs JAX programs on the CPU under the platform name `stablert`.

JAX discovers this module through the `jax_plugins` entry point and calls `initialize()`,
which registers the plugin library. Select it with `JAX_PLATFORMS=stablert` or
`jax.devices("stablert")`. The number of devices is set by `STABLERT_DEVICE_COUNT` (default 1)
or the create option `device_count` (`jax_pjrt_client_create_options="device_count:4"`).
"""
from __future__ import annotations

import os
import pathlib

PLATFORM_NAME = "stablert"
_LIBRARY_NAME = "libstablert_pjrt.so"


def library_path() -> str:
    """Path of the plugin shared library (override with STABLERT_LIBRARY_PATH)."""
    override = os.environ.get("STABLERT_LIBRARY_PATH")
    if override:
        return override
    return str(pathlib.Path(__file__).resolve().parent / _LIBRARY_NAME)


def initialize() -> None:
    """Registers the StableRT PJRT plugin with JAX under the platform name `stablert`."""
    from jax._src import xla_bridge  # JAX's plugin registry; checked with jax 0.10.2

    path = library_path()
    if not os.path.exists(path):
        raise FileNotFoundError(f"StableRT plugin library not found at {path}")
    xla_bridge.register_plugin(PLATFORM_NAME, library_path=path)
    from stablert import _jax_shims

    _jax_shims.install()
