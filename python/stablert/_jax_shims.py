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


# Linear algebra primitives whose only lowering JAX registers per platform (or whose CPU rule
# computes what JAX's CPU backend returns): stablert lowers them with JAX's own "cpu" rules,
# which emit LAPACK custom calls (`lapack_<p><routine>_ffi`) that StableRT implements with
# LAPACK (src/kernels/linalg_custom_calls.cc). cholesky and triangular_solve are not listed:
# their generic rules emit stablehlo.cholesky / stablehlo.triangular_solve, which StableRT
# runs natively with the same LAPACK/BLAS routines.
_LINALG_CPU_RULES = (
    "eigh", "eig", "schur", "hessenberg", "tridiagonal", "geqp3", "svd", "lu", "geqrf",
    "householder_product", "tridiagonal_solve",
)


def _use_cpu_linalg_lowerings() -> None:
    """jax._src.lax.linalg: the `platform="cpu"` lowering rules of the primitives in
    _LINALG_CPU_RULES, found in jax._src.interpreters.mlir._platform_specific_lowerings["cpu"]
    and registered for stablert (jax 0.10.2).

    Without them eigh, svd, eig, schur, hessenberg and tridiagonal have no lowering on
    stablert at all, and lu/qr/householder_product/tridiagonal_solve take generic paths whose
    results differ from JAX's CPU backend (other pivots, other algorithms).
    tridiagonal_solve(perturb_singular=True) calls jaxlib's own (non-LAPACK) target
    `tridiagonal_solve_perturbed_ffi`, which StableRT implements too.
    """
    from jax._src.interpreters import mlir
    from jax._src.lax import linalg

    cpu_rules = mlir._platform_specific_lowerings["cpu"]
    missing = []
    for name in _LINALG_CPU_RULES:
        prim = getattr(linalg, f"{name}_p", None)
        entry = cpu_rules.get(prim) if prim is not None else None
        if entry is None:
            missing.append(name)
            continue
        mlir.register_lowering(prim, entry.rule, platform=PLATFORM, inline=entry.inline)
    if missing:
        logger.warning("StableRT: no JAX CPU lowering found for %s", ", ".join(missing))


def _with_stablert_as_cpu(platforms):
    """Adds stablert to the branch that names cpu, unless a branch names stablert."""
    if platforms is None or any(ps is not None and PLATFORM in ps for ps in platforms):
        return platforms
    return tuple(ps + (PLATFORM,) if ps is not None and "cpu" in ps else ps for ps in platforms)


def _platform_dependent_takes_cpu_branch() -> None:
    """jax._src.lax.control_flow.conditionals: the lowering rules of platform_index_p and of
    cond_p with `branches_platforms` (jax 0.10.2).

    `lax.platform_dependent(..., cpu=f, default=g)` picks its branch by the lowering platform
    name; stablert would take `default` (or fail without one). Both rules see stablert added
    to the branch that lists cpu, so stablert takes the `cpu=` branch; a branch that names
    stablert explicitly still wins.
    """
    from jax._src.interpreters import mlir
    from jax._src.lax.control_flow import conditionals

    index_rule = mlir._lowerings[conditionals.platform_index_p]
    cond_rule = mlir._lowerings[conditionals.cond_p]
    if getattr(index_rule.rule, "_stablert_shim", False):
        return

    def platform_index_lowering(ctx, *args, platforms, **params):
        return index_rule.rule(ctx, *args, platforms=_with_stablert_as_cpu(platforms), **params)

    def cond_lowering(ctx, *args, **params):
        if params.get("branches_platforms") is not None:
            params["branches_platforms"] = _with_stablert_as_cpu(params["branches_platforms"])
        return cond_rule.rule(ctx, *args, **params)

    platform_index_lowering._stablert_shim = True
    cond_lowering._stablert_shim = True
    mlir.register_lowering(conditionals.platform_index_p, platform_index_lowering, inline=index_rule.inline)
    mlir.register_lowering(conditionals.cond_p, cond_lowering, inline=cond_rule.inline)


def _cpu_rules_as_fallback() -> None:
    """jax._src.interpreters.mlir._get_lowering_rules (jax 0.10.2).

    A primitive whose lowering rules are all platform-specific and include one for "cpu" but
    none for stablert (nor a generic rule) would fail with "MLIR translation rule for
    primitive ... not found for platform stablert". stablert computes what the CPU backend
    computes, so it lowers such primitives with their "cpu" rule. A rule registered for
    stablert, or a generic rule, still wins; a CPU rule that emits a custom call StableRT does
    not implement fails at compile time naming the target.
    """
    from jax._src.interpreters import mlir

    get_rules = mlir._get_lowering_rules
    if getattr(get_rules, "_stablert_shim", False):
        return

    def get_lowering_rules(ctx, primitive, eqn_ctx):
        platform_rules, default_rule, inline = get_rules(ctx, primitive, eqn_ctx)
        if default_rule is None and PLATFORM not in platform_rules and PLATFORM in ctx.platforms:
            entry = mlir._platform_specific_lowerings["cpu"].get(primitive)
            if entry is not None:
                platform_rules = {**platform_rules, PLATFORM: entry.rule}
                inline = inline and entry.inline
        return platform_rules, default_rule, inline

    get_lowering_rules._stablert_shim = True
    mlir._get_lowering_rules = get_lowering_rules


class _ModuleContextAsTpu:
    """A view of a JAX ModuleContext whose lowering platform reads "tpu"; everything else
    (the channel counter, the host callback list, the backend) is the wrapped context's own."""

    platforms = ("tpu",)

    def __init__(self, module_context):
        self._module_context = module_context

    def get_backend(self, optional: bool = False):
        return self._module_context.get_backend(optional)

    def __getattr__(self, name):
        return getattr(self._module_context, name)


SHARD_LAYOUT_TARGET = "stablert.shard_layout"


def _partitioned(ctx, callback, operands, operand_avals, num_devices):
    """A partitioned callback on a sharded jit, as one unpartitioned callback on the whole
    arrays. Each operand is followed by the custom call `stablert.shard_layout` of it: an
    int64[num_devices, 2, rank] StableRT fills at compile time with every device's block
    (start, then extent) of the operand as the program partitions it. The Python side cuts
    the blocks and calls `callback` once per device with that device's shards, as XLA calls
    a partitioned callback on every device."""
    import numpy as np
    from jax._src import core
    from jax._src.interpreters import mlir

    layouts, layout_avals = [], []
    for operand, aval in zip(operands, operand_avals):
        layout_aval = core.ShapedArray((num_devices, 2, len(aval.shape)), np.int64)
        layout_type = mlir.aval_to_ir_type(ctx.module_context, layout_aval)
        layouts.append(mlir.custom_call(SHARD_LAYOUT_TARGET, result_types=[layout_type], operands=[operand]).results[0])
        layout_avals.append(layout_aval)
    count = len(operands)

    def per_device(*args):
        arrays, blocks = args[:count], args[count:]
        for device in range(num_devices):
            shards = [array[tuple(slice(int(start), int(start) + int(size))
                                  for start, size in zip(block[device][0], block[device][1]))]
                      for array, block in zip(arrays, blocks)]
            callback(*shards)
        return ()

    return per_device, [*operands, *layouts], [*operand_avals, *layout_avals]


def _host_callbacks_by_send_and_recv() -> None:
    """jax._src.callback.emit_python_callback and the lowerings of debug_callback_p and
    debug_print_p (jax 0.10.2).

    JAX refuses host callbacks on platforms other than cpu/cuda/rocm/tpu. Its CPU/GPU path is
    a custom call whose Python callable reaches the runtime as FFI user data only for XLA's own
    CPU/GPU clients; its TPU path is plain PJRT: `stablehlo.send`/`stablehlo.recv` host
    transfers whose channels the client serves through PJRT_ExecuteOptions.send_callbacks /
    recv_callbacks. On stablert, emit_python_callback takes the TPU path: JAX's own function
    runs with a view of the module context whose platform reads "tpu" (same channel counter,
    same host callback list, same backend). Partitioned callbacks (`partitioned=True`, which
    JAX refuses on TPU) on a sharded jit are called once per device with its shards, cut on
    the host from layouts StableRT computes (see _partitioned). debug_callback_p and
    debug_print_p get JAX's lowering rules, uncacheable like on TPU (their channel ids differ
    per lowering).
    """
    import dataclasses

    from jax._src import callback as callback_module
    from jax._src import debugging, sharding_impls
    from jax._src.interpreters import mlir

    original = callback_module.emit_python_callback
    if getattr(original, "_stablert_shim", False):
        return

    def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, **kwargs):
        if tuple(ctx.module_context.platforms) != (PLATFORM,):
            return original(ctx, callback, token, operands, operand_avals, result_avals, **kwargs)
        ctx = dataclasses.replace(ctx, module_context=_ModuleContextAsTpu(ctx.module_context))
        if not kwargs.get("partitioned", False):
            return original(ctx, callback, token, operands, operand_avals, result_avals, **kwargs)
        if result_avals:
            raise ValueError("Partitioned callback not supported with return values.")
        kwargs["partitioned"] = False
        axis_context = ctx.module_context.axis_context
        num_devices = getattr(axis_context, "num_devices", 1)
        if isinstance(axis_context, sharding_impls.ShardingContext) and num_devices > 1:
            callback, operands, operand_avals = _partitioned(ctx, callback, list(operands), list(operand_avals),
                                                             num_devices)
        # Elsewhere (one device, or a shard_map body) the callback already sees what the device holds.
        return original(ctx, callback, token, operands, operand_avals, result_avals, **kwargs)

    emit_python_callback._stablert_shim = True
    callback_module.emit_python_callback = emit_python_callback
    mlir.emit_python_callback = emit_python_callback
    import jax.interpreters.mlir as public_mlir

    public_mlir.emit_python_callback = emit_python_callback
    mlir.register_lowering(debugging.debug_callback_p, debugging.debug_callback_lowering, platform=PLATFORM,
                           cacheable=False)
    mlir.register_lowering(debugging.debug_print_p, debugging.debug_print_lowering_rule, platform=PLATFORM,
                           cacheable=False)


def _hlo_sharding_from_layout(table, shape):
    """The HloSharding whose tiles are the blocks of a stablert.shard_layout table
    (table[partition] = (start, extent)), devices named by partition index."""
    import numpy as np
    from jax._src.lib import xla_client as xc

    table = np.asarray(table)
    partitions = table.shape[0]
    tiles = [int(d // e) if e else 1 for d, e in zip(shape, table[0][1])]
    if all(t == 1 for t in tiles):
        return xc.HloSharding.replicate()
    replication = partitions // int(np.prod(tiles))
    order = sorted(range(partitions), key=lambda p: (
        tuple(int(s // e) if e else 0 for s, e in zip(table[p][0], table[p][1])), p))
    proto = xc.OpSharding()
    proto.type = xc.OpSharding.Type.OTHER
    proto.tile_assignment_dimensions = tiles + ([replication] if replication > 1 else [])
    proto.tile_assignment_devices = order
    proto.replicate_on_last_tile_dim = replication > 1
    return xc.HloSharding.from_proto(proto)


def _inspect_sharding_from_layouts() -> None:
    """jax._src.debugging.inspect_sharding_p (jax 0.10.2): `jax.debug.inspect_array_sharding`
    and `visualize_array_sharding` inside jit.

    On several devices JAX's rule emits the custom call `InspectSharding`, whose backend_config
    hands XLA's SPMD partitioner a Python object to call with the sharding it picked; a plugin
    cannot call it. On stablert the value's `stablert.shard_layout` table (every device's
    block, compiled by StableRT from the sharding it gives the value) goes to a host callback
    that builds the sharding from it and calls the user's callback, on the first run of the
    executable (XLA calls it once, while compiling). In a shard_map body (manual axes) the
    callback is called at lowering with PartitionSpec(), what XLA reports for manual values.
    One device: JAX's own rule (it calls back at lowering).
    """
    import numpy as np
    from jax._src import core, debugging, sharding_impls
    from jax._src import mesh as mesh_lib
    from jax._src.interpreters import mlir

    jax_rule = mlir._lowerings[debugging.inspect_sharding_p]

    def rule(ctx, value, *, callback):
        axis_context = ctx.module_context.axis_context
        if isinstance(axis_context, sharding_impls.SPMDAxisContext) and len(axis_context.mesh.devices.flat) > 1:
            callback(sharding_impls.NamedSharding(axis_context.mesh, sharding_impls.PartitionSpec()))
            return []
        if not isinstance(axis_context, sharding_impls.ShardingContext) or axis_context.num_devices <= 1:
            return jax_rule.rule(ctx, value, callback=callback)
        devices = axis_context.device_assignment
        mesh = mesh_lib.thread_resources.env.physical_mesh
        if axis_context.abstract_mesh is not None:
            am = axis_context.abstract_mesh
            mesh = mesh_lib.Mesh(np.array(devices).reshape(am.axis_sizes), am.axis_names)
        aval = ctx.avals_in[0]
        layout_aval = core.ShapedArray((len(devices), 2, len(aval.shape)), np.int64)
        layout = mlir.custom_call(SHARD_LAYOUT_TARGET, result_types=[mlir.aval_to_ir_type(ctx.module_context,
                                                                                           layout_aval)],
                                  operands=[value]).results[0]
        called = []

        def host(table):
            if called:
                return ()
            called.append(True)
            hlo_sharding = _hlo_sharding_from_layout(table, aval.shape)
            if mesh.empty:
                callback(sharding_impls.GSPMDSharding(devices, hlo_sharding))
            else:
                callback(sharding_impls.NamedSharding(
                    mesh, sharding_impls.parse_flatten_op_sharding(hlo_sharding, mesh)[0]))
            return ()

        sub_ctx = ctx.replace(avals_in=[layout_aval], avals_out=[])
        from jax._src import callback as callback_module

        callback_module.emit_python_callback(sub_ctx, host, None, [layout], [layout_aval], [], has_side_effect=True,
                                             returns_token=True)
        return []

    mlir.register_lowering(debugging.inspect_sharding_p, rule, platform=PLATFORM, cacheable=False)


def _callback_errors_raised_by_the_call() -> None:
    """jax._src.interpreters.pxla.ExecuteReplicated._handle_token_bufs (jax 0.10.2).

    XLA's CPU backend runs a program with host callbacks synchronously: an exception raised in
    a callback comes out of the jitted call, once. StableRT dispatches asynchronously, so the
    error would reach the execution's runtime token, which JAX keeps in
    dispatch.runtime_tokens and re-raises at every later effects barrier, including twice at
    exit (api.clean_up and dispatch.wait_for_tokens). For stablert executions with host
    callbacks the shim waits for the execution's token before JAX records it, as XLA:CPU
    waits for the execution: the error is raised by the call, and a failed token is never
    recorded.
    """
    from jax._src.interpreters import pxla

    original = pxla.ExecuteReplicated._handle_token_bufs
    if getattr(original, "_stablert_shim", False):
        return

    def handle_token_bufs(self, token_bufs, sharded_token):
        if self.has_host_callbacks and self._local_devices and self._local_devices[0].platform == PLATFORM:
            sharded_token.block_until_ready()
        return original(self, token_bufs, sharded_token)

    handle_token_bufs._stablert_shim = True
    pxla.ExecuteReplicated._handle_token_bufs = handle_token_bufs


# lax primitives lowered on stablert as a stablehlo.composite "chlo.<name>" around their usual
# lowering (see _math_composites).
_MATH_COMPOSITES = ("lgamma", "digamma", "erf_inv")


def _math_composites() -> None:
    """jax._src.lax.special: lgamma_p, digamma_p and erf_inv_p and their chlo lowerings (jax
    0.10.2).

    JAX's serialization for plugins expands chlo ops into StableHLO except erf, which it keeps
    as a `stablehlo.composite "chlo.erf"`; lgamma, digamma and erf_inv would reach StableRT
    as some 100 elementwise ops each. On stablert they lower to a composite "chlo.<name>"
    whose decomposition is that same expansion: StableRT runs f32/f16/bf16 composites as one
    vector kernel (src/plan/lower_elementwise.cc) and f64 ones through the decomposition,
    which is what the plain lowering gives (and what XLA computes).
    """
    from functools import partial

    from jax import lax
    from jax._src import core
    from jax._src.interpreters import mlir
    from jax._src.lax import lax as lax_internal
    from jax._src.lax import special
    from jax._src.lib.mlir.dialects import chlo

    for name in _MATH_COMPOSITES:
        prim = getattr(special, f"{name}_p")
        chlo_op = getattr(chlo, name)
        # The decomposition: a primitive of its own lowered as the chlo op (prim itself would
        # come back to this rule).
        inner = core.Primitive(f"stablert_{name}_decomposition")
        inner.def_impl(prim.impl)
        inner.def_abstract_eval(lambda aval: aval)
        mlir.register_lowering(inner, partial(lax_internal._nary_lower_hlo, chlo_op))
        composite = lax.composite(inner.bind, f"chlo.{name}")
        mlir.register_lowering(prim, mlir.lower_fun(composite, multiple_results=False), platform=PLATFORM)


class _HostView:
    """A writable NumPy view of a stablert array's bytes that keeps the array's zero-copy host
    view (and with it the buffer's external reference) alive for as long as it lives."""

    def __init__(self, readonly_view):
        self._readonly_view = readonly_view
        self.__array_interface__ = {
            "data": (readonly_view.ctypes.data, False),
            "shape": readonly_view.shape,
            "strides": readonly_view.strides,
            "typestr": readonly_view.dtype.str,
            "descr": readonly_view.dtype.descr,
            "version": 3,
        }


def _dlpack_of_host_arrays() -> None:
    """jax._src.array.ArrayImpl.__dlpack__ / __dlpack_device__ (jax 0.10.2).

    JAX exports DLPack tensors only from `cpu` and `gpu` devices (jaxlib's C++ checks the
    platform, so a plugin's array fails with "cannot be used as a DLPack device"). A stablert
    array lives in host memory, so it is exported as a CPU tensor without a copy:
    `np.asarray` of it is jaxlib's zero-copy host view, which holds a PJRT external
    reference to the buffer (PJRT_Buffer_IncreaseExternalReferenceCount) until the view and
    every tensor made from it are gone; the capsule is then made by NumPy. As with XLA's CPU
    backend the tensor is writable (DLPack before 1.0 cannot say read-only) and mutating it
    is undefined behaviour for the JAX array.
    """
    import numpy as np
    from jax._src import array
    from jax._src.typing import DLDeviceType

    original_dlpack = array.ArrayImpl.__dlpack__
    original_device = array.ArrayImpl.__dlpack_device__
    if getattr(original_dlpack, "_stablert_shim", False):
        return

    def on_stablert(x):
        return len(x.sharding.device_set) == 1 and next(iter(x.sharding.device_set)).platform == PLATFORM

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if not on_stablert(self):
            return original_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
        if dl_device is not None and (int(dl_device[0]), int(dl_device[1])) != (int(DLDeviceType.kDLCPU), 0):
            raise BufferError(f"a stablert array is in host memory and exports only to the CPU device "
                              f"(DLDeviceType kDLCPU, 0), not to {dl_device}")
        if stream is not None and stream != -1:
            raise BufferError(f"a stablert array is in host memory: stream must be None, got {stream}")
        view = np.asarray(self)  # waits until the array is ready
        view = view.copy() if copy else np.asarray(_HostView(view))
        return view.__dlpack__(max_version=max_version)

    def __dlpack_device__(self):
        if not on_stablert(self):
            return original_device(self)
        return DLDeviceType.kDLCPU, 0

    __dlpack__._stablert_shim = True
    array.ArrayImpl.__dlpack__ = __dlpack__
    array.ArrayImpl.__dlpack_device__ = __dlpack_device__


def _cpu_exports_run_on_stablert() -> None:
    """jax._src.export._export._call_exported_lowering, registered for stablert (jax 0.10.2).

    `Exported.call` refuses a module exported for platforms that do not name the current
    one ("was exported for platforms ('cpu',) but it is used on ('stablert',)"). StableRT runs
    what JAX lowers for `cpu` (its LAPACK custom calls, its callbacks), so on stablert a module
    exported for `cpu` (and not for stablert) is called as its `cpu` variant: the lowering
    sees `cpu` in stablert's place when it picks the module's platform index.
    """
    import dataclasses

    from jax._src.export import _export
    from jax._src.interpreters import mlir

    original = _export._call_exported_lowering

    def call_exported_lowering(ctx, *args, exported):
        platforms = tuple(ctx.module_context.platforms)
        if not (PLATFORM in platforms and PLATFORM not in exported.platforms and "cpu" in exported.platforms):
            return original(ctx, *args, exported=exported)
        as_cpu = tuple("cpu" if p == PLATFORM else p for p in platforms)
        as_cpu_ctx = ctx.replace(module_context=dataclasses.replace(ctx.module_context, platforms=as_cpu))
        results = original(as_cpu_ctx, *args, exported=exported)
        # The rule threads ordered effects' tokens through the context it was given.
        if as_cpu_ctx.tokens_out is not None:
            ctx.set_tokens_out(as_cpu_ctx.tokens_out)
        return results

    mlir.register_lowering(_export.call_exported_p, call_exported_lowering, platform=PLATFORM)


def _ffi_targets_for_stablert() -> None:
    """jaxlib.xla_client.register_custom_call_handler / register_custom_type_handler (jax 0.10.2).

    jax.ffi.register_ffi_target(..., platform="stablert") reaches the plugin only through a
    handler registered for the platform name; jaxlib registers one for `cpu` only.
    stablert._ffi registers StableRT's (PJRT_FFI_Extension through ctypes).
    """
    from stablert import _ffi

    _ffi.install()


_SHIMS = (_enable_donation, _enable_compilation_cache, _use_cpu_linalg_lowerings,
          _platform_dependent_takes_cpu_branch, _cpu_rules_as_fallback, _host_callbacks_by_send_and_recv,
          _inspect_sharding_from_layouts, _callback_errors_raised_by_the_call, _math_composites,
          _dlpack_of_host_arrays, _cpu_exports_run_on_stablert, _ffi_targets_for_stablert)


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
