# Usage: cmake -DSPANPROF_BUILD_DIR=.. -DSOURCE_DIR=.. -DWORK_DIR=.. -DNINJA=.. -P run_demo_install.cmake
cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...)
# `cmake --install` must work on the build directory scripts/demo makes, in
# which only the targets scripts/demo names are built. Checks that
# scripts/demo builds `spanprof_demo`, and that every library and program the
# install copies is among what building `spanprof_demo` makes (Ninja's
# dependency graph: `ninja -t query` and `-t inputs`), by installing this
# build.
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
file(READ ${SOURCE_DIR}/scripts/demo demo)
string(REGEX MATCH "cmake --build [^\n]*--target ([^\n]*)" build_line "${demo}")
if(NOT build_line)
  message(FATAL_ERROR "scripts/demo has no 'cmake --build ... --target ...' line")
endif()
separate_arguments(demo_targets UNIX_COMMAND "${CMAKE_MATCH_1}")
if(NOT "spanprof_demo" IN_LIST demo_targets)
  message(FATAL_ERROR "scripts/demo builds ${demo_targets}, not spanprof_demo")
endif()
# What the targets depend on: `-t query` names their direct inputs,
# `-t inputs` everything below those.
run(${NINJA} -C ${SPANPROF_BUILD_DIR} -t query ${demo_targets})
set(direct "${last_output}")
run(${NINJA} -C ${SPANPROF_BUILD_DIR} -t inputs ${demo_targets})
string(REPLACE "\n" ";" inputs "${direct}\n${last_output}")
set(built "")
foreach(input IN LISTS inputs)
  string(STRIP "${input}" input)
  get_filename_component(name "${input}" NAME)
  list(APPEND built "${name}")
endforeach()
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${SPANPROF_BUILD_DIR} --prefix ${prefix})
file(GLOB_RECURSE installed LIST_DIRECTORIES false RELATIVE ${prefix}
     ${prefix}/bin/* ${prefix}/lib*/*.a ${prefix}/lib*/*.so*)
if(NOT installed)
  message(FATAL_ERROR "the install copied no library and no program")
endif()
set(missing "")
foreach(file IN LISTS installed)
  get_filename_component(name "${file}" NAME)
  if(NOT name IN_LIST built)
    list(APPEND missing ${file})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "cmake --install after scripts/demo would miss: ${missing} "
                      "(add their targets to spanprof_demo)")
endif()
message(STATUS "scripts/demo builds everything cmake --install copies")
