#!/usr/bin/env python3
"""Fetches the official PJRT C API headers from a pinned PyPI source distribution.

The headers (openxla/xla `xla/pjrt/c/*.h`, the XLA FFI C API `xla/ffi/api/c_api.h` and the
profiler plugin API `xla/backends/profiler/plugin/profiler_c_api.h`, Apache-2.0) travel
inside the `pypjrt` sdist.
We download that exact file with pip, check its SHA-256, and extract the headers into
OUT_DIR/xla/pjrt/c/. Nothing from it is committed to this repository.

usage: fetch_pjrt_header.py OUT_DIR [CACHE_DIR]
"""
import hashlib
import io
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

PACKAGE = "pypjrt==0.1.1"
SDIST = "pypjrt-0.1.1.tar.gz"
SHA256 = "e85e8fd382801726f9b8d1348deeebe5fb3aab35e95147c09d693cc701190dec"
MEMBER_PREFIX = "pypjrt-0.1.1/vendor/"
WANTED = ("xla/pjrt/c/", "xla/pjrt/proto/compile_options.proto", "xla/ffi/api/c_api.h",
          "xla/backends/profiler/plugin/profiler_c_api.h")


def pip_candidates():
    yield [sys.executable, "-m", "pip"]
    for name in ("python3", "python"):
        path = shutil.which(name)
        if path and os.path.realpath(path) != os.path.realpath(sys.executable):
            yield [path, "-m", "pip"]


def download(cache_dir: pathlib.Path) -> pathlib.Path:
    target = cache_dir / SDIST
    if target.exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    errors = []
    for pip in pip_candidates():
        with tempfile.TemporaryDirectory() as tmp:
            cmd = pip + ["download", PACKAGE, "--no-deps", "--no-binary", ":all:", "-d", tmp, "-q"]
            result = subprocess.run(cmd, capture_output=True, text=True)
            got = pathlib.Path(tmp) / SDIST
            if result.returncode == 0 and got.exists():
                shutil.copy(got, target)
                return target
            errors.append(f"{' '.join(cmd)}: {result.stderr.strip()[-400:]}")
    sys.exit("could not download " + PACKAGE + ":\n" + "\n".join(errors))


def main() -> None:
    out_dir = pathlib.Path(sys.argv[1])
    cache_dir = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else out_dir / "cache"
    sdist = download(cache_dir)
    data = sdist.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"{sdist}: sha256 {digest} does not match the pinned {SHA256}")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.startswith(MEMBER_PREFIX):
                continue
            rel = member.name[len(MEMBER_PREFIX):]
            if not rel.startswith(WANTED):
                continue
            dest = out_dir / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(tar.extractfile(member).read())
    for wanted in ("xla/pjrt/c/pjrt_c_api.h", "xla/ffi/api/c_api.h", "xla/backends/profiler/plugin/profiler_c_api.h"):
        if not (out_dir / wanted).exists():
            sys.exit(f"{sdist} does not contain {wanted}")
    print(f"PJRT headers from {PACKAGE} (sha256 verified) in {out_dir}")


if __name__ == "__main__":
    main()
