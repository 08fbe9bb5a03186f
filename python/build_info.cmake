# gwalign_python_build_info(REASON...): what `import gwalign` from this build folder can tell about
# it, written at configure time so that ${PROJECT_BINARY_DIR}/python/gwalign/ is a real package
# from the start (never an empty namespace package, whichever targets were built):
#   __init__.py     the package's own, which imports the extension gwalign._core and, when that
#                   fails, raises an ImportError saying why (gwalign/_diagnose.py)
#   _diagnose.py    that explanation (no numpy, no extension needed)
#   _build_info.py  the interpreter the extension is built for, its file name, this build's
#                   folders, and REASON: empty when the extension is configured, else why there
#                   is none (GWALIGN_PYTHON=OFF, no Python development files or pybind11)
# The build copies the other .py files (python/CMakeLists.txt); these three are current after
# every configure. Included by the top-level CMakeLists.txt.
set(gwalign_python_package_dir ${PROJECT_BINARY_DIR}/python/gwalign)

function(gwalign_python_build_info)
  string(JOIN "" GWALIGN_PY_REASON ${ARGV})  # REASON may come in pieces, joined as message() does
  set(GWALIGN_PY_EXECUTABLE "${Python3_EXECUTABLE}")
  set(GWALIGN_PY_VERSION "${Python3_VERSION}")
  set(GWALIGN_PY_EXTENSION "")
  if(TARGET gwalign_python_core)
    get_target_property(suffix gwalign_python_core SUFFIX)
    get_target_property(name gwalign_python_core OUTPUT_NAME)
    set(GWALIGN_PY_EXTENSION "${name}${suffix}")
  endif()
  set(src ${PROJECT_SOURCE_DIR}/python)
  configure_file(${src}/build_info.py.in ${gwalign_python_package_dir}/_build_info.py @ONLY)
  # Copied now (the build copies them again when they change); file(COPY_FILE) does not make
  # CMake reconfigure on every edit, as configure_file would.
  foreach(name __init__.py _diagnose.py)
    file(COPY_FILE ${src}/gwalign/${name} ${gwalign_python_package_dir}/${name} ONLY_IF_DIFFERENT)
  endforeach()
endfunction()
