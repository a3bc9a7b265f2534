// One runtime per process: a host and a plugin it dlopen's, each linked with
// the static runtime, hold two copies. The plugin's spans cannot reach the
// host's capture, and spanprof must say so on stderr, naming the plugin,
// whether the plugin was opened before the recording started (the host's
// copy finds it) or after (the plugin's copy finds the recording host). The
// shared build, where they are one copy and the spans arrive, is the ctest
// runtime_copies.shared (tests/e2e/runtime_copies/shared), and these tests
// themselves when the whole project is built with -DBUILD_SHARED_LIBS=ON.
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::RunProcess;

constexpr char kHost[] = SPANPROF_TEST_BIN_DIR "/runtime_copies_host";
constexpr char kPlugin[] = SPANPROF_TEST_BIN_DIR "/libruntime_copies_plugin.so";

#if defined(SPANPROF_TEST_SHARED_RUNTIME)
// The shared build (-DBUILD_SHARED_LIBS=ON): host and plugin link one
// libspanprof, so the plugin's spans land in the host's capture, and nothing
// is said, whenever the plugin is opened.
void ExpectOneRuntime(const char* when) {
  const auto result = RunProcess({kHost, kPlugin, when});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("plugin.work spans: 1000"), std::string::npos)
      << result.out;
  EXPECT_EQ(result.err.find("second copy"), std::string::npos) << result.err;
}

TEST(RuntimeCopiesTest, PluginOpenedBeforeTheRecordingSharesTheRuntime) {
  ExpectOneRuntime("before");
}

TEST(RuntimeCopiesTest, PluginOpenedDuringTheRecordingSharesTheRuntime) {
  ExpectOneRuntime("after");
}
#else
TEST(RuntimeCopiesTest, PluginOpenedBeforeTheRecordingIsNamed) {
  const auto result = RunProcess({kHost, kPlugin, "before"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // The limitation itself: the plugin's spans went to its own copy.
  EXPECT_NE(result.out.find("plugin.work spans: 0"), std::string::npos)
      << result.out;
  EXPECT_NE(result.err.find("libruntime_copies_plugin.so carries a second "
                            "copy of the spanprof runtime"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("BUILD_SHARED_LIBS"), std::string::npos);
}

TEST(RuntimeCopiesTest, PluginOpenedDuringTheRecordingSaysSo) {
  const auto result = RunProcess({kHost, kPlugin, "after"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("plugin.work spans: 0"), std::string::npos)
      << result.out;
  EXPECT_NE(result.err.find("a second copy of the spanprof runtime was "
                            "loaded (in "),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("libruntime_copies_plugin.so) while the copy in "),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("runtime_copies_host records"), std::string::npos)
      << result.err;
}

#endif  // SPANPROF_TEST_SHARED_RUNTIME

TEST(RuntimeCopiesTest, ASingleCopyIsSilent) {
  // The host alone (a plugin path that does not exist fails after the
  // recording started, without a second copy): no warning.
  const auto result = RunProcess({kHost, "/nonexistent/plugin.so", "after"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err.find("second copy"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace spanprof
