"""Packaging: `cmake --install` and `pip wheel .` (pyproject.toml + setup.py) give an importable
gwalign outside the build tree."""

import glob
import os
import shutil
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

BINARY_DIR = os.environ.get("GWALIGN_BINARY_DIR")

SMOKE = ("import gwalign, numpy as np; rng = np.random.default_rng(0); "
         "r = gwalign.align(rng.normal(size=(60, 2)), rng.normal(size=(50, 3)), knn=5, "
         "max_iterations=60, progress=False); assert r.plan.shape == (60, 50); "
         "print(gwalign.__file__)")


def run_clean(code, pythonpath):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = pythonpath
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd="/")


@pytest.mark.skipif(not BINARY_DIR, reason="GWALIGN_BINARY_DIR unset (run through ctest)")
def test_cmake_install_puts_an_importable_package_in_site_packages(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", BINARY_DIR, "--prefix", str(prefix)], check=True,
                   capture_output=True)
    found = glob.glob(str(prefix / "lib/python3*/site-packages/gwalign/__init__.py"))
    assert len(found) == 1, "package not under <prefix>/lib/python3.X/site-packages"
    site = os.path.dirname(os.path.dirname(found[0]))
    proc = run_clean(SMOKE, site)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(prefix))


@pytest.mark.skipif(not BINARY_DIR, reason="GWALIGN_BINARY_DIR unset (run through ctest)")
def test_pip_wheel_builds_offline_and_installs_into_a_scratch_prefix(tmp_path):
    for module in ("pip", "setuptools", "wheel"):
        if subprocess.run([sys.executable, "-c", "import " + module]).returncode != 0:
            pytest.skip("python3-%s is not installed (needed for the wheel build)" % module)
    # A copy of the sources, so setuptools' build/ and egg-info never land in the checkout. The
    # CMake build folder of this test run is reused (GWALIGN_CMAKE_BUILD_DIR): the hook's
    # configure-and-build path is the one users get, minus a full recompilation.
    src = tmp_path / "src"
    shutil.copytree(SOURCE_DIR, src, ignore=shutil.ignore_patterns(
        ".git", "build*", "_install*", "__pycache__", "*.egg-info"))
    env = dict(os.environ, GWALIGN_CMAKE_BUILD_DIR=BINARY_DIR)
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-build-isolation",
                    "--no-deps", "--no-index", "-w", str(dist)], check=True, capture_output=True,
                   env=env, cwd=tmp_path)
    wheels = list(dist.glob("gwalign-*.whl"))
    assert len(wheels) == 1 and "linux_x86_64" in wheels[0].name
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--target", str(target), str(wheels[0])], check=True, capture_output=True)
    proc = run_clean(SMOKE, str(target))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(target))
