# Packaging beyond the CMake package: spanprof.pc for pkg-config users and a
# Debian package through CPack (`cpack -G DEB` in the build directory).
# Included from the top-level CMakeLists.txt inside if(SPANPROF_INSTALL).

# --- spanprof.pc -------------------------------------------------------------
# The .pc file finds its prefix from its own place (${pcfiledir}), so it
# works from any --prefix: count the folders of LIBDIR/pkgconfig.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "spanprof.pc needs a relative CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR")
endif()
string(REPLACE "/" ";" _spanprof_libdir_parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(SPANPROF_PC_UP "")
foreach(_part IN LISTS _spanprof_libdir_parts)
  string(APPEND SPANPROF_PC_UP "../")
endforeach()
string(REGEX REPLACE "/$" "" SPANPROF_PC_UP "${SPANPROF_PC_UP}")

# The libraries' dependencies by their Debian .pc names (libabsl-dev,
# libsimdjson-dev, zlib1g-dev ship these). Static archives (the default) need
# every dependency at the program's link, so all are in Requires and a plain
# `pkg-config --libs spanprof` links; shared libraries carry their own, so
# only what the public headers use (absl::Status) is in Requires and the rest
# is Requires.private / Libs.private (for `pkg-config --static`).
set(_spanprof_public_requires "absl_status absl_statusor")
set(_spanprof_private_requires
    "absl_strings absl_str_format absl_flat_hash_map simdjson zlib")
set(_spanprof_dl "")
if(CMAKE_DL_LIBS)
  set(_spanprof_dl "-l${CMAKE_DL_LIBS}")
endif()
if(BUILD_SHARED_LIBS)
  set(SPANPROF_PC_REQUIRES "${_spanprof_public_requires}")
  set(SPANPROF_PC_LIBS "-lspanprof_runtime")
  set(SPANPROF_PC_PRIVATE
      "Requires.private: ${_spanprof_private_requires}\nLibs.private: -lspanprof_analysis ${_spanprof_dl}\n")
else()
  set(SPANPROF_PC_REQUIRES "${_spanprof_public_requires} ${_spanprof_private_requires}")
  set(SPANPROF_PC_LIBS "-lspanprof_analysis -lspanprof_runtime ${_spanprof_dl}")
  set(SPANPROF_PC_PRIVATE "")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/spanprof.pc.in
               ${PROJECT_BINARY_DIR}/spanprof.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/spanprof.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# --- Debian package ----------------------------------------------------------
# `cpack -G DEB` (run in the build directory) packs what `cmake --install`
# installs, under /usr: headers, static libraries, the spanprof binary, the
# CMake package and spanprof.pc. The -dev packages are what a program that
# links spanprof needs.
set(CPACK_PACKAGE_NAME spanprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "spanprof maintainers <spanprof@localhost>")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libabsl-dev (>= 0~20220623), libsimdjson-dev, zlib1g-dev")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
include(CPack)
