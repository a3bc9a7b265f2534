// startup_hello: the smallest C++ program (it writes to std::cout, so it
// loads the C++ standard library as every C++ program does), built twice for
// bench/gate's start-up check: `startup_hello_plain` without spanprof and
// `startup_hello` linked
// with spanprof::spanprof (SPANPROF_STARTUP_LINKED), whose main runs in a
// session as a profiled program's would. Run with SPANPROF unset, the two
// must start and exit within 0.3 ms of each other (median of 50 starts):
// linking spanprof must cost a program nothing while profiling is off, not
// even the loading of shared libraries (abseil, simdjson and zlib are linked
// statically or --as-needed; third_party/spanprof_dependency_targets.cmake).
#include <iostream>

#if SPANPROF_STARTUP_LINKED
#include "spanprof/spanprof.h"
#endif

int main() {
#if SPANPROF_STARTUP_LINKED
  return spanprof::ProfileFromEnvironment("hello", [] {
    SPANPROF_SCOPE("hello.print");
    std::cout << "hello" << std::endl;
    return std::cout ? 0 : 1;
  });
#else
  std::cout << "hello" << std::endl;
  return std::cout ? 0 : 1;
#endif
}
