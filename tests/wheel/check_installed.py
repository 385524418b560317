"""Checks an installed StableRT wheel from inside the venv it was installed into.

Run by tests/wheel/test_wheel.sh with that venv's python, from a directory outside the source
tree (so `stablert` is the installed package, not python/stablert), with no STABLERT_* or
PYTHONPATH overrides. Exits non-zero with a message naming the failed check.

1. The plugin JAX loads is the wheel's: site-packages/stablert/libstablert_pjrt.so.
2. `ldd` of the plugin: every library outside glibc and libstdc++/libgcc_s (which manylinux
   leaves to the system) resolves inside the wheel's stablert.libs/.
3. A JAX program on `stablert` (a 1024x2048 @ 2048x768 f32 matmul, then sum/max reductions
   over 4M elements) matches JAX's CPU backend in the same process.
4. After it ran, the process maps no system copy (/usr, /lib, /opt) of a bundled library
   (/proc/self/maps), and the bundled oneDNN and LAPACK are mapped from stablert.libs/.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

# Libraries manylinux lets a wheel take from the system (auditwheel's policy list, which
# includes these): glibc's parts, the dynamic loader, libstdc++ and libgcc_s.
SYSTEM_OK = re.compile(
    r"^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|librt|libpthread|libmvec|libstdc\+\+|libgcc_s)\.so")
# Stems of the libraries the wheel bundles (auditwheel renames them <stem>-<hash>.so.N).
SYSTEM_DIRS = ("/usr/", "/lib/", "/lib64/", "/opt/")
BUNDLED_STEMS = ("liblapack", "libblas", "libgfortran", "libquadmath", "libdnnl", "libgomp",
                 "libOpenCL", "libhwy", "libhwy_contrib")


def fail(message: str) -> None:
    sys.exit(f"check_installed: FAILED: {message}")


def check_plugin_location() -> tuple[pathlib.Path, pathlib.Path]:
    import stablert

    if "STABLERT_LIBRARY_PATH" in os.environ:
        fail("STABLERT_LIBRARY_PATH is set; the check must load the installed plugin")
    package_dir = pathlib.Path(stablert.__file__).resolve().parent
    if package_dir.parent.name != "site-packages":
        fail(f"stablert imported from {package_dir}, not from the venv's site-packages")
    plugin = pathlib.Path(stablert.library_path())
    if plugin.parent != package_dir or not plugin.is_file():
        fail(f"plugin library {plugin} is not the installed one in {package_dir}")
    libs_dir = package_dir.parent / "stablert.libs"
    if not libs_dir.is_dir():
        fail(f"{libs_dir} (the bundled libraries) is missing")
    print(f"plugin: {plugin}\nbundled: {sorted(p.name for p in libs_dir.iterdir())}")
    return plugin, libs_dir


def check_ldd(plugin: pathlib.Path, libs_dir: pathlib.Path) -> None:
    out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, check=True).stdout
    bundled_seen = set()
    for line in out.splitlines():
        line = line.strip()
        name = line.split()[0]
        if "not found" in line:
            fail(f"ldd: {name} not found:\n{out}")
        if SYSTEM_OK.match(os.path.basename(name)):
            continue
        match = re.search(r"=> (\S+)", line)
        if not match:
            fail(f"ldd: unexpected line {line!r}")
        resolved = pathlib.Path(match.group(1)).resolve()
        if resolved.parent != libs_dir.resolve():
            fail(f"ldd: {name} resolves to {resolved}, outside {libs_dir}:\n{out}")
        bundled_seen.add(name)
    # The plugin's direct needs must be among them (the rest come through libdnnl/liblapack).
    for stem in ("liblapack", "libblas", "libdnnl", "libhwy", "libhwy_contrib", "libgomp"):
        if not any(n.startswith(stem + "-") for n in bundled_seen):
            fail(f"ldd: no bundled {stem} among {sorted(bundled_seen)}")
    print(f"ldd: {len(bundled_seen)} non-system libraries, all in {libs_dir}")


def check_jax_program() -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np

    if jax.default_backend() != "stablert":
        fail(f"default backend is {jax.default_backend()!r}; expected stablert (JAX_PLATFORMS=stablert)")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 2048), dtype=np.float32)
    b = rng.standard_normal((2048, 768), dtype=np.float32)
    x = rng.standard_normal((2048, 2048), dtype=np.float32)

    def program(a, b, x):
        c = a @ b
        return c, jnp.sum(c, axis=1), jnp.max(x), jnp.sum(x * x)

    results = {}
    for platform in ("stablert", "cpu"):
        device = jax.devices(platform)[0]
        args = [jax.device_put(v, device) for v in (a, b, x)]
        outs = jax.jit(program)(*args)
        if any(next(iter(o.devices())).platform != platform for o in outs):
            fail(f"the program did not run on {platform}")
        results[platform] = [np.asarray(o) for o in outs]
    names = ("matmul", "row sums", "max", "sum of squares")
    # f32 with 2048-term (matmul) and up to 4M-term (reductions) sums in different orders.
    tolerances = ((1e-4, 1e-3), (1e-4, 1e-2), (0, 0), (1e-3, 0))
    for name, got, want, (rtol, atol) in zip(names, results["stablert"], results["cpu"], tolerances):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{name}: stablert vs cpu")
    print(f"JAX program on {jax.devices('stablert')[0]} matches cpu: matmul {results['stablert'][0].shape}, "
          f"sum of squares {float(results['stablert'][3]):.6g}")


def check_mapped_libraries(libs_dir: pathlib.Path) -> None:
    mapped = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and ".so" in fields[5]:
                mapped.add(fields[5])
    for path in sorted(mapped):
        base = os.path.basename(path)
        stem = re.split(r"[-.]", base, maxsplit=1)[0]
        # Other wheels bring their own copies (numpy.libs/ has a libgfortran for its OpenBLAS);
        # what must not appear is the system's.
        if stem in BUNDLED_STEMS and path.startswith(SYSTEM_DIRS):
            fail(f"the process maps a system copy of a bundled library: {path}")
    from_wheel = sorted(os.path.basename(p) for p in mapped if pathlib.Path(p).parent == libs_dir.resolve())
    if not any(n.startswith("libdnnl-") for n in from_wheel) or not any(n.startswith("liblapack-") for n in from_wheel):
        fail(f"expected the bundled oneDNN and LAPACK to be mapped, got {from_wheel}")
    print(f"mapped from stablert.libs: {from_wheel}")


def main() -> None:
    plugin, libs_dir = check_plugin_location()
    check_ldd(plugin, libs_dir)
    check_jax_program()
    check_mapped_libraries(libs_dir)
    print("check_installed: OK")


if __name__ == "__main__":
    main()
