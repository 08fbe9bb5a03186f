# Build options. Every option has a default that suits a plain `cmake -B build` on Debian 12.

option(GWALIGN_BUILD_TESTS "Build the GoogleTest suites" ON)
option(GWALIGN_BUILD_BENCH "Build the Google Benchmark kernels (needs benchmark)" ON)
option(GWALIGN_BUILD_TOOLS "Build the gwalign command-line tool" ON)
# libFuzzer binaries fuzz_<target> (tests/fuzz/); clang only, see scripts/fuzz.sh.
option(GWALIGN_BUILD_FUZZERS "Build the libFuzzer harnesses (clang)" OFF)
if(GWALIGN_BUILD_FUZZERS AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "GWALIGN_BUILD_FUZZERS needs clang (libFuzzer); configure with "
                      "CMAKE_CXX_COMPILER=clang++-14, or use scripts/fuzz.sh")
endif()
option(GWALIGN_NATIVE "Compile the non-kernel code for the build machine's CPU (-march=native); \
the hot kernels are compiled per target and dispatched at run time either way" OFF)
option(GWALIGN_DISPATCH "Compile the hot kernels for x86-64-v2, v3 and v4 and pick one at run time" ON)

# Run-time dispatch (core/isa.h): on x86-64 with a compiler that knows the x86-64 levels, each
# *_isa.cpp kernel file is compiled three times; elsewhere once, with the build's own flags.
if(GWALIGN_NATIVE)
  set(GW_NATIVE_BUILD 1)
else()
  set(GW_NATIVE_BUILD 0)
endif()
set(GW_ISA_MULTI_TARGET 0)
set(GWALIGN_ISA_TARGETS baseline)
set(GWALIGN_ISA_FLAGS_baseline "")
if(GWALIGN_DISPATCH AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag("-march=x86-64-v4" GWALIGN_COMPILER_HAS_X86_64_LEVELS)
  if(GWALIGN_COMPILER_HAS_X86_64_LEVELS)
    set(GW_ISA_MULTI_TARGET 1)
    set(GWALIGN_ISA_TARGETS baseline avx2 avx512)
    set(GWALIGN_ISA_FLAGS_baseline -march=x86-64-v2 -mtune=generic)
    set(GWALIGN_ISA_FLAGS_avx2 -march=x86-64-v3 -mtune=generic)
    # 512-bit vectors pay in the exp-heavy streaming loops (GCC's generic tuning prefers 256 bits).
    set(GWALIGN_ISA_FLAGS_avx512 -march=x86-64-v4 -mtune=generic -mprefer-vector-width=512)
  else()
    message(STATUS "gwalign: ${CMAKE_CXX_COMPILER_ID} does not accept -march=x86-64-v4; "
                   "the kernels are compiled once, for the build's target")
  endif()
endif()

# CUDA: on by default when nvcc is found. Device code lives in private libraries; public headers
# never include CUDA headers, so a consumer of an installed CUDA build needs no nvcc.
include(CheckLanguage)
if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS "/usr/local/cuda/bin/nvcc")
  # nvcc is often installed off PATH; look where the CUDA packages put it.
  set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc" CACHE FILEPATH "CUDA compiler")
endif()
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  set(_gwalign_cuda_default ON)
else()
  set(_gwalign_cuda_default OFF)
endif()
option(GWALIGN_ENABLE_CUDA "Build the CUDA backend" ${_gwalign_cuda_default})

if(GWALIGN_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "GWALIGN_ENABLE_CUDA=ON but no CUDA compiler was found; "
                        "set CMAKE_CUDA_COMPILER or configure with -DGWALIGN_ENABLE_CUDA=OFF")
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # Hopper (H100/H200). Override with -DCMAKE_CUDA_ARCHITECTURES=80;90 etc.
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  # CMake 3.25 does not know nvcc 13's C++20 flag; device code is written in C++17.
  set(CMAKE_CUDA_STANDARD 17)
  # One CUDA runtime per process: core links CUDA::cudart (shared) for its device query, so device
  # code must not pull in the static runtime (CMake's default), or two runtimes would each keep
  # their own device state.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  set(GW_HAS_CUDA 1)
else()
  set(GW_HAS_CUDA 0)
endif()

# Release builds use -O3 (CMake's default Release flags already carry -O3 -DNDEBUG for GCC/Clang;
# stated explicitly so a toolchain file cannot silently weaken them).
string(REPLACE "-O2" "-O3" CMAKE_CXX_FLAGS_RELEASE "${CMAKE_CXX_FLAGS_RELEASE}")
if(NOT CMAKE_CXX_FLAGS_RELEASE MATCHES "-O3")
  string(APPEND CMAKE_CXX_FLAGS_RELEASE " -O3")
endif()
