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
#include <utility>
#include <vector>

#include "gtest/gtest.h"
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

// A fixture for the tests of `spanprof run` and `spanprof ab`: they run
// run_probe (tests/cli/run_probe.cc), a tiny profiled program that logs each
// call to `Log()`, and write their runs under `Out()`, a folder of a scratch
// directory.
class ProbeRunTest : public ::testing::Test {
 protected:
  static constexpr char kProbe[] = SPANPROF_TEST_BIN_DIR "/run_probe";

  explicit ProbeRunTest(std::string out_name = "runs")
      : out_name_(std::move(out_name)) {}

  // `spanprof run --runs N --out DIR <extra...> -- run_probe --log LOG
  // <probe...>`.
  ProcessResult RunProbe(int runs, const std::vector<std::string>& extra = {},
                         const std::vector<std::string>& probe = {}) {
    std::vector<std::string> args = {"run", "--runs", std::to_string(runs),
                                     "--out", Out()};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", kProbe, "--log", Log()});
    args.insert(args.end(), probe.begin(), probe.end());
    return Spanprof(args);
  }
  std::string Out() const { return dir_.File(out_name_); }
  std::string Out(const std::string& name) const {
    return dir_.File(out_name_ + "/" + name);
  }
  std::string Log() const { return dir_.File("probe.log"); }

  TempDir dir_;

 private:
  std::string out_name_;
};

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_CLI_RUNNER_H_
