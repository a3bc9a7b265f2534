// A series of summaries on disk, as `spanprof run` leaves them, for the
// tests of comparing folders of runs.
//
// Example:
//   WriteRichRuns(dir.File("base"), 10, 4000);
//   WriteRichRuns(dir.File("cand"), 10, 4800);  // +20%
//   Spanprof({"compare", dir.File("base"), dir.File("cand")});
#ifndef SPANPROF_TESTS_TESTING_SUMMARY_RUNS_H_
#define SPANPROF_TESTS_TESTING_SUMMARY_RUNS_H_

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/captures.h"

namespace spanprof::testing {

// Writes `runs` summaries of RichCapture at 1000x to
// `folder`/run-<i>.summary.json, each run its own process (pid i + 1), with
// model.forward at `forward_ns` (scaled by 1000) jittered by a few percent
// from run to run.
inline void WriteRichRuns(const std::string& folder, int runs,
                          int64_t forward_ns) {
  for (int i = 0; i < runs; ++i) {
    const int64_t jitter = forward_ns * ((i * 7) % 5 - 2) / 100;
    analysis::Summary summary = analysis::Summarize(
        RichCapture({.scale = 1000, .forward_ns = forward_ns + jitter}));
    summary.pid = i + 1;
    const std::string path =
        folder + "/run-" + std::to_string(i) + ".summary.json";
    ASSERT_TRUE(analysis::WriteSummary(summary, path).ok()) << path;
  }
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_SUMMARY_RUNS_H_
