// The drain under load: threads record spans, arguments, counts and thread
// names while the helper thread copies their rings into the stream (TSan
// runs this label), and the kept stream holds every span.
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/spanprof.h"
#include "spanprof/stream.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::QuietConfig;
using spanprof::testing::ReadText;
using spanprof::testing::TempDir;

constexpr int kThreads = 4;
constexpr int kSpansPerThread = 20000;

TEST(StreamConcurrencyTest, ThreadsRecordWhileTheDrainCopies) {
  TempDir dir;
  Config config = QuietConfig(dir, "");
  config.stream_path = dir.File("s.stream");
  config.keep_stream = true;
  Profile(config, "load.root", [] {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back(Bind([t] {
        SetThreadName(("recorder-" + std::to_string(t)).c_str());
        for (int i = 0; i < kSpansPerThread; ++i) {
          SPANPROF_SCOPE("load.step");
          SPANPROF_ARG("i", i);
          if (i % 7 == 0) SPANPROF_COUNT("sevens");
          if (i % 5000 == 0) {
            SetThreadName(
                ("recorder-" + std::to_string(t) + "-" + std::to_string(i))
                    .c_str());
          }
        }
      }));
    }
    for (std::thread& thread : threads) thread.join();
  });
  absl::StatusOr<RecoveredCapture> recovered =
      RecoverStream(ReadText(dir.File("s.stream")), "s.stream");
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_EQ(recovered->capture.spans.size(),
            1u + static_cast<size_t>(kThreads) * kSpansPerThread);
  const analysis::Summary summary = analysis::Summarize(recovered->capture);
  EXPECT_TRUE(summary.complete);
  EXPECT_TRUE(summary.validation_issues.empty());
  // Every span kept its argument.
  EXPECT_EQ(recovered->capture.args.size(),
            static_cast<size_t>(kThreads) * kSpansPerThread +
                static_cast<size_t>(kThreads) * ((kSpansPerThread + 6) / 7));
}

}  // namespace
}  // namespace spanprof
