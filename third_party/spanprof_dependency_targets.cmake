# The targets through which spanprof's libraries link abseil, zlib and
# simdjson: spanprof_deps::absl_<name>, spanprof_deps::zlib and
# spanprof_deps::simdjson. Included by third_party/dependencies.cmake and by
# the installed spanprofConfig.cmake, so that the exported targets of an
# installed spanprof name the same targets.
#
# Why: a program that links spanprof::spanprof and runs without SPANPROF must
# load no shared library it would not load without spanprof (process start
# is paid by every run of a build tool, profiled or not; 32 more shared
# objects cost ~2 ms). Debian 12 ships abseil and zlib as position-
# independent static archives beside their shared objects, simdjson only as a
# shared object. So in the static build (the default, SPANPROF_STATIC_DEPS ON)
#   - each abseil target is mirrored by an imported static target with the
#     same dependency graph, its archive the .a beside the target's .so;
#   - zlib comes from libz.a;
#   - simdjson is linked --as-needed: only the readers use it, and the session
#     end (collect, analyse, write) reads no JSON, so a program that calls no
#     reader records no need for libsimdjson.so.
# Where an archive is missing, the target falls back to the shared library
# (with a message), so the build still works. In the shared build
# (BUILD_SHARED_LIBS, SPANPROF_STATIC_DEPS OFF) every target forwards to the
# package's own target.

# Mirrors absl::${name} as spanprof_deps::absl_${name} (static archives),
# recursively through its INTERFACE_LINK_LIBRARIES.
function(_spanprof_static_absl name)
  set(mirror spanprof_deps::absl_${name})
  if(TARGET ${mirror})
    return()
  endif()
  set(original absl::${name})
  get_target_property(type ${original} TYPE)
  get_target_property(links ${original} INTERFACE_LINK_LIBRARIES)
  set(mapped "")
  if(links)
    foreach(item IN LISTS links)
      if(item MATCHES "^absl::(.+)$")
        _spanprof_static_absl(${CMAKE_MATCH_1})
        list(APPEND mapped spanprof_deps::absl_${CMAKE_MATCH_1})
      else()
        list(APPEND mapped "${item}")
      endif()
    endforeach()
  endif()
  if(type STREQUAL "INTERFACE_LIBRARY")
    add_library(${mirror} INTERFACE IMPORTED)
  else()
    get_target_property(configs ${original} IMPORTED_CONFIGURATIONS)
    set(shared_object "")
    if(configs)
      list(GET configs 0 config)
      get_target_property(shared_object ${original} IMPORTED_LOCATION_${config})
    endif()
    if(NOT shared_object)
      get_target_property(shared_object ${original} IMPORTED_LOCATION)
    endif()
    string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" archive "${shared_object}")
    if(NOT archive MATCHES "\\.a$" OR NOT EXISTS "${archive}")
      message(STATUS "spanprof: no static archive beside ${shared_object}; "
                     "linking abseil shared")
      add_library(${mirror} INTERFACE IMPORTED)
      set_target_properties(${mirror} PROPERTIES INTERFACE_LINK_LIBRARIES ${original})
      return()
    endif()
    add_library(${mirror} STATIC IMPORTED)
    set_target_properties(${mirror} PROPERTIES IMPORTED_LOCATION "${archive}"
                                               IMPORTED_LINK_INTERFACE_LANGUAGES CXX)
  endif()
  foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS
                   INTERFACE_COMPILE_OPTIONS INTERFACE_COMPILE_FEATURES)
    get_target_property(value ${original} ${property})
    if(value)
      set_target_properties(${mirror} PROPERTIES ${property} "${value}")
    endif()
  endforeach()
  if(mapped)
    set_target_properties(${mirror} PROPERTIES INTERFACE_LINK_LIBRARIES "${mapped}")
  endif()
endfunction()

# spanprof_dependency_targets(STATIC <ON|OFF> ABSL <names>...): creates the
# spanprof_deps:: targets (needs absl, simdjson and ZLIB found already).
function(spanprof_dependency_targets)
  cmake_parse_arguments(arg "" "STATIC" "ABSL" ${ARGN})
  foreach(name IN LISTS arg_ABSL)
    if(arg_STATIC)
      _spanprof_static_absl(${name})
    elseif(NOT TARGET spanprof_deps::absl_${name})
      add_library(spanprof_deps::absl_${name} INTERFACE IMPORTED)
      set_target_properties(spanprof_deps::absl_${name} PROPERTIES
                            INTERFACE_LINK_LIBRARIES absl::${name})
    endif()
  endforeach()
  if(NOT TARGET spanprof_deps::zlib)
    set(zlib_archive "")
    if(arg_STATIC)
      find_library(SPANPROF_ZLIB_ARCHIVE NAMES libz.a)
      set(zlib_archive "${SPANPROF_ZLIB_ARCHIVE}")
    endif()
    if(zlib_archive)
      add_library(spanprof_deps::zlib STATIC IMPORTED)
      set_target_properties(spanprof_deps::zlib PROPERTIES
                            IMPORTED_LOCATION "${zlib_archive}"
                            IMPORTED_LINK_INTERFACE_LANGUAGES C
                            INTERFACE_INCLUDE_DIRECTORIES "${ZLIB_INCLUDE_DIRS}")
    else()
      if(arg_STATIC)
        message(STATUS "spanprof: no libz.a; linking zlib shared")
      endif()
      add_library(spanprof_deps::zlib INTERFACE IMPORTED)
      set_target_properties(spanprof_deps::zlib PROPERTIES INTERFACE_LINK_LIBRARIES ZLIB::ZLIB)
    endif()
  endif()
  if(NOT TARGET spanprof_deps::simdjson)
    add_library(spanprof_deps::simdjson INTERFACE IMPORTED)
    if(arg_STATIC)
      # The same flag items abseil's own targets put around -latomic.
      set_target_properties(spanprof_deps::simdjson PROPERTIES INTERFACE_LINK_LIBRARIES
        "-Wl,--push-state,--as-needed;simdjson::simdjson;-Wl,--pop-state")
    else()
      set_target_properties(spanprof_deps::simdjson PROPERTIES
                            INTERFACE_LINK_LIBRARIES simdjson::simdjson)
    endif()
  endif()
endfunction()
