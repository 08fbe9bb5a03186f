# install(): libraries, headers, the generated config.h, and an exported CMake package so that
# `find_package(gwalign CONFIG)` works from an install prefix.
include(CMakePackageConfigHelpers)

install(FILES ${PROJECT_BINARY_DIR}/generated/core/config.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gwalign/core)

set(GWALIGN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gwalign)
install(EXPORT gwalignTargets NAMESPACE gwalign:: DESTINATION ${GWALIGN_CMAKE_DIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/gwalignConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gwalignConfig.cmake
  INSTALL_DESTINATION ${GWALIGN_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/gwalignConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/gwalignConfig.cmake
  ${PROJECT_BINARY_DIR}/gwalignConfigVersion.cmake
  DESTINATION ${GWALIGN_CMAKE_DIR})
