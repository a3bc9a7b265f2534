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
# Debian's abseil archives are compiled as position-independent executables
# (initial-exec TLS), which a shared object cannot take: a shared library or
# module that links the static spanprof (libspanprof_c.so, a user's plugin)
# gets abseil and zlib shared, chosen by a generator expression on the type
# of the target being linked. Where an archive is missing, the targets fall
# back to the shared libraries (with a message), so the build still works.
# In the shared build (BUILD_SHARED_LIBS, SPANPROF_STATIC_DEPS OFF) every
# target forwards to the package's own.

# True while linking a shared library or module (evaluated on the target
# being linked, through any static library between).
set(_spanprof_links_shared_object
  "$<OR:$<STREQUAL:$<TARGET_PROPERTY:TYPE>,SHARED_LIBRARY>,$<STREQUAL:$<TARGET_PROPERTY:TYPE>,MODULE_LIBRARY>>")

# Mirrors absl::${name} as spanprof_deps::absl_archive_${name}, an imported
# static library (its .a) with the same dependency graph; sets ${out} to the
# mirror, or to absl::${name} when there is no archive.
function(_spanprof_absl_archive name out)
  set(mirror spanprof_deps::absl_archive_${name})
  set(${out} ${mirror} PARENT_SCOPE)
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
        _spanprof_absl_archive(${CMAKE_MATCH_1} dependency)
        list(APPEND mapped ${dependency})
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
      set(${out} ${original} PARENT_SCOPE)
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

# spanprof_deps::${name}: `static_item` for an executable, `shared_item`
# for a shared object (and for everything when `static_item` is empty).
function(_spanprof_dependency name static_item shared_item)
  if(TARGET spanprof_deps::${name})
    return()
  endif()
  add_library(spanprof_deps::${name} INTERFACE IMPORTED)
  if(static_item)
    set(link "$<IF:${_spanprof_links_shared_object},${shared_item},${static_item}>")
  else()
    set(link "${shared_item}")
  endif()
  set_target_properties(spanprof_deps::${name} PROPERTIES INTERFACE_LINK_LIBRARIES "${link}")
endfunction()

# spanprof_dependency_targets(STATIC <ON|OFF> ABSL <names>...): creates the
# spanprof_deps:: targets (needs absl, simdjson and ZLIB found already).
function(spanprof_dependency_targets)
  cmake_parse_arguments(arg "" "STATIC" "ABSL" ${ARGN})
  foreach(name IN LISTS arg_ABSL)
    set(archive "")
    if(arg_STATIC)
      _spanprof_absl_archive(${name} archive)
    endif()
    _spanprof_dependency(absl_${name} "${archive}" absl::${name})
  endforeach()

  set(zlib_archive "")
  if(arg_STATIC AND NOT TARGET spanprof_deps::zlib_archive)
    find_library(SPANPROF_ZLIB_ARCHIVE NAMES libz.a)
    if(SPANPROF_ZLIB_ARCHIVE)
      add_library(spanprof_deps::zlib_archive STATIC IMPORTED)
      set_target_properties(spanprof_deps::zlib_archive PROPERTIES
                            IMPORTED_LOCATION "${SPANPROF_ZLIB_ARCHIVE}"
                            IMPORTED_LINK_INTERFACE_LANGUAGES C
                            INTERFACE_INCLUDE_DIRECTORIES "${ZLIB_INCLUDE_DIRS}")
    else()
      message(STATUS "spanprof: no libz.a; linking zlib shared")
    endif()
  endif()
  if(TARGET spanprof_deps::zlib_archive)
    set(zlib_archive spanprof_deps::zlib_archive)
  endif()
  _spanprof_dependency(zlib "${zlib_archive}" ZLIB::ZLIB)

  # SQLite (spanprof query) from its static archive too: only the query
  # objects reference it, and a program that never queries links none of it.
  set(sqlite_archive "")
  if(arg_STATIC AND NOT TARGET spanprof_deps::sqlite3_archive)
    find_library(SPANPROF_SQLITE_ARCHIVE NAMES libsqlite3.a)
    if(SPANPROF_SQLITE_ARCHIVE)
      add_library(spanprof_deps::sqlite3_archive STATIC IMPORTED)
      set_target_properties(spanprof_deps::sqlite3_archive PROPERTIES
                            IMPORTED_LOCATION "${SPANPROF_SQLITE_ARCHIVE}"
                            IMPORTED_LINK_INTERFACE_LANGUAGES C
                            INTERFACE_INCLUDE_DIRECTORIES "${SQLite3_INCLUDE_DIRS}"
                            INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m")
    else()
      message(STATUS "spanprof: no libsqlite3.a; linking SQLite shared")
    endif()
  endif()
  if(TARGET spanprof_deps::sqlite3_archive)
    set(sqlite_archive spanprof_deps::sqlite3_archive)
  endif()
  _spanprof_dependency(sqlite3 "${sqlite_archive}" SQLite::SQLite3)

  # simdjson --as-needed, as one flag item: CMake keeps a flag item whole but
  # may merge repeated ones (abseil's own --push-state around -latomic) and
  # move a library away from flags given as separate items. The target
  # still brings simdjson's include directories and definitions.
  set(simdjson_as_needed "")
  if(arg_STATIC AND NOT TARGET spanprof_deps::simdjson_as_needed)
    get_target_property(configs simdjson::simdjson IMPORTED_CONFIGURATIONS)
    set(location "")
    if(configs)
      list(GET configs 0 config)
      get_target_property(location simdjson::simdjson IMPORTED_LOCATION_${config})
    endif()
    if(location)
      add_library(spanprof_deps::simdjson_as_needed INTERFACE IMPORTED)
      foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS
                       INTERFACE_COMPILE_FEATURES)
        get_target_property(value simdjson::simdjson ${property})
        if(value)
          set_target_properties(spanprof_deps::simdjson_as_needed PROPERTIES
                                ${property} "${value}")
        endif()
      endforeach()
      set_target_properties(spanprof_deps::simdjson_as_needed PROPERTIES
        INTERFACE_LINK_LIBRARIES
          "-Wl,--push-state,--as-needed,${location},--pop-state;Threads::Threads")
    endif()
  endif()
  if(TARGET spanprof_deps::simdjson_as_needed)
    set(simdjson_as_needed spanprof_deps::simdjson_as_needed)
  endif()
  _spanprof_dependency(simdjson "${simdjson_as_needed}" simdjson::simdjson)
endfunction()
