# Usage: cmake -DSPANPROF_BUILD_DIR=.. -DWORK_DIR=.. -DCPACK=.. -DDPKG_DEB=..
#              -DLIBDIR=.. -DEXPECTED_VERSION=.. -P run_deb.cmake
# `cpack -G DEB` on this build makes a .deb; its contents (dpkg-deb
# --contents) hold the headers, the libraries, the spanprof binary, the
# pkg-config file and the CMake package, under /usr; its control fields name
# the -dev packages a program linking spanprof needs.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
if(NOT DPKG_DEB)
  message(FATAL_ERROR "dpkg-deb not found (scripts/install-deps installs dpkg-dev)")
endif()
run(${CPACK} -G DEB -B ${WORK_DIR} --config ${SPANPROF_BUILD_DIR}/CPackConfig.cmake)
file(GLOB debs ${WORK_DIR}/*.deb)
list(LENGTH debs count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "cpack -G DEB made ${count} .deb files: ${debs}")
endif()
run(${DPKG_DEB} --contents ${debs})
set(contents "${last_output}")
foreach(path
    ./usr/bin/spanprof
    ./usr/include/spanprof/spanprof.h
    ./usr/include/spanprof/analysis/summary.h
    ./usr/include/spanprof/cli/router.h
    ./usr/${LIBDIR}/libspanprof.a
    ./usr/${LIBDIR}/libspanprof_runtime.a
    ./usr/${LIBDIR}/libspanprof_analysis.a
    ./usr/${LIBDIR}/libspanprof_alloc.a
    ./usr/${LIBDIR}/libspanprof_cli.a
    ./usr/${LIBDIR}/pkgconfig/spanprof.pc
    ./usr/${LIBDIR}/cmake/spanprof/spanprofConfig.cmake
    ./usr/${LIBDIR}/cmake/spanprof/spanprofConfigVersion.cmake
    ./usr/${LIBDIR}/cmake/spanprof/spanprofTargets.cmake)
  string(FIND "${contents}" " ${path}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the .deb lacks ${path}; it holds:\n${contents}")
  endif()
endforeach()
# Nothing outside /usr (a build path leaking into the package).
string(REGEX MATCHALL " \\./[^\n]*" entries "${contents}")
foreach(entry IN LISTS entries)
  if(NOT entry MATCHES "^ \\./(usr(/.*)?)?$")
    message(FATAL_ERROR "the .deb installs outside /usr: ${entry}")
  endif()
endforeach()
run(${DPKG_DEB} --field ${debs} Package Version Depends)
set(fields "${last_output}")
foreach(expected "Package: spanprof" "Version: ${EXPECTED_VERSION}"
                 "libabsl-dev" "libsimdjson-dev" "zlib1g-dev")
  string(FIND "${fields}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the .deb's control lacks '${expected}':\n${fields}")
  endif()
endforeach()
message(STATUS "cpack -G DEB: ${debs}")
