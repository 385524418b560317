"""Registration of XLA FFI handlers and types for the `stablert` platform.

`jax.ffi.register_ffi_target(name, capsule, platform="stablert")` ends in jaxlib's
`xla_client.register_custom_call_target`, which forwards to the handler registered for the
platform with `xla_client.register_custom_call_handler` (jaxlib itself registers one only
for `cpu`; GPU plugins register theirs from their own extension modules). `install()`
registers handlers for `stablert` that call the plugin's PJRT_FFI_Extension
(src/capi/ffi_extension.cc) through ctypes: the plugin library is the one JAX loaded (the
same path, so the same loaded object and the same registry).

It also makes `jax.experimental.buffer_callback` run on stablert with jaxlib's own CPU handler
(_buffer_callback_on_stablert, _CallbackTable; docs/jax_integration.md, "XLA FFI").

Checked with: jax 0.10.2.
"""
from __future__ import annotations

import ctypes
import threading

_PJRT_EXTENSION_TYPE_FFI = 5  # PJRT_Extension_Type_FFI in pjrt_c_api.h
_PLATFORM_NAMES = ("stablert", "STABLERT")
_lock = threading.RLock()  # re-entered when a backend created under it registers handlers
_api = None
_keep_alive = []  # PJRT_FFI_Type_Info structs the plugin may call later


class _ExtensionBase(ctypes.Structure):
    pass


_ExtensionBase._fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
                           ("next", ctypes.POINTER(_ExtensionBase))]

_Fn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)  # PJRT_Error* f(Args*)
_VoidFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _ApiVersion(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class _ApiHead(ctypes.Structure):  # the first fields of PJRT_Api
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.POINTER(_ExtensionBase)),
                ("pjrt_api_version", _ApiVersion), ("error_destroy", _VoidFn), ("error_message", _VoidFn)]


class _FfiExtension(ctypes.Structure):
    _fields_ = [("base", _ExtensionBase), ("type_register", _Fn), ("user_data_add", _Fn),
                ("register_handler", _Fn)]


class _RegisterHandlerArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("target_name", ctypes.c_char_p),
                ("target_name_size", ctypes.c_size_t), ("handler", ctypes.c_void_p),
                ("platform_name", ctypes.c_char_p), ("platform_name_size", ctypes.c_size_t),
                ("traits", ctypes.c_int)]


class _TypeInfo(ctypes.Structure):  # PJRT_FFI_Type_Info
    _fields_ = [("deleter", ctypes.c_void_p), ("serialize", ctypes.c_void_p), ("deserialize", ctypes.c_void_p)]


class _TypeRegisterArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("type_name", ctypes.c_char_p), ("type_name_size", ctypes.c_size_t),
                ("type_id", ctypes.c_int64), ("type_info", ctypes.POINTER(_TypeInfo))]


class _ErrorMessageArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p), ("message", ctypes.c_char_p), ("message_size", ctypes.c_size_t)]


class _ErrorDestroyArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p)]


def _capsule_pointer(capsule) -> int:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"expected a PyCapsule (jax.ffi.pycapsule), got {type(capsule).__name__}")
    return get_pointer(capsule, get_name(capsule))


def _load():
    """(PJRT_Api head, PJRT_FFI_Extension) of the plugin library."""
    global _api
    if _api is None:
        from stablert import library_path

        library = ctypes.CDLL(library_path())
        library.GetPjrtApi.restype = ctypes.POINTER(_ApiHead)
        head = library.GetPjrtApi().contents
        extension = head.extension_start
        while extension:
            if extension.contents.type == _PJRT_EXTENSION_TYPE_FFI:
                break
            extension = extension.contents.next
        if not extension:
            raise RuntimeError("the StableRT plugin has no PJRT FFI extension")
        _api = (head, ctypes.cast(extension, ctypes.POINTER(_FfiExtension)).contents, library)
    return _api


def _check(error: int | None, what: str) -> None:
    if not error:
        return
    head, _, _ = _load()
    args = _ErrorMessageArgs(ctypes.sizeof(_ErrorMessageArgs), None, error, None, 0)
    head.error_message(ctypes.addressof(args))
    message = ctypes.string_at(args.message, args.message_size).decode(errors="replace")
    destroy = _ErrorDestroyArgs(ctypes.sizeof(_ErrorDestroyArgs), None, error)
    head.error_destroy(ctypes.addressof(destroy))
    raise ValueError(f"StableRT: {what}: {message}")


def register_handler(name, fn, platform, api_version=1, traits=0) -> None:
    """A jaxlib custom call handler (xla_client.register_custom_call_handler) for stablert."""
    if api_version != 1:
        raise ValueError(f"StableRT runs typed XLA FFI handlers (api_version=1) only; target {name!r} "
                         f"was registered with api_version={api_version}")
    if isinstance(fn, dict):
        other = sorted(set(fn) - {"execute"})
        if other or "execute" not in fn:
            raise ValueError(f"StableRT registers the execute stage of FFI target {name!r} only; got stages "
                             f"{sorted(fn)}")
        fn = fn["execute"]
    _, extension, _ = _load()
    target = name.encode() if isinstance(name, str) else bytes(name)
    platform_bytes = platform.encode()
    args = _RegisterHandlerArgs(ctypes.sizeof(_RegisterHandlerArgs), target, len(target), _capsule_pointer(fn),
                                platform_bytes, len(platform_bytes), int(traits))
    with _lock:
        _check(extension.register_handler(ctypes.addressof(args)), f"registering FFI target {name!r}")


def register_type(type_name, type_registration) -> None:
    """A jaxlib custom type handler (xla_client.register_custom_type_handler) for stablert."""
    if isinstance(type_registration, dict):
        type_id_capsule = type_registration["type_id"]
        type_info_capsule = type_registration.get("type_info")
    else:
        type_id_capsule, type_info_capsule = type_registration, None
    _, extension, _ = _load()
    type_id = ctypes.cast(_capsule_pointer(type_id_capsule), ctypes.POINTER(ctypes.c_int64))
    info = None
    if type_info_capsule is not None:
        # XLA_FFI_TypeInfo: struct_size, extension_start, deleter.
        fields = ctypes.cast(_capsule_pointer(type_info_capsule), ctypes.POINTER(ctypes.c_void_p))
        info = _TypeInfo(fields[2], None, None)
        _keep_alive.append(info)
    name = type_name.encode() if isinstance(type_name, str) else bytes(type_name)
    args = _TypeRegisterArgs(ctypes.sizeof(_TypeRegisterArgs), None, name, len(name), type_id[0],
                             ctypes.pointer(info) if info is not None else None)
    with _lock:
        _check(extension.type_register(ctypes.addressof(args)), f"registering FFI type {type_name!r}")
    type_id[0] = args.type_id


# jaxlib's own FFI handlers for Python callbacks on CPU that StableRT runs as they are: they
# find the Python callable in FFI user data (here _callback_table's, the process's user data)
# and call it on the buffers.
_JAXLIB_CPU_TARGETS = ("xla_buffer_python_cpu_callback",)


class _ModuleContextAsCpu:
    """A view of a JAX ModuleContext whose lowering platform reads "cpu"; everything else
    (the host callback list, the backend) is the wrapped context's own."""

    platforms = ("cpu",)

    def __init__(self, module_context):
        self._module_context = module_context

    def __getattr__(self, name):
        return getattr(self._module_context, name)


def _register_jaxlib_cpu_handlers() -> None:
    """Registers jaxlib's CPU callback handlers (`xla_client.custom_call_targets("Host")`) for
    stablert; only their execute stage (the targets in _JAXLIB_CPU_TARGETS have no other)."""
    from jaxlib import xla_client

    targets = xla_client.custom_call_targets("Host")
    for name in _JAXLIB_CPU_TARGETS:
        handler = targets.get(name)
        if handler is None:
            continue
        if isinstance(handler, dict):
            if set(handler) != {"execute"}:
                continue
            handler = handler["execute"]
        register_handler(name, handler, "stablert")


class _FfiLoadedHostCallbacks(ctypes.Structure):
    """jaxlib's xla::FfiLoadedHostCallbacks (xla/pjrt/host_callback.h, jaxlib 0.10.2): the
    Python callables a program's callback handlers index (`index` attribute)."""
    _fields_ = [("callbacks", ctypes.POINTER(ctypes.c_void_p)), ("num_callbacks", ctypes.c_size_t)]


class _CallbackTable:
    """The Python callbacks of every program lowered for stablert, as one process-wide
    FfiLoadedHostCallbacks the plugin hands to jaxlib's handlers (PJRT_FFI_UserData_Add with a
    null context: jaxlib forwards a program's host callbacks through the execute context only
    to platforms it calls CPU or GPU). Callables are kept for the life of the process, like
    the compiled programs that index them; arrays outgrown stay allocated, since a handler
    may be reading one (it does so holding the GIL, as do all changes here)."""

    def __init__(self):
        self.callables = []
        self.arrays = []
        self.struct = _FfiLoadedHostCallbacks(None, 0)
        self.registered = False

    def add(self, callback) -> int:
        with _lock:
            self._register()
            index = len(self.callables)
            self.callables.append(callback)
            if not self.arrays or len(self.arrays[-1]) <= index:
                array = (ctypes.c_void_p * max(16, 2 * (index + 1)))()
                for i, c in enumerate(self.callables):
                    array[i] = id(c)
                self.arrays.append(array)
                self.struct.callbacks = ctypes.cast(array, ctypes.POINTER(ctypes.c_void_p))
            else:
                self.arrays[-1][index] = id(callback)
            self.struct.num_callbacks = len(self.callables)
            return index

    def _register(self) -> None:
        if self.registered:
            return
        type_id = _jaxlib_type_id("FfiLoadedHostCallbacks")
        _, extension, _ = _load()
        args = _UserDataAddArgs(ctypes.sizeof(_UserDataAddArgs), None, None,
                                _UserData(type_id, ctypes.addressof(self.struct)))
        _check(extension.user_data_add(ctypes.addressof(args)), "adding the Python callback table")
        self.registered = True


class _UserData(ctypes.Structure):  # PJRT_FFI_UserData
    _fields_ = [("type_id", ctypes.c_int64), ("data", ctypes.c_void_p)]


class _UserDataAddArgs(ctypes.Structure):  # PJRT_FFI_UserData_Add_Args
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("context", ctypes.c_void_p), ("user_data", _UserData)]


_callback_table = _CallbackTable()


def _jaxlib_type_id(name: str) -> int:
    """The FFI type id jaxlib's CPU runtime registered for `name`: its type registry reports
    it when asked to register the name again (jaxlib 0.10.2)."""
    import re

    from jax._src import xla_bridge
    from jaxlib import xla_client

    xla_bridge.get_backend("cpu")  # jaxlib's CPU type handler comes with the CPU backend
    handler = xla_client._custom_type_id_handler.get("Host")
    if handler is None:
        raise NotImplementedError("buffer_callback on stablert needs jaxlib's CPU backend")
    probe = ctypes.c_int64(0)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    _keep_alive.append(probe)
    try:
        handler(name, {"type_id": new_capsule(ctypes.addressof(probe), None, None)})
    except Exception as error:  # the expected path: "already registered with type id N"
        match = re.search(r"already registered with type id (\d+)", str(error))
        if match:
            return int(match.group(1))
        raise
    raise NotImplementedError(f"jaxlib has no FFI type {name!r}; buffer_callback cannot run on stablert")


def _buffer_callback_on_stablert() -> None:
    """jax._src.buffer_callback (jax 0.10.2): its lowering picks the FFI target by platform
    and refuses platforms other than cpu/cuda/rocm. On stablert it lowers as on cpu, to
    jaxlib's `xla_buffer_python_cpu_callback` (which StableRT runs:
    _register_jaxlib_cpu_handlers), with the callback's `index` into _callback_table instead
    of the module's host callbacks."""
    from jax._src import buffer_callback
    from jax._src.interpreters import mlir

    entry = mlir._lowerings.get(buffer_callback.buffer_callback_p)
    if entry is None:
        return
    rule = entry.rule if hasattr(entry, "rule") else entry

    def lowering(ctx, *args, **params):
        if tuple(ctx.module_context.platforms) != ("stablert",):
            return rule(ctx, *args, **params)
        return rule(ctx.replace(module_context=_TableModuleContext(ctx.module_context)), *args, **params)

    mlir.register_lowering(buffer_callback.buffer_callback_p, lowering, platform="stablert")


class _TableModuleContext(_ModuleContextAsCpu):
    """A cpu view of the module context whose host callbacks go to _callback_table: the
    rule reads `len(host_callbacks) - 1` as the index of the callback it just added."""

    def __init__(self, module_context):
        super().__init__(module_context)
        self.host_callbacks = []

    def add_host_callback(self, callback) -> None:
        def with_cpu_context(exec_ctx, *args):
            return callback(_CpuExecutionContext(exec_ctx), *args)

        index = _callback_table.add(with_cpu_context)
        self.host_callbacks = [None] * (index + 1)
        # The module still lists it: JAX keeps programs with host callbacks out of the
        # persistent compilation cache, where an index into this process's table would be
        # meaningless (jaxlib holds the callable for the executable's life; unused).
        self._module_context.add_host_callback(callback)


class _CpuExecutionContext:
    """The callback's ExecutionContext as XLA:CPU presents it: `stream` raises, as there is
    no GPU context (StableRT's XLA_FFI_Stream_Get answers a null stream rather than an error,
    which jaxlib's context object would read as an XLA-internal error); the rest is jaxlib's."""

    def __init__(self, context):
        self._context = context

    @property
    def stream(self):
        import jax

        raise jax.errors.JaxRuntimeError("UNIMPLEMENTED: XLA FFI GPU context is not available")

    def __getattr__(self, name):
        return getattr(self._context, name)


def install() -> None:
    """Registers the handlers with jaxlib for every spelling of the platform name, and
    jaxlib's CPU callback handlers with StableRT (buffer_callback)."""
    from jaxlib import xla_client

    for platform in _PLATFORM_NAMES:
        xla_client.register_custom_call_handler(platform, register_handler)
        xla_client.register_custom_type_handler(platform, register_type)
    try:
        _register_jaxlib_cpu_handlers()
        _buffer_callback_on_stablert()
    except Exception as error:  # a jaxlib whose handlers or lowering differ: buffer_callback only
        import logging

        logging.getLogger(__name__).warning("StableRT: buffer_callback not enabled: %s", error)
