"""setuptools build hook for pyproject.toml: builds gwalign._core with this repository's CMake
project and puts it, with the pure-Python files of python/gwalign/, into the wheel."""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

SOURCE = pathlib.Path(__file__).resolve().parent


class CMakeBuildPy(build_py):
    def run(self):
        super().run()
        build = pathlib.Path(os.environ.get("GWALIGN_CMAKE_BUILD_DIR")
                             or SOURCE / "build-wheel")
        if not (build / "CMakeCache.txt").exists():
            subprocess.check_call([
                "cmake", "-S", str(SOURCE), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                "-DGWALIGN_PYTHON=ON", "-DGWALIGN_BUILD_TESTS=OFF", "-DGWALIGN_BUILD_TOOLS=OFF",
                "-DGWALIGN_BUILD_BENCH=OFF", "-DGWALIGN_ENABLE_CUDA=OFF",
                "-DPython3_EXECUTABLE=" + sys.executable])
        subprocess.check_call(["cmake", "--build", str(build), "--target", "gwalign_python",
                               "-j", os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")])
        package = build / "python" / "gwalign"
        out = pathlib.Path(self.build_lib) / "gwalign"
        out.mkdir(parents=True, exist_ok=True)
        for so in package.glob("_core*.so"):
            shutil.copy2(so, out / so.name)


class BinaryDistribution(Distribution):
    """A platform wheel (it holds a compiled extension)."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": CMakeBuildPy}, distclass=BinaryDistribution,
      packages=["gwalign"], package_dir={"": "python"})
