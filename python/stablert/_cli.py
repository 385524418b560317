"""The `stablert` console script: runs the command-line tool bundled in the package
(tools/cli, installed next to the plugin library) with the same arguments."""
from __future__ import annotations

import os
import sys


def main() -> None:
    from stablert import cli_path

    path = cli_path()
    if not os.access(path, os.X_OK):
        sys.stderr.write(f"stablert: the command-line tool is missing at {path}; reinstall the package\n")
        sys.exit(1)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
