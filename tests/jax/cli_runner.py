"""Running the `stablert` CLI from the JAX tests (test_host_cli.py, test_mlir_text.py).

`cli()` is the CLI beside the plugin library under test (build/ in a checkout, else the
installed package's); `run_cli(*args)` runs it with this interpreter's environment as
VIRTUAL_ENV, so plugin names ("cpu") resolve to the packages installed beside JAX.
"""
import os
import pathlib
import subprocess
import sys

import stablert


def cli() -> str:
    """The CLI beside the plugin library under test (build/ in a checkout, else the package's)."""
    library = pathlib.Path(stablert.library_path())
    beside = library.parent / "stablert"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else stablert.cli_path()


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, VIRTUAL_ENV=sys.prefix)
    return subprocess.run([cli(), *args], capture_output=True, text=True, timeout=timeout, env=env)
