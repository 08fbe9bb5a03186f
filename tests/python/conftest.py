"""Shared fixtures of the Python package's tests (run by ctest with PYTHONPATH=build/python)."""

import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import gwalign  # noqa: F401  (a build without the package never registers these tests)

SOURCE_DIR = pathlib.Path(os.environ.get("GWALIGN_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))
DATA = SOURCE_DIR / "data"


def run_cli(*args):
    """Runs the gwalign binary this package was built with (GWALIGN_CLI, else gwalign on PATH),
    asserting exit status 0; skips the test when it was not built."""
    path = os.environ.get("GWALIGN_CLI") or shutil.which("gwalign")
    if not path:
        pytest.skip("the gwalign CLI was not built (GWALIGN_CLI unset)")
    proc = subprocess.run([path, *map(str, args)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def cli():
    """run_cli, as a fixture."""
    return run_cli


def read_h5(path, name):
    import h5py
    with h5py.File(path, "r") as f:
        return np.asarray(f[name])


def spiral_pair():
    """The bundled spiral (400 x 2) and swiss roll (500 x 3) with their angles."""
    return (read_h5(DATA / "spiral_400.h5", "/points"), read_h5(DATA / "swissroll_500.h5", "/points"),
            read_h5(DATA / "spiral_400.h5", "/angles"), read_h5(DATA / "swissroll_500.h5", "/angles"))
