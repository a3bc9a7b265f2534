// The C API through another language's FFI: examples/c/spanprof_ctypes.py
// loads the C API's shared object with Python's ctypes and records nested
// spans with arguments and key fields (spanprof_site_get_tagged through a
// ctypes.Structure) into a session from the environment. Skips where
// python3 is missing, except under CI=true (scripts/install-deps installs it).
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;

TEST(PythonCtypesTest, RecordsSpansThroughTheCApi) {
#ifdef SPANPROF_TEST_SANITIZED
  GTEST_SKIP() << "a sanitized libspanprof_c.so cannot be loaded by an "
                  "uninstrumented python3; the Release build runs this test";
#endif
  const auto which = RunProcess({"/bin/sh", "-c", "command -v python3"});
  if (which.exit_code != 0) {
    SPANPROF_SKIP_UNLESS_CI("python3 is not installed");
  }
  TempDir dir;
  const auto result =
      RunProcess({"/bin/sh", "-c", "exec python3 \"$0\" \"$1\"",
                  SPANPROF_TEST_SOURCE_DIR "/examples/c/spanprof_ctypes.py",
                  SPANPROF_TEST_C_LIBRARY},
                 {{"SPANPROF", "1"},
                  {"SPANPROF_OUT", dir.File("out/trace.json")},
                  {"SPANPROF_SUMMARY_OUT", dir.File("out/summary.json")},
                  {"SPANPROF_QUIET", "1"}});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;

  const absl::StatusOr<Capture> trace =
      analysis::ReadTrace(dir.File("out/trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  const Capture& c = *trace;
  ASSERT_EQ(c.spans.size(), 11u);
  int steps = 0;
  int squares = 0;
  for (const Span& s : c.spans) {
    const Site& site = c.sites[s.site];
    EXPECT_EQ(c.threads[s.thread].name, "python-main");
    if (site.name == "py.step") {
      ++steps;
      EXPECT_EQ(s.depth, 1u);
      EXPECT_EQ(site.phase, "compute");
      EXPECT_EQ(site.module, "python");
      ASSERT_EQ(s.arg_count, 3u);
      EXPECT_EQ(c.args[s.first_arg].key, "index");
      EXPECT_EQ(c.args[s.first_arg + 1].key, "scale");
      EXPECT_TRUE(c.args[s.first_arg + 1].is_double);
      // spanprof_arg_str from Python: "step-<index>".
      const SpanArg& label = c.args[s.first_arg + 2];
      EXPECT_EQ(label.key, "label");
      EXPECT_TRUE(label.is_string);
      EXPECT_EQ(label.text,
                "step-" + std::to_string(c.args[s.first_arg].int_value));
    } else if (site.name == "py.square") {
      ++squares;
      EXPECT_EQ(s.depth, 2u);
      EXPECT_GT(s.heartbeats, 0u);
      EXPECT_EQ(site, (Site{.name = "py.square",
                            .backend = "cpython",
                            .dtype = "int",
                            .device = "cpu0"}));
    } else {
      EXPECT_EQ(site.name, "py.run");
    }
  }
  EXPECT_EQ(steps, 5);
  EXPECT_EQ(squares, 5);
}

}  // namespace
}  // namespace spanprof
