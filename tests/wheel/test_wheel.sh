#!/usr/bin/env bash
# The user's wheel, tested the way a user gets it (docs/decisions.md, "The wheel"):
#   bash tests/wheel/test_wheel.sh        (after `bash setup.sh`; test.sh runs it)
# 1. tools/wheel/build_wheel.sh builds and repairs dist/stablert-*.whl; its tag must be
#    py3-none-manylinux_2_34_x86_64 (a higher one means a change raised the glibc needed).
# 2. A fresh venv (build/wheel_test/venv, system python3) gets the wheel and the pinned JAX
#    through pip (from pip's cache when it has them), nothing from the source tree.
# 3. tests/wheel/check_installed.py runs there: the plugin's non-glibc dependencies resolve in
#    stablert.libs/ (ldd), a JAX program on `stablert` matches `cpu` in the same process, and the
#    process maps no system copy of a bundled library. The `stablert` CLI prints its version.
# 4. The same check in a mount namespace where the system's copies of the bundled libraries
#    are replaced by empty files (unshare; root or unprivileged user namespaces), so any use of
#    them fails to load. Where namespaces are unavailable this step says so and is skipped; the
#    maps check of step 3 still proves where every bundled library came from.
# 5. The sdist: `python -m build --sdist` builds, holds every tracked file the build needs, and
#    configures offline (no network namespace, no index) from the pinned header cache
#    (third_party_cache/). STABLERT_WHEEL_TEST_SDIST_BUILD=1 also builds a wheel from it offline
#    with `pip wheel` (a full compile: about 15 min of 2 cores).
# Fails (non-zero) at the first failed step.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
JAX_VERSION=$(sed -n 's/^JAX_VERSION=\([0-9.]*\).*/\1/p' setup.sh)
EXPECTED_PLAT=manylinux_2_34_x86_64
WORK=$ROOT/build/wheel_test
start=$SECONDS

echo "== 1. build + repair the wheel [$((SECONDS - start)) s]"
if [ -z "${STABLERT_WHEEL:-}" ]; then
  bash tools/wheel/build_wheel.sh
  wheels=(dist/stablert-*.whl)
  STABLERT_WHEEL=$ROOT/${wheels[0]}
fi
name=$(basename "$STABLERT_WHEEL")
case "$name" in
  stablert-*-py3-none-"$EXPECTED_PLAT".whl) echo "wheel: $name" ;;
  *) echo "FAILED: $name is not tagged py3-none-$EXPECTED_PLAT" >&2; exit 1 ;;
esac

echo "== 2. fresh venv + pip install the wheel (jax==$JAX_VERSION) [$((SECONDS - start)) s]"
rm -rf "$WORK"
mkdir -p "$WORK/run"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q --disable-pip-version-check "$STABLERT_WHEEL" "jax==$JAX_VERSION" "jaxlib==$JAX_VERSION"

echo "== 3. the installed plugin: ldd, a JAX program on stablert vs cpu, mapped libraries [$((SECONDS - start)) s]"
# From an empty directory with no overrides, so only the installed package can be found.
run_check() {
  (cd "$WORK/run" && env -u PYTHONPATH -u STABLERT_LIBRARY_PATH -u LD_LIBRARY_PATH JAX_PLATFORMS=stablert \
     "$@" "$WORK/venv/bin/python" "$ROOT/tests/wheel/check_installed.py")
}
run_check
version=$(cd "$WORK/run" && "$WORK/venv/bin/stablert" --version)
echo "stablert --version: $version"
[ -n "$version" ]

echo "== 4. again with the system's copies of the bundled libraries hidden [$((SECONDS - start)) s]"
# Every file (and the file behind every link) the bundled sonames could load from the system.
hide=()
for f in /usr/lib/x86_64-linux-gnu/{liblapack,libblas,libgfortran,libquadmath,libdnnl,libgomp,libOpenCL,libhwy,libhwy_contrib}.so* \
         /usr/lib/x86_64-linux-gnu/{lapack,blas}/lib*.so* /usr/lib/gcc/x86_64-linux-gnu/*/libgomp.so*; do
  [ -e "$f" ] && hide+=("$(readlink -f "$f")")
done
[ ${#hide[@]} -gt 0 ] && mapfile -t hide < <(printf '%s\n' "${hide[@]}" | sort -u)
unshare_cmd=(unshare --mount)
[ "$(id -u)" -ne 0 ] && unshare_cmd=(unshare --map-root-user --mount)
: > "$WORK/empty"
# The probe does what the step needs: a mount namespace in which a bind mount over /usr works.
if [ ${#hide[@]} -eq 0 ]; then
  echo "SKIPPED: none of the bundled libraries is installed on this system, nothing to hide"
elif "${unshare_cmd[@]}" mount --bind "$WORK/empty" "${hide[0]}" 2>/dev/null; then
  cat > "$WORK/hidden_run.sh" <<EOF
set -euo pipefail
for f in ${hide[*]}; do mount --bind "$WORK/empty" "\$f"; done
# The hiding works: the system's oneDNN and LAPACK no longer load.
if "$WORK/venv/bin/python" -c 'import ctypes; ctypes.CDLL("libdnnl.so.2")' 2>/dev/null ||
   "$WORK/venv/bin/python" -c 'import ctypes; ctypes.CDLL("liblapack.so.3")' 2>/dev/null; then
  echo "FAILED: the system libraries are still loadable after hiding" >&2; exit 1
fi
echo "hidden: ${#hide[@]} files"
cd "$WORK/run"
exec env -u PYTHONPATH -u STABLERT_LIBRARY_PATH -u LD_LIBRARY_PATH JAX_PLATFORMS=stablert \
  "$WORK/venv/bin/python" "$ROOT/tests/wheel/check_installed.py"
EOF
  "${unshare_cmd[@]}" bash "$WORK/hidden_run.sh"
else
  echo "SKIPPED: no mount namespace here (${unshare_cmd[*]} failed); step 3's /proc/self/maps check stands"
fi

echo "== 5. sdist: build, contents, offline configure [$((SECONDS - start)) s]"
"$PYTHON" -m build --sdist --no-isolation --outdir "$WORK/sdist" . >"$WORK/sdist.log" 2>&1 ||
  { cat "$WORK/sdist.log" >&2; exit 1; }
sdists=("$WORK"/sdist/stablert-*.tar.gz)
sdist=${sdists[0]}
echo "sdist: $(basename "$sdist") ($(du -h "$sdist" | cut -f1))"
"$PYTHON" - "$sdist" <<'EOF'
import subprocess, sys, tarfile
# Every tracked file the wheel's build reads: CMake files, sources, the CLI, the build tools,
# the package. (Tests, docs, benchmarks are in too but not required.)
listing = subprocess.run(["git", "ls-files"], capture_output=True, text=True)
if listing.returncode != 0:
    sys.exit("FAILED: git ls-files (the sdist contents check needs a git checkout)")
needed = [f for f in listing.stdout.split()
          if f.startswith(("src/", "cmake/", "python/stablert/", "tools/cli/", "tools/build/", "tools/wheel/",
                           "tools/read_check/")) or f in ("CMakeLists.txt", "pyproject.toml", "README.md")]
with tarfile.open(sys.argv[1]) as tar:
    top = tar.getnames()[0].split("/")[0]
    names = {n[len(top) + 1:] for n in tar.getnames()}
missing = [f for f in needed if f not in names]
if missing:
    sys.exit(f"FAILED: the sdist lacks {len(missing)} tracked files, e.g. {missing[:5]}")
if any(n.startswith(("build/", ".venv/", "third_party_cache/", "dist/")) for n in names):
    sys.exit("FAILED: the sdist holds build products, the venv or the header cache")
print(f"sdist holds all {len(needed)} files the build needs ({len(names)} entries)")
EOF
rm -rf "$WORK/sdist_src" && mkdir -p "$WORK/sdist_src" && tar -xzf "$sdist" -C "$WORK/sdist_src"
src=("$WORK"/sdist_src/stablert-*)
# Offline: a network namespace without interfaces when available, and no package index for the
# header fetch's pip either; the pinned header sdist comes from third_party_cache/.
offline=(env PIP_NO_INDEX=1)
if unshare --map-root-user --net true 2>/dev/null; then offline=(unshare --map-root-user --net env PIP_NO_INDEX=1); fi
"${offline[@]}" cmake -S "${src[0]}" -B "$WORK/sdist_configure" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSTABLERT_BUILD_TESTS=OFF -DSTABLERT_BUILD_BENCHMARKS=OFF -DSTABLERT_STATIC_CXX_RUNTIME=ON \
  -DPython3_EXECUTABLE="$PYTHON" -DSTABLERT_PJRT_CACHE_DIR="$ROOT/third_party_cache" >"$WORK/sdist_configure.log" 2>&1 ||
  { cat "$WORK/sdist_configure.log" >&2; exit 1; }
echo "sdist configures offline (${offline[*]}) from $ROOT/third_party_cache"
if [ "${STABLERT_WHEEL_TEST_SDIST_BUILD:-0}" = 1 ]; then
  sdist_start=$SECONDS
  "${offline[@]}" "$PYTHON" -m pip wheel -q --no-index --no-build-isolation --no-deps -w "$WORK/sdist_wheel" \
    -C cmake.define.STABLERT_PJRT_CACHE_DIR="$ROOT/third_party_cache" "$sdist"
  ls "$WORK"/sdist_wheel/stablert-*-py3-none-linux_x86_64.whl
  echo "wheel from the sdist, offline: $((SECONDS - sdist_start)) s"
fi
echo "tests/wheel: OK ($((SECONDS - start)) s)"
