# shared.cmake — attend outside C (issue 15): libattend.so beside libattend.a,
# the CMake package (find_package(attend) → attend::attend, attend::attend_static)
# and the Python package python/attend (python/CMakeLists.txt).
# Included from the top-level CMakeLists.txt after the `attend` target exists.
#
# libattend.so is built from the same sources (ATTEND_SOURCES) with the same
# compile options, include directories, definitions and link libraries as the
# static `attend` target made by attend_add_library(); those are copied from
# it, so a change there reaches the shared library too. Only the attend_*
# symbols are exported (cmake/attend.map); the soname carries the major
# version: libattend.so.0 → libattend.so.0.1.0.

# Default: on, except in sanitizer builds (a sanitized .so cannot be loaded into
# an unsanitized python, and tools/test.sh's asan configuration is the slowest).
set(ATTEND_SHARED_DEFAULT ON)
if(ATTEND_SANITIZE)
  set(ATTEND_SHARED_DEFAULT OFF)
endif()
option(ATTEND_SHARED "Build libattend.so (and the Python package that loads it)" ${ATTEND_SHARED_DEFAULT})
include(CMakePackageConfigHelpers)

set(ATTEND_EXPORT_TARGETS attend_static)  # CMakeLists.txt: libattend.a, only attend_* global

if(ATTEND_SHARED)
  add_library(attend_shared SHARED ${ATTEND_SOURCES})
  foreach(prop COMPILE_OPTIONS COMPILE_DEFINITIONS INCLUDE_DIRECTORIES LINK_LIBRARIES
               INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS)
    get_target_property(value attend ${prop})
    if(value)
      set_target_properties(attend_shared PROPERTIES ${prop} "${value}")
    endif()
  endforeach()
  # what the library links (OpenBLAS, pthreads, libm) stays private to the .so:
  # a program linking it needs only the header and -lattend
  set_target_properties(attend_shared PROPERTIES
    OUTPUT_NAME attend
    EXPORT_NAME attend
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}
    C_VISIBILITY_PRESET default
    LINK_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/attend.map)
  target_link_options(attend_shared PRIVATE
    -Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/attend.map)
  list(APPEND ATTEND_EXPORT_TARGETS attend_shared)
endif()

install(TARGETS ${ATTEND_EXPORT_TARGETS} EXPORT attendTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(ATTEND_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attend)
install(EXPORT attendTargets NAMESPACE attend:: DESTINATION ${ATTEND_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/attendConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/attendConfig.cmake
  INSTALL_DESTINATION ${ATTEND_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor version may break the API, so 0.1 accepts 0.1.* only
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/attendConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/attendConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/attendConfigVersion.cmake
  DESTINATION ${ATTEND_CMAKE_DIR})

if(ATTEND_SHARED)
  add_subdirectory(${PROJECT_SOURCE_DIR}/python ${CMAKE_BINARY_DIR}/python)
endif()

# The installed tree works for an outside program: tests/install/check.sh
# installs into a scratch prefix and builds tests/install/consumer.c with
# find_package(attend) against both targets (the pkg-config half is the test
# install_pkgconfig in CMakeLists.txt).
# install_pkgconfig (CMakeLists.txt) checks libattend.so too when it is built.
if(ATTEND_TESTS AND ATTEND_SHARED AND TEST install_pkgconfig)
  set_tests_properties(install_pkgconfig PROPERTIES ENVIRONMENT "ATTEND_EXPECT_SHARED=1")
endif()
if(ATTEND_TESTS AND ATTEND_SHARED)
  set(ATTEND_CONSUMER_FLAGS "")
  if(ATTEND_SANITIZE)
    set(ATTEND_CONSUMER_FLAGS "-fsanitize=address,undefined")
  endif()
  add_test(NAME install_cmake
    COMMAND ${CMAKE_COMMAND} -E env "CONSUMER_EXTRA_FLAGS=${ATTEND_CONSUMER_FLAGS}"
            sh ${PROJECT_SOURCE_DIR}/tests/install/check.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR}
               ${CMAKE_C_COMPILER} cmake)
  set_tests_properties(install_cmake PROPERTIES TIMEOUT 300)
endif()

# Only attend_* global in both libraries (issue 30): tests/install/symbols.sh.
if(ATTEND_TESTS)
  set(ATTEND_SYMBOL_LIBS $<TARGET_FILE:attend_static>)
  if(ATTEND_SHARED)
    list(APPEND ATTEND_SYMBOL_LIBS $<TARGET_FILE:attend_shared>)
  endif()
  set(ATTEND_NM nm)
  if(CMAKE_NM)
    set(ATTEND_NM ${CMAKE_NM})
  endif()
  add_test(NAME library_symbols
    COMMAND ${CMAKE_COMMAND} -E env NM=${ATTEND_NM} sh ${PROJECT_SOURCE_DIR}/tests/install/symbols.sh ${ATTEND_SYMBOL_LIBS})
endif()
