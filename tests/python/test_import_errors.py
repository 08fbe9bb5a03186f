"""`import gwalign` from an incomplete or mismatched build fails at once with an ImportError that
names gwalign._core, the interpreter the extension is for and the command that builds it."""

import os
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest

from conftest import SOURCE_DIR

BINARY_DIR = os.environ.get("GWALIGN_BINARY_DIR")
needs_build = pytest.mark.skipif(not BINARY_DIR, reason="GWALIGN_BINARY_DIR unset (run through "
                                                        "ctest)")


def import_gwalign(pythonpath, prelude=""):
    """`import gwalign` in a fresh interpreter; (returncode, last line of stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(pythonpath)
    proc = subprocess.run([sys.executable, "-c", prelude + "import gwalign"], capture_output=True,
                          text=True, env=env, cwd="/")
    lines = proc.stderr.strip().splitlines()
    return proc.returncode, lines[-1] if lines else ""


def cmake_generator():
    cache = open(os.path.join(BINARY_DIR, "CMakeCache.txt")).read()
    return re.search(r"^CMAKE_GENERATOR:INTERNAL=(.*)$", cache, re.M).group(1)


@needs_build
def test_import_from_a_configured_but_unbuilt_folder_names_the_extension_interpreter_command(
        tmp_path):
    # What a CLI-only build leaves (scripts/demo.sh before this fix): configured, the Python
    # package's target never built. The folder must hold a real package, not an empty namespace.
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(SOURCE_DIR), "-B", str(build), "-G", cmake_generator(),
                    "-DCMAKE_BUILD_TYPE=Release", "-DGWALIGN_ENABLE_CUDA=OFF",
                    "-DGWALIGN_BUILD_TESTS=OFF", "-DGWALIGN_BUILD_BENCH=OFF",
                    "-DPython3_EXECUTABLE=" + sys.executable],
                   check=True, capture_output=True)
    assert (build / "python/gwalign/__init__.py").is_file()
    code, message = import_gwalign(build / "python")
    assert code != 0
    assert message.startswith("ImportError: gwalign: the compiled extension gwalign._core is "
                              "missing from %s" % (build / "python/gwalign"))
    assert sys.executable in message
    command = "cmake --build %s --target gwalign_python" % build
    assert message.endswith("Build it with: " + command)
    # The command it names is one this folder knows (dry run: nothing is compiled).
    dry_run = "-n" if cmake_generator() == "Ninja" else "--dry-run"
    subprocess.run(command.split() + ["--", dry_run], check=True, capture_output=True)


@needs_build
@pytest.mark.parametrize("flag,reason", [
    ("-DGWALIGN_PYTHON=OFF", "this build was configured with -DGWALIGN_PYTHON=OFF"),
    # An interpreter CMake cannot run: what a machine without the development files gets.
    ("-DPython3_EXECUTABLE=/nonexistent/python3",
     "CMake found no Python 3 development files or no pybind11 when this build was configured "
     "(Debian: apt-get install python3-dev pybind11-dev)")])
def test_import_of_a_folder_configured_without_python_says_why_and_how_to_build_it(
        tmp_path, flag, reason):
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(SOURCE_DIR), "-B", str(build), "-G", cmake_generator(),
                    flag, "-DGWALIGN_ENABLE_CUDA=OFF", "-DGWALIGN_BUILD_TESTS=OFF",
                    "-DGWALIGN_BUILD_BENCH=OFF"],
                   check=True, capture_output=True)
    code, message = import_gwalign(build / "python")
    assert code != 0
    assert message == ("ImportError: gwalign: this build folder (%s) has no Python extension "
                       "gwalign._core: %s. Build it with: cmake -S %s -B %s -DGWALIGN_PYTHON=ON "
                       "&& cmake --build %s --target gwalign_python"
                       % (build, reason, SOURCE_DIR, build, build))


@needs_build
def test_extension_of_another_abi_names_both_interpreters_and_the_rebuild_command(tmp_path):
    # This build's package, with its extension renamed to another CPython's ABI tag and the build
    # record saying it was built by that interpreter: the file is then one this interpreter does
    # not load, exactly as a build made for another Python.
    package = tmp_path / "python" / "gwalign"
    shutil.copytree(os.path.join(BINARY_DIR, "python", "gwalign"), package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    major, minor = sys.version_info[:2]
    other_tag = "cpython-%d%d" % (major, minor + 1)
    other_suffix = suffix.replace("cpython-%d%d" % (major, minor), other_tag)
    assert other_suffix != suffix
    (package / ("_core" + suffix)).rename(package / ("_core" + other_suffix))
    other_python = "/opt/python%d.%d/bin/python3" % (major, minor + 1)
    info = (package / "_build_info.py").read_text()
    info = re.sub(r'^python_executable = ".*"$', 'python_executable = "%s"' % other_python, info,
                  flags=re.M)
    info = re.sub(r'^python_version = ".*"$', 'python_version = "%d.%d.0"' % (major, minor + 1),
                  info, flags=re.M)
    (package / "_build_info.py").write_text(info)
    code, message = import_gwalign(tmp_path / "python")
    assert code != 0
    assert message.startswith("ImportError: gwalign: the compiled extension gwalign._core in %s "
                              "(_core%s) was built for %s (Python %d.%d.0) and cannot be loaded "
                              "by %s" % (package, other_suffix, other_python, major, minor + 1,
                                         sys.executable))
    assert "loads _core%s" % suffix in message
    assert message.endswith("-DPython3_EXECUTABLE=%s && cmake --build %s --target gwalign_python"
                            % (sys.executable, BINARY_DIR))


@needs_build
def test_interpreter_without_numpy_gets_an_import_error_naming_numpy():
    # sys.modules["numpy"] = None makes `import numpy` fail as in an interpreter without it.
    code, message = import_gwalign(os.path.join(BINARY_DIR, "python"),
                                   prelude="import sys; sys.modules['numpy'] = None; ")
    assert code != 0
    assert message.startswith("ImportError: gwalign needs numpy, which %s (" % sys.executable)
    assert message.endswith("Install numpy and scipy for this interpreter (Debian: python3-numpy "
                            "python3-scipy).")
