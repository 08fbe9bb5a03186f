# Third-party dependencies, all found with find_package. Keep this list in step with
# cmake/gwalignConfig.cmake.in (the find_dependency calls an installed package needs).

find_package(Eigen3 3.3 REQUIRED NO_MODULE)
# Boost.Graph is header-only for what we use (Dijkstra over a CSR graph); only headers are needed.
find_package(Boost 1.71 REQUIRED)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(cxxopts 3 REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
set(GW_HAS_OPENMP 1)
# LEMON, the linear-OT oracle of the tests and benchmarks, is found by linear_ot/CMakeLists.txt.

if(GWALIGN_BUILD_TESTS)
  find_package(GTest REQUIRED)
  # The CLI tests read the JSON the CLI prints with a real parser.
  find_package(nlohmann_json 3 REQUIRED)
endif()
if(GWALIGN_BUILD_BENCH)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "gwalign: Google Benchmark not found; kernel benchmarks are not built")
  endif()
endif()
if(GW_HAS_CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()

# Targets used below: Eigen3::Eigen, Boost::headers, hdf5::hdf5 (FindHDF5 defines it since CMake
# 3.19), cxxopts::cxxopts, OpenMP::OpenMP_CXX, GTest::gtest(_main), benchmark::benchmark, CUDA::cudart.
