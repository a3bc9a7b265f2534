// A session configuration for tests that run real sessions: outputs in a
// test's scratch directory, nothing printed.
//
// Example:
//   TempDir dir;
//   Profile(QuietConfig(dir), "test.root", [] { SPANPROF_SCOPE("work"); });
//   const std::string trace = dir.File("out/trace.json");
#ifndef SPANPROF_TESTS_TESTING_SESSION_CONFIG_H_
#define SPANPROF_TESTS_TESTING_SESSION_CONFIG_H_

#include <string>

#include "spanprof/session.h"
#include "tests/testing/test_support.h"

namespace spanprof::testing {

// A quiet `Config` that writes `dir`/`prefix`trace.json and
// `dir`/`prefix`summary.json (`prefix` "out/" by default; "" writes to
// `dir` itself, "child-out/" keeps a second session's files apart).
inline Config QuietConfig(const TempDir& dir,
                          const std::string& prefix = "out/") {
  Config config;
  config.trace_path = dir.File(prefix + "trace.json");
  config.summary_path = dir.File(prefix + "summary.json");
  config.quiet = true;
  return config;
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_SESSION_CONFIG_H_
