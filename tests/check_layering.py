#!/usr/bin/env python3
"""Fails if a source file includes a header from a layer it may not depend on.

The allowed dependencies are those of DESIGN.md section 2 and CMakeLists.txt.
usage: check_layering.py SRC_DIR
"""
import pathlib
import re
import sys

ALLOWED = {
    "base": set(),
    "ir": {"base"},
    "kernels": {"base"},
    "collectives": {"base"},
    "stablehlo": {"base", "ir"},
    "passes": {"base", "ir"},
    "hlo": {"base", "ir"},
    "plan": {"base", "ir", "passes", "kernels"},
    "runtime": {"base", "ir", "stablehlo", "passes", "hlo", "plan", "kernels", "collectives"},
    "capi": {"base", "ir", "stablehlo", "passes", "hlo", "plan", "kernels", "collectives", "runtime"},
    "host": {"base"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"(?:stablert/)?([a-z_]+)/')


def main() -> int:
    src = pathlib.Path(sys.argv[1])
    bad = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc", ".def"):
            continue
        layer = path.relative_to(src).parts[0]
        allowed = ALLOWED.get(layer)
        if allowed is None:
            bad.append(f"{path}: folder '{layer}' is not a known layer")
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) != layer and m.group(1) in ALLOWED and m.group(1) not in allowed:
                bad.append(f"{path}:{number}: layer '{layer}' must not include '{m.group(1)}/'")
    for line in bad:
        print(line)
    print(f"layering: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
