# Usage: cmake -DSPANPROF_SOURCE_DIR=.. -DWORK_DIR=.. -DCMAKE_CXX_COMPILER=..
#              [-DCMAKE_CXX_COMPILER_LAUNCHER=..] -P run_shared.cmake
# Builds the host and the plugin against one shared libspanprof_runtime.so
# (only those targets: about ten runtime sources) and checks that the
# plugin's spans reach the host's capture, with no warning, whether the
# plugin was opened before or after the recording started. WORK_DIR is kept
# between runs, so a second run only relinks what changed.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
  set(last_err "${err}" PARENT_SCOPE)
endfunction()
set(launcher)
if(CMAKE_CXX_COMPILER_LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
endif()
run(${CMAKE_COMMAND} -S ${SPANPROF_SOURCE_DIR}/tests/e2e/runtime_copies/shared
    -B ${WORK_DIR} -DSPANPROF_SOURCE_DIR=${SPANPROF_SOURCE_DIR}
    -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release
    ${launcher})
run(${CMAKE_COMMAND} --build ${WORK_DIR} --target runtime_copies_host runtime_copies_plugin)
foreach(mode before after)
  run(${WORK_DIR}/bin/runtime_copies_host ${WORK_DIR}/bin/libruntime_copies_plugin.so ${mode})
  if(NOT last_out MATCHES "host.root spans: 1\nplugin.work spans: 1000\n")
    message(FATAL_ERROR "plugin opened ${mode} the recording: the shared runtime lost its spans:\n${last_out}\n${last_err}")
  endif()
  if(last_err MATCHES "second copy")
    message(FATAL_ERROR "plugin opened ${mode} the recording: a warning about a second copy with one shared runtime:\n${last_err}")
  endif()
endforeach()
file(GLOB runtime_libs ${WORK_DIR}/spanprof/runtime/libspanprof_runtime.so*)
if(NOT runtime_libs)
  message(FATAL_ERROR "the shared build made no libspanprof_runtime.so")
endif()
message(STATUS "one shared runtime: the plugin's 1000 spans are in the host's capture")
