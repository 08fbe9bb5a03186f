"""Why `import gwalign` failed: the message of the ImportError that gwalign/__init__.py raises when
the compiled extension gwalign._core, or numpy / scipy, cannot be imported.

Standard library only (it runs when the extension or numpy is missing). A build folder holds
_build_info.py (written by CMake, python/build_info.py.in): the interpreter the extension is built
for, its file name and the build's folders; an installed package has no such file, and the
extension's file name (its ABI tag, e.g. cpython-311) says which interpreter it is for.
"""

import glob
import importlib.machinery
import os
import platform
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _build_info():
    try:
        from . import _build_info as info
    except ImportError:
        return None
    return info


def _this_interpreter():
    return "%s (%s %d.%d)" % (sys.executable or "this interpreter",
                              platform.python_implementation(), *sys.version_info[:2])


def _loadable_by_this_interpreter(filename):
    # The import system looks for exactly _core + one of these suffixes (e.g.
    # .cpython-311-x86_64-linux-gnu.so, .abi3.so, .so); _core.cpython-312-....so is not one.
    return any(filename == "_core" + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def _tag(filename):
    # _core.cpython-311-x86_64-linux-gnu.so -> cpython-311-x86_64-linux-gnu
    parts = filename.split(".")
    return parts[1] if len(parts) > 2 else "no ABI tag"


def _built_for(info, files):
    if info is not None and info.python_executable:
        version = " %s" % info.python_version if info.python_version else ""
        return "%s (Python%s)" % (info.python_executable, version)
    if files:
        return "the interpreter of ABI %s" % _tag(files[0])
    return "an unknown interpreter"


def _build_command(info):
    if info is not None:
        return "cmake --build %s --target gwalign_python" % info.binary_dir
    return "%s -m pip install PATH/TO/gwalign (its source folder)" % (sys.executable or "python3")


def _rebuild_for_this_interpreter(info):
    exe = sys.executable or "python3"
    if info is not None:
        return ("cmake -S %s -B %s -DPython3_EXECUTABLE=%s && cmake --build %s --target "
                "gwalign_python" % (info.source_dir, info.binary_dir, exe, info.binary_dir))
    return "%s -m pip install PATH/TO/gwalign (its source folder)" % exe


def core_import_error(error):
    """The ImportError to raise when `from . import _core` raised `error`."""
    info = _build_info()
    if isinstance(error, ModuleNotFoundError) and error.name in ("numpy", "scipy"):
        return dependency_import_error(error)
    if info is not None and info.reason:
        text = ("gwalign: this build folder (%s) has no Python extension gwalign._core: %s. "
                "Build it with: cmake -S %s -B %s -DGWALIGN_PYTHON=ON && cmake --build %s "
                "--target gwalign_python"
                % (info.binary_dir, info.reason, info.source_dir, info.binary_dir,
                   info.binary_dir))
        return ImportError(text, name="gwalign._core", path=_HERE)
    files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(_HERE, "_core.*"))
                   if not f.endswith((".py", ".pyc")))
    loadable = [f for f in files if _loadable_by_this_interpreter(f)]
    built_for = _built_for(info, files)
    if not files and info is None:
        text = ("gwalign: the compiled extension gwalign._core is missing from %s (an incomplete "
                "installation, not a build folder). Install gwalign for %s with: %s"
                % (_HERE, _this_interpreter(), _build_command(info)))
    elif not files:
        text = ("gwalign: the compiled extension gwalign._core is missing from %s (this build "
                "configured it for %s but did not build it). Build it with: %s"
                % (_HERE, built_for, _build_command(info)))
        if info is not None and info.extension_file and not _loadable_by_this_interpreter(
                info.extension_file):
            text += ("; then run %s (this is %s), or build it for this interpreter instead: %s"
                     % (info.python_executable, _this_interpreter(),
                        _rebuild_for_this_interpreter(info)))
    elif not loadable:
        text = ("gwalign: the compiled extension gwalign._core in %s (%s) was built for %s and "
                "cannot be loaded by %s, which loads %s. Run it with %s, or build it for this "
                "interpreter: %s"
                % (_HERE, ", ".join(files), built_for, _this_interpreter(),
                   "_core" + importlib.machinery.EXTENSION_SUFFIXES[0],
                   info.python_executable if info is not None and info.python_executable
                   else "that interpreter", _rebuild_for_this_interpreter(info)))
    else:
        text = ("gwalign: the compiled extension gwalign._core (%s) failed to load in %s: %s. It "
                "was built for %s; rebuild it with: %s"
                % (os.path.join(_HERE, loadable[0]), _this_interpreter(), error, built_for,
                   _build_command(info)))
    return ImportError(text, name="gwalign._core", path=_HERE)


def dependency_import_error(error):
    """The ImportError to raise when numpy or scipy (error.name) is not importable."""
    info = _build_info()
    text = ("gwalign needs %s, which %s cannot import (%s)."
            % (error.name, _this_interpreter(), error))
    if info is not None and info.python_executable and \
            os.path.realpath(info.python_executable) != os.path.realpath(sys.executable or ""):
        text += (" This build of gwalign is for %s: run that interpreter (e.g. PYTHONPATH=%s %s), "
                 "or install numpy and scipy for this one and build gwalign for it: %s"
                 % (info.python_executable, os.path.dirname(_HERE), info.python_executable,
                    _rebuild_for_this_interpreter(info)))
    else:
        text += (" Install numpy and scipy for this interpreter (Debian: python3-numpy "
                 "python3-scipy).")
    return ImportError(text, name=error.name)
