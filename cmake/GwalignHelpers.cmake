# Helpers that keep every module's CMakeLists.txt a few lines long.
include(GNUInstallDirs)
include(GoogleTest)

# Warnings shared by every gwalign C++ target.
function(gwalign_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unknown-pragmas>)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 reports false "may be used uninitialized" inside Eigen's AVX-512 intrinsics.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
  endif()
endfunction()

# Warnings and architecture flags shared by every gwalign C++ target.
function(gwalign_set_compile_options target)
  gwalign_set_warnings(${target})
  if(GWALIGN_NATIVE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
  endif()
endfunction()

# gwalign_add_module(NAME <folder> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
#
# Creates the library gwalign_<folder> (alias gwalign::<folder>, exported as gwalign::<folder>).
# Public headers are included as "<folder>/<header>.h" relative to the source root, and are
# installed under include/gwalign/<folder>/ (cuda/ subfolders and *_reference.h stay private).
function(gwalign_add_module)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target gwalign_${ARG_NAME})
  add_library(${target} ${ARG_SOURCES})
  add_library(gwalign::${ARG_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${ARG_NAME} OUTPUT_NAME gwalign_${ARG_NAME})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/generated>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/gwalign>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  gwalign_set_compile_options(${target})
  install(TARGETS ${target} EXPORT gwalignTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gwalign/${ARG_NAME}
    FILES_MATCHING PATTERN "*.h"
    PATTERN "cuda" EXCLUDE
    PATTERN "*_reference.h" EXCLUDE
    PATTERN "workloads.h" EXCLUDE
    PATTERN "*_impl.h" EXCLUDE)
endfunction()

# gwalign_add_testing_sources(<folder> SOURCES ... [DEPS ...])
#
# Adds a module's test oracles (*_reference.cpp) and synthetic workload generators to
# gwalign_testing (top-level CMakeLists.txt): linked by every test (gwalign_add_test), the
# benchmarks and the CLI, never installed. Their headers stay in the module folder (a reader finds
# the oracle next to the kernel) and are not installed either. DEPS: private build dependencies
# (Eigen, OpenMP, Boost).
function(gwalign_add_testing_sources module)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  set(sources "")
  foreach(source IN LISTS ARG_SOURCES)
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  endforeach()
  target_sources(gwalign_testing PRIVATE ${sources})
  target_link_libraries(gwalign_testing PUBLIC gwalign_${module} PRIVATE ${ARG_DEPS})
endfunction()

# gwalign_add_isa_kernels(<folder> SOURCES ... [DEPS ...])
#
# Compiles the kernel files SOURCES (named *_isa.cpp) once per run-time target of
# GWALIGN_ISA_TARGETS, with that target's -march flags, GW_ISA_NS=isa_<target> and Eigen renamed to
# gw_isa_<target>_eigen (core/isa_dispatch_impl.h says why), into the module gwalign_<folder>.
# DEPS give include directories and compile flags (Eigen3::Eigen, OpenMP::OpenMP_CXX).
function(gwalign_add_isa_kernels module)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  gwalign_add_isa_kernels_to(gwalign_${module} SOURCES ${ARG_SOURCES} DEPS ${ARG_DEPS})
endfunction()

# The same for any target (e.g. an executable): gwalign_add_isa_kernels_to(<target> SOURCES ...).
function(gwalign_add_isa_kernels_to target)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  foreach(isa IN LISTS GWALIGN_ISA_TARGETS)
    set(objects ${target}_isa_${isa})
    add_library(${objects} OBJECT ${ARG_SOURCES})
    set_target_properties(${objects} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_features(${objects} PRIVATE cxx_std_20)
    target_include_directories(${objects} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
    target_link_libraries(${objects} PRIVATE ${ARG_DEPS})
    gwalign_set_warnings(${objects})
    # The kernels never read floating-point exception flags; without this GCC will not if-convert
    # the range selects of the fast exponentials, and the float row loop stays scalar (4x slower).
    target_compile_options(${objects} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-fno-trapping-math>)
    if(GW_ISA_MULTI_TARGET)
      target_compile_options(${objects} PRIVATE ${GWALIGN_ISA_FLAGS_${isa}})
    elseif(GWALIGN_NATIVE)
      target_compile_options(${objects} PRIVATE -march=native)
    endif()
    target_compile_definitions(${objects} PRIVATE GW_ISA_NS=isa_${isa} Eigen=gw_isa_${isa}_eigen)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${objects}>)
    set_property(GLOBAL APPEND PROPERTY GWALIGN_ISA_OBJECT_LIBRARIES ${objects})
  endforeach()
endfunction()

# gwalign_add_cuda_library(NAME <name> SOURCES ... [DEPS ...])
#
# A private static library of device code (kernels + launchers). Link it PRIVATE into the module
# that orchestrates it. Exported only because static archives must travel with their users.
function(gwalign_add_cuda_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  set(target gwalign_${ARG_NAME})
  add_library(${target} STATIC ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${ARG_NAME}
    CUDA_SEPARABLE_COMPILATION OFF
    POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  target_link_libraries(${target} PUBLIC CUDA::cudart ${ARG_DEPS})
  install(TARGETS ${target} EXPORT gwalignTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

# gwalign_add_test(NAME <binary> SOURCES ... [LIBS ...] [LABELS ...])
#
# One GoogleTest binary; each TEST becomes a ctest entry carrying LABELS (GPU suites use "gpu").
function(gwalign_add_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} gwalign_testing GTest::gtest
                                             GTest::gtest_main)
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  gwalign_set_compile_options(${ARG_NAME})
  target_compile_definitions(${ARG_NAME} PRIVATE
    GW_SOURCE_DIR="${PROJECT_SOURCE_DIR}" GW_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set(labels ${ARG_LABELS})
  if(NOT labels)
    set(labels cpu)
  endif()
  # gtest_discover_tests forwards PROPERTIES through a generated script, where an unescaped list
  # would keep only its first element.
  string(REPLACE ";" "\\;" labels "${labels}")
  # Tests run in parallel (ctest -j) on few cores: OpenMP threads that spin while waiting for a
  # descheduled peer make a 2-thread test ten times slower, so workers sleep instead.
  gtest_discover_tests(${ARG_NAME}
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${labels}" ENVIRONMENT "OMP_WAIT_POLICY=PASSIVE")
endfunction()
