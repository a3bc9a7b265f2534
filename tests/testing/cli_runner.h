// The CLI and e2e suites run the real `spanprof` binary of this build (both
// suites depend on spanprof_main, so it is there before they run).
//
// Example:
//   const ProcessResult r = Spanprof({"report", trace_path});
//   ASSERT_EQ(r.exit_code, 0) << r.err;
//   EXPECT_THAT(r.out, HasSubstr("self"));
#ifndef SPANPROF_TESTS_TESTING_CLI_RUNNER_H_
#define SPANPROF_TESTS_TESTING_CLI_RUNNER_H_

#include <map>
#include <string>
#include <vector>

#include "tests/testing/test_support.h"

namespace spanprof::testing {

// Runs `spanprof <args...>` to its end with the current environment plus
// `env` (a value of "\x01unset" removes the variable), in `cwd` when not
// empty, and returns its exit code, stdout and stderr.
inline ProcessResult Spanprof(
    std::vector<std::string> args,
    const std::map<std::string, std::string>& env = {},
    const std::string& cwd = "") {
  args.insert(args.begin(), SPANPROF_TEST_BIN_DIR "/spanprof");
  return RunProcess(args, env, cwd);
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_CLI_RUNNER_H_
