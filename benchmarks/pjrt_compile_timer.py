"""Compile time at the PJRT C API, for StableRT and XLA:CPU on the same program bytes.

Used by benchmarks/compile_benchmark.py (the corpus) and benchmarks/jax_benchmark.py (the
end-to-end workloads). Times one compilation of a serialized StableHLO program (a VHLO
portable artifact, as jaxlib's PJRT C API client sends it) with a CompileOptionsProto:

  - StableRtCompiler: PJRT_Client_Compile of the plugin, called through ctypes on its
    PJRT_Api (a client of its own, created with PJRT_Client_Create); the executable is
    destroyed with PJRT_LoadedExecutable_Destroy, untimed;
  - XlaCompiler: jaxlib's XLA:CPU client `compile_and_load` on the same bytes and options
    (XLA's own reading of the artifact included, as StableRT's is);
  - capture_program: the exact bytes and CompileOptionsProto JAX hands the plugin when it
    compiles a jax.stages.Lowered on a `stablert` device (read back from the plugin's
    compilation dump, STABLERT_DUMP_DIR).

JAX's tracing, lowering and per-executable work in jaxlib are excluded on both sides.
Failures: a compilation the plugin rejects raises RuntimeError with the plugin's message;
XLA raises jaxlib's own error types. Not thread-safe (one compiler per thread).
"""
from __future__ import annotations

import ctypes
import os
import re
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# --- the PJRT C API through ctypes --------------------------------------------------------------


class _Args(ctypes.Structure):
    """Every PJRT *_Args struct starts with struct_size and extension_start."""

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(self), **fields)


def _args(name, *fields):
    return type(name, (_Args,), {"_fields_": [("struct_size", ctypes.c_size_t),
                                              ("extension_start", ctypes.c_void_p), *fields]})


ErrorDestroyArgs = _args("ErrorDestroyArgs", ("error", ctypes.c_void_p))
ErrorMessageArgs = _args("ErrorMessageArgs", ("error", ctypes.c_void_p), ("message", ctypes.c_char_p),
                         ("message_size", ctypes.c_size_t))
PluginInitializeArgs = _args("PluginInitializeArgs")
ClientCreateArgs = _args("ClientCreateArgs", ("create_options", ctypes.c_void_p), ("num_options", ctypes.c_size_t),
                         ("kv_get_callback", ctypes.c_void_p), ("kv_get_user_arg", ctypes.c_void_p),
                         ("kv_put_callback", ctypes.c_void_p), ("kv_put_user_arg", ctypes.c_void_p),
                         ("client", ctypes.c_void_p), ("kv_try_get_callback", ctypes.c_void_p),
                         ("kv_try_get_user_arg", ctypes.c_void_p))
Program = _args("Program", ("code", ctypes.c_char_p), ("code_size", ctypes.c_size_t), ("format", ctypes.c_char_p),
                ("format_size", ctypes.c_size_t))
ClientCompileArgs = _args("ClientCompileArgs", ("client", ctypes.c_void_p), ("program", ctypes.POINTER(Program)),
                          ("compile_options", ctypes.c_char_p), ("compile_options_size", ctypes.c_size_t),
                          ("executable", ctypes.c_void_p))
LoadedExecutableDestroyArgs = _args("LoadedExecutableDestroyArgs", ("executable", ctypes.c_void_p))

# PJRT_Api: struct_size, extension_start, PJRT_Api_Version {struct_size, extension_start, int,
# int}, then one function pointer per slot in the order of src/base/pjrt_api_slots.def.
_SLOTS_OFFSET = 8 + 8 + (8 + 8 + 4 + 4)


class StableRtCompiler:
    """PJRT_Client_Compile of StableRT's plugin, called directly on a client of its own."""

    def __init__(self, library: str):
        self.lib = ctypes.CDLL(library)
        self.lib.GetPjrtApi.restype = ctypes.c_void_p
        self.api = self.lib.GetPjrtApi()
        slots = re.findall(r"^PJRT_API_SLOT\((\w+)\)", (ROOT / "src/base/pjrt_api_slots.def").read_text(), re.M)
        self.slot = {name: i for i, name in enumerate(slots)}
        self._call("PJRT_Plugin_Initialize", PluginInitializeArgs())
        create = ClientCreateArgs()
        self._call("PJRT_Client_Create", create)
        self.client = create.client

    def _fn(self, name):
        address = ctypes.c_void_p.from_address(self.api + _SLOTS_OFFSET + 8 * self.slot[name]).value
        return ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(address)

    def _call(self, name, args):
        error = self._fn(name)(ctypes.addressof(args))
        if error:
            message = ErrorMessageArgs(error=error)
            self._fn("PJRT_Error_Message")(ctypes.addressof(message))
            text = ctypes.string_at(message.message, message.message_size).decode(errors="replace")
            self._fn("PJRT_Error_Destroy")(ctypes.addressof(ErrorDestroyArgs(error=error)))
            raise RuntimeError(text)

    def compile_seconds(self, code: bytes, options: bytes) -> float:
        """Seconds of one PJRT_Client_Compile (the executable is destroyed untimed)."""
        program = Program(code=code, code_size=len(code), format=b"mlir", format_size=4)
        args = ClientCompileArgs(client=self.client, program=ctypes.pointer(program), compile_options=options,
                                 compile_options_size=len(options))
        start = time.perf_counter()
        self._call("PJRT_Client_Compile", args)
        elapsed = time.perf_counter() - start
        self._call("PJRT_LoadedExecutable_Destroy", LoadedExecutableDestroyArgs(executable=args.executable))
        return elapsed


# --- XLA:CPU through jaxlib ---------------------------------------------------------------------


def default_options() -> bytes:
    """JAX's CompileOptionsProto for one replica and one partition, serialized."""
    from jax._src import compiler
    return compiler.get_compile_options(num_replicas=1, num_partitions=1).SerializeAsString()


class XlaCompiler:
    """jaxlib's XLA:CPU client (JAX's `cpu` backend), compiling portable artifacts on device 0."""

    def __init__(self):
        from jax._src.lib import xla_client
        from jax.extend import backend

        self._xla_client = xla_client
        self.backend = backend.get_backend("cpu")
        self.devices = xla_client.DeviceList(tuple(self.backend.local_devices()[:1]))

    def compile_seconds(self, code: bytes, options: bytes) -> float:
        """Seconds of one `compile_and_load` (options parsed and the executable freed untimed)."""
        parsed = self._xla_client.CompileOptions.ParseFromString(options)
        start = time.perf_counter()
        executable = self.backend.compile_and_load(code, self.devices, parsed)
        elapsed = time.perf_counter() - start
        del executable
        return elapsed


def best_of(fn, repeats: int) -> float:
    return min(fn() for _ in range(max(1, repeats)))


# --- what JAX sends the plugin ------------------------------------------------------------------


def capture_program(lowered) -> tuple[bytes, bytes]:
    """(program bytes, CompileOptionsProto bytes) JAX passes to PJRT_Client_Compile for
    `lowered` (a jax.stages.Lowered for a `stablert` device): compiles it once with
    STABLERT_DUMP_DIR set to a fresh directory and reads back the dump's input and options
    (jaxlib's C API client serializes the options itself; they carry what JAX's CPU backend
    receives, plus allow_in_place_mlir_modification). JAX's in-memory caches are cleared
    first, so a function compiled before still reaches the plugin. The compilation may fail
    (the dump is written whatever happens); only a missing dump is an error (RuntimeError,
    with the compilation's own error chained)."""
    import jax
    jax.clear_caches()
    previous = os.environ.get("STABLERT_DUMP_DIR")
    with tempfile.TemporaryDirectory(prefix="stablert-capture-") as directory:
        os.environ["STABLERT_DUMP_DIR"] = directory
        failure = None
        try:
            lowered.compile()
        except Exception as error:  # noqa: BLE001 - jaxlib raises its own error types
            failure = error
        finally:
            if previous is None:
                del os.environ["STABLERT_DUMP_DIR"]
            else:
                os.environ["STABLERT_DUMP_DIR"] = previous
        inputs = sorted(Path(directory).glob("*.input.mlirbc")) or sorted(Path(directory).glob("*.input.mlir"))
        options = sorted(Path(directory).glob("*.compile_options.pb"))
        if len(inputs) != 1 or len(options) != 1:
            raise RuntimeError(f"capture_program: expected one compilation in the dump, found "
                               f"{len(inputs)} programs and {len(options)} option files") from failure
        return inputs[0].read_bytes(), options[0].read_bytes()
