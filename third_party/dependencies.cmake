# System dependencies, all from Debian 12 packages (no vendored copies):
#   libabsl-dev 20220623, libsimdjson-dev 3.0.1, zlib1g-dev, libsqlite3-dev
#   (`spanprof query`),
#   libgtest-dev and libbenchmark-dev for tests and benchmarks.
find_package(Threads REQUIRED)
find_package(absl REQUIRED CONFIG)
if(absl_VERSION AND absl_VERSION VERSION_LESS 20220623)
  message(FATAL_ERROR "spanprof needs abseil >= 20220623 (found ${absl_VERSION})")
endif()
find_package(simdjson 3.0 REQUIRED CONFIG)
find_package(ZLIB REQUIRED)
find_package(SQLite3 REQUIRED)
# Static build: abseil and zlib linked from their static archives, simdjson
# --as-needed, so that a program linking spanprof loads no shared library of
# ours when it runs (third_party/spanprof_dependency_targets.cmake says why).
if(BUILD_SHARED_LIBS)
  set(_spanprof_static_deps_default OFF)
else()
  set(_spanprof_static_deps_default ON)
endif()
option(SPANPROF_STATIC_DEPS
  "Link abseil and zlib statically into programs that link spanprof"
  ${_spanprof_static_deps_default})
# The abseil targets spanprof's libraries link (spanprofConfig.cmake mirrors
# the same list for an installed spanprof).
set(SPANPROF_ABSL_TARGETS status statusor strings str_format flat_hash_map)
include(${CMAKE_CURRENT_LIST_DIR}/spanprof_dependency_targets.cmake)
spanprof_dependency_targets(STATIC ${SPANPROF_STATIC_DEPS} ABSL ${SPANPROF_ABSL_TARGETS})
if(SPANPROF_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
# Google Benchmark: required for our own benchmark programs; otherwise
# optional, for spanprof::benchmark and examples/overhead (built when found).
if(SPANPROF_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED CONFIG)
else()
  find_package(benchmark CONFIG QUIET)
endif()
