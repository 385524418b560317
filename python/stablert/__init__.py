"""StableRT: a PJRT plugin that runs JAX programs on the CPU under the platform name `stablert`.

JAX discovers this module through the `jax_plugins` entry point and calls `initialize()`,
which registers the plugin library. Installing StableRT does not change which backend a
program uses: JAX's own CPU backend stays the default. Opt in with `JAX_PLATFORMS=stablert`
(or `stablert,cpu`), or place work on `jax.devices("stablert")`. The number of devices is set
by `STABLERT_DEVICE_COUNT` (default 1) or the create option `device_count`
(`jax_pjrt_client_create_options="device_count:4"`). See docs/jax_integration.md.
"""
from __future__ import annotations

import logging
import os
import pathlib
import re

PLATFORM_NAME = "stablert"
# JAX's CPU backend registers at priority 0; below it, StableRT is never chosen as the default
# backend unless JAX_PLATFORMS names it (docs/decisions.md, "Installed, not default").
PRIORITY = -100
_LIBRARY_NAME = "libstablert_pjrt.so"
_CLI_NAME = "stablert"


def _read_version() -> str:
    """The project version: generated into the wheel from CMakeLists.txt's `project(VERSION)`
    (the one source of truth); in a source checkout, read from CMakeLists.txt itself."""
    try:
        from stablert._version import __version__ as version  # written by the wheel build

        return version
    except ImportError:
        pass
    cmake_lists = pathlib.Path(__file__).resolve().parents[2] / "CMakeLists.txt"
    try:
        match = re.search(r"project\(\s*stablert\s+VERSION\s+([0-9][0-9.]*)", cmake_lists.read_text())
    except OSError:
        match = None
    return match.group(1) if match else "0+unknown"


__version__ = _read_version()


def library_path() -> str:
    """Path of the plugin shared library (override with STABLERT_LIBRARY_PATH)."""
    override = os.environ.get("STABLERT_LIBRARY_PATH")
    if override:
        return override
    return str(pathlib.Path(__file__).resolve().parent / _LIBRARY_NAME)


def cli_path() -> str:
    """Path of the `stablert` command-line tool bundled in the package."""
    return str(pathlib.Path(__file__).resolve().parent / _CLI_NAME)


def _requested_platforms() -> list[str] | None:
    """The platforms the user listed in JAX_PLATFORMS / jax_platforms, or None if unset."""
    from jax._src import config

    value = config.jax_platforms.value
    if not value:
        return None
    return [platform.strip() for platform in value.split(",") if platform.strip()]


class _ExperimentalWarningFilter(logging.Filter):
    """Drops JAX's "Platform 'stablert' is experimental" warning while stablert is not selected.

    JAX (jax._src.xla_bridge._init_backend, jax 0.10.2) logs that warning through the standard
    `logging` module (logger `jax._src.xla_bridge`) whenever it creates a plugin's backend, and
    with JAX_PLATFORMS unset it creates every installed plugin's backend, used or not. A
    logging.Filter is Python's documented way to drop one record of a library's logger. When
    the user selects stablert through JAX_PLATFORMS the warning is left as JAX emits it.
    """

    _MESSAGE = f"Platform '{PLATFORM_NAME}' is experimental"

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith(self._MESSAGE):
            return True
        requested = _requested_platforms()
        return requested is not None and PLATFORM_NAME in requested


def _register(path: str) -> None:
    """Registers the plugin with JAX.

    - priority below `cpu`: installing StableRT never changes a program's default backend;
    - `options` not None: jax._src.xla_bridge.make_pjrt_c_api_client (jax 0.10.2) forwards
      `jax_pjrt_client_create_options` after `jax.distributed.initialize` only when the plugin
      was registered with options;
    - fail quietly when not selected: register_plugin registers plugins with
      `fail_quietly=False`, so a plugin whose client cannot be created (e.g. StableRT in a
      multi-process job whose other processes do not run StableRT) would take down every
      program, even one that never uses it. With JAX_PLATFORMS unset, StableRT's backend failing is logged (info) and
      reported by `jax.devices("stablert")`; with JAX_PLATFORMS naming stablert, JAX raises as
      for any requested platform (JAX ignores fail_quietly then). Adjusts
      jax._src.xla_bridge._backend_factories[...].fail_quietly (BackendRegistration,
      jax 0.10.2).
    """
    import dataclasses

    from jax._src import xla_bridge

    xla_bridge.register_plugin(PLATFORM_NAME, priority=PRIORITY, library_path=path, options={})
    registration = xla_bridge._backend_factories.get(PLATFORM_NAME)
    if registration is not None and not registration.fail_quietly:
        xla_bridge._backend_factories[PLATFORM_NAME] = dataclasses.replace(registration, fail_quietly=True)
    bridge_logger = logging.getLogger(xla_bridge.__name__)
    if not any(isinstance(f, _ExperimentalWarningFilter) for f in bridge_logger.filters):
        bridge_logger.addFilter(_ExperimentalWarningFilter())


def _cpu_backend_for_host_callbacks() -> None:
    """With JAX_PLATFORMS=stablert (no cpu), adds `cpu` after it: JAX places the operands of
    host callbacks (jax.debug.print/callback, pure_callback, io_callback) on a local CPU device
    (jax._src.callback.pure_callback_impl, io_callback_impl, jax._src.debugging.
    debug_callback_impl, jax 0.10.2) and fails without one. stablert stays first, hence the
    default backend; `JAX_PLATFORMS=stablert` behaves exactly as `stablert,cpu`."""
    from jax._src import config

    requested = _requested_platforms()
    if requested is None or PLATFORM_NAME not in requested or "cpu" in requested:
        return
    config.update("jax_platforms", ",".join([*requested, "cpu"]))


def _declare_absence_to_the_job() -> None:
    """In a jax.distributed job, a process whose JAX_PLATFORMS leaves stablert out tells the others
    through the job's key-value store ("stablert/absent/<process id>", under the "stablert:" prefix
    JAX's C API client gives the plugin's keys), so that their StableRT clients, which wait for
    every process's topology (src/runtime/topology_exchange.h), fail at once instead of after the
    timeout. JAX discovers plugins (and calls initialize) whether or not they are selected."""
    requested = _requested_platforms()
    if requested is None or PLATFORM_NAME in requested:
        return
    try:
        from jax._src import distributed

        state = distributed.global_state
        if state.client is None or state.process_id is None:
            return
        state.client.key_value_set(f"{PLATFORM_NAME}:stablert/absent/{state.process_id}",
                                   f"its JAX_PLATFORMS is '{','.join(requested)}'")
    except Exception:  # best effort: the others then wait for the timeout, as without this
        pass


def initialize() -> None:
    """Registers the StableRT PJRT plugin with JAX under the platform name `stablert`."""
    path = library_path()
    if not os.path.exists(path):
        raise FileNotFoundError(f"StableRT plugin library not found at {path}")
    _declare_absence_to_the_job()
    _register(path)
    _cpu_backend_for_host_callbacks()
    from stablert import _jax_shims

    _jax_shims.install()
