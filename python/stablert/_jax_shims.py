"""Shims that make JAX treat `stablert` like the CPU-class platform it is.

JAX enables some features only for platform names it knows. Each shim below names the JAX
internal it adjusts and the JAX versions it was checked against; `install()` applies them
once and skips (with a warning) any whose target is missing in the running JAX.

Checked with: jax 0.10.2.
"""
from __future__ import annotations

import logging

logger = logging.getLogger(__name__)

PLATFORM = "stablert"
_installed = False


def _enable_donation() -> None:
    """jax._src.interpreters.mlir._platforms_with_donation (jax 0.10.2).

    JAX lowers `donate_argnums` to `tf.aliasing_output` only for the platforms listed there;
    for others it drops the donation with a warning. StableRT consumes donated buffers.
    """
    from jax._src.interpreters import mlir

    if PLATFORM not in mlir._platforms_with_donation:
        mlir._platforms_with_donation.append(PLATFORM)


def _enable_compilation_cache() -> None:
    """jax._src.compilation_cache.is_cache_used (jax 0.10.2).

    The persistent compilation cache is only used for tpu/gpu/cpu/neuron backends. StableRT
    serializes executables (PJRT_Executable_Serialize), so it takes part like `cpu`.
    """
    from jax._src import compilation_cache

    original = compilation_cache.is_cache_used
    if getattr(original, "_stablert_shim", False):
        return

    class _CpuClassBackend:
        platform = "cpu"

        def __init__(self, backend):
            self._backend = backend

        def __getattr__(self, name):
            return getattr(self._backend, name)

    def is_cache_used(backend):
        if getattr(backend, "platform", None) == PLATFORM:
            backend = _CpuClassBackend(backend)
        return original(backend)

    is_cache_used._stablert_shim = True
    compilation_cache.is_cache_used = is_cache_used


_SHIMS = (_enable_donation, _enable_compilation_cache)


def install() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    for shim in _SHIMS:
        try:
            shim()
        except (ImportError, AttributeError) as error:  # a JAX version without the target
            logger.warning("StableRT: JAX shim %s not applied: %s", shim.__name__, error)
