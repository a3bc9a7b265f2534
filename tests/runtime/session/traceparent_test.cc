// Cross-process parents, W3C style: traceparent parsing and
// rendering, the session's trace id, remote parents, exported span ids and
// the spawn helper.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"
#include "tests/testing/lookup.h"

namespace spanprof {
namespace {

using ::spanprof::testing::FindSpan;

constexpr char kHeader[] =
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// The span id of a traceparent (its third field).
uint64_t SpanIdOf(const std::string& traceparent) {
  EXPECT_EQ(traceparent.size(), 55u) << traceparent;
  return std::stoull(traceparent.substr(36, 16), nullptr, 16);
}

TEST(TraceparentTest, ParsesAndRendersAW3CHeader) {
  const absl::StatusOr<Context> ctx = ContextFromTraceparent(kHeader);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_TRUE(ctx->remote());
  EXPECT_FALSE(ctx->valid());
  EXPECT_EQ(ctx->Traceparent(), kHeader);
  // Flags other than 01 are read; the rendering says sampled.
  const absl::StatusOr<Context> unsampled = ContextFromTraceparent(
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled.ok());
  EXPECT_EQ(unsampled->Traceparent(), kHeader);
  // A later version may append fields after a '-'.
  const absl::StatusOr<Context> later = ContextFromTraceparent(
      "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-ever");
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(later->Traceparent(), kHeader);
}

TEST(TraceparentTest, MalformedHeadersAreErrorsNamingTheFault) {
  const struct {
    std::string header;
    std::string fault;
  } cases[] = {
      {"", "55 characters"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0", "55"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", "exactly"},
      {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "ff"},
      {"0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version"},
      {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "trace id"},
      {"00-4bf92f3577b34da6a3ce929d0e0e473z-00f067aa0ba902b7-01", "trace id"},
      {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "zeros"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "zeros"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bX-01", "parent"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x", "flags"},
      {"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "'-'"},
      {"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", "later"},
  };
  for (const auto& c : cases) {
    const absl::StatusOr<Context> ctx = ContextFromTraceparent(c.header);
    ASSERT_FALSE(ctx.ok()) << c.header;
    EXPECT_EQ(ctx.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(ctx.status().message().find(c.fault), std::string::npos)
        << c.header << ": " << ctx.status();
  }
}

TEST(TraceparentTest, AnInvalidContextRendersNothing) {
  EXPECT_EQ(Context().Traceparent(), "");
  EXPECT_EQ(CurrentContext().Traceparent(), "");  // no session
}

TEST(TraceparentTest, EachSessionHasItsOwnRandomTraceId) {
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE("one"); }
  const Capture a = StopRecording();
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE("two"); }
  const Capture b = StopRecording();
  ASSERT_EQ(a.trace_id.size(), 32u);
  EXPECT_NE(a.trace_id, std::string(32, '0'));
  EXPECT_NE(a.trace_id, b.trace_id);
  EXPECT_NE(a.span_id_seed, b.span_id_seed);
  EXPECT_EQ(a.remote_parent_span_id, 0u);
}

TEST(TraceparentTest, ASessionAdoptsItsRemoteParent) {
  RecordingOptions options;
  options.traceparent = kHeader;
  ASSERT_TRUE(StartRecording(options).ok());
  { SPANPROF_SCOPE("child.work"); }
  const Capture c = StopRecording();
  EXPECT_EQ(c.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(c.remote_parent_span_id, 0x00f067aa0ba902b7u);

  options.traceparent = "00-bogus";
  const absl::Status bad = StartRecording(options);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("traceparent"), std::string::npos) << bad;
  EXPECT_FALSE(IsRecording());
}

TEST(TraceparentTest, AnExportedSpanCarriesTheIdItsTraceparentNamed) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::string first;
  std::string again;
  std::string inner;
  {
    SPANPROF_SCOPE("coordinator.spawn");
    first = CurrentContext().Traceparent();
    for (int i = 0; i < 3; ++i) {
      SPANPROF_SCOPE("coordinator.child");
    }
    // Same span, after children: the same id, no alias.
    again = CurrentContext().Traceparent();
    {
      SPANPROF_SCOPE("coordinator.inner");
      inner = CurrentContext().Traceparent();
    }
  }
  const Capture c = StopRecording();
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.substr(3, 32), c.trace_id);
  EXPECT_EQ(first, again);
  EXPECT_NE(SpanIdOf(inner), SpanIdOf(first));

  const Span* spawn = FindSpan(c, "coordinator.spawn");
  const Span* in = FindSpan(c, "coordinator.inner");
  ASSERT_NE(spawn, nullptr);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(ExternalSpanId(c, *spawn), SpanIdOf(first));
  EXPECT_EQ(ExternalSpanId(c, *in), SpanIdOf(inner));
  ASSERT_EQ(c.exported_span_ids.size(), 2u);
  // Unexported spans get distinct derived ids.
  const Span* child = FindSpan(c, "coordinator.child");
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(ExternalSpanId(c, *child),
            DerivedSpanId(c.span_id_seed, child->id));
  EXPECT_NE(ExternalSpanId(c, *child), ExternalSpanId(c, *spawn));

  // Both trace formats keep the ids.
  for (const char* name : {"t.json", "t.pftrace"}) {
    const std::string bytes = std::string(name) == "t.json"
                                  ? analysis::TraceToJson(c)
                                  : analysis::CaptureToPerfetto(c);
    const absl::StatusOr<Capture> back = analysis::ParseTrace(bytes, name);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->trace_id, c.trace_id) << name;
    EXPECT_EQ(back->span_id_seed, c.span_id_seed) << name;
    EXPECT_EQ(back->exported_span_ids, c.exported_span_ids) << name;
    EXPECT_EQ(back->remote_parent_span_id, c.remote_parent_span_id) << name;
  }
}

TEST(TraceparentTest, AContextHandedToAnIdleThreadNamesTheSpanThatHandedIt) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::string from_worker;
  {
    SPANPROF_SCOPE("dispatch");
    std::thread worker(Bind([&] {
      // No span open on this thread: the context stands for the hand-off.
      from_worker = CurrentContext().Traceparent();
      SPANPROF_SCOPE("worker.task");
    }));
    worker.join();
  }
  const Capture c = StopRecording();
  const Span* dispatch = FindSpan(c, "dispatch");
  ASSERT_NE(dispatch, nullptr);
  ASSERT_FALSE(from_worker.empty());
  EXPECT_EQ(ExternalSpanId(c, *dispatch), SpanIdOf(from_worker));
}

TEST(TraceparentTest, TheEnvironmentVariableIsStrict) {
  setenv("SPANPROF_TRACEPARENT", "00-abc", 1);  // NOLINT(concurrency-mt-unsafe)
  absl::StatusOr<Config> bad = ConfigFromEnvironment();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("SPANPROF_TRACEPARENT='00-abc'"),
            std::string::npos)
      << bad.status();
  setenv("SPANPROF_TRACEPARENT", kHeader, 1);  // NOLINT(concurrency-mt-unsafe)
  absl::StatusOr<Config> good = ConfigFromEnvironment();
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->recording.traceparent, kHeader);
  setenv("SPANPROF_TRACEPARENT", "", 1);  // NOLINT(concurrency-mt-unsafe)
  absl::StatusOr<Config> none = ConfigFromEnvironment();
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->recording.traceparent, "");
  unsetenv("SPANPROF_TRACEPARENT");  // NOLINT(concurrency-mt-unsafe)
}

TEST(TraceparentTest, SpawnHandsTheTraceparentToTheChild) {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() /
      ("spanprof-spawn-" + std::to_string(getpid()) + ".txt");
  ASSERT_TRUE(StartRecording({}).ok());
  std::string expected;
  absl::StatusOr<int> pid = absl::UnknownError("not run");
  {
    SPANPROF_SCOPE("parent.spawn");
    const Context ctx = CurrentContext();
    expected = ctx.Traceparent();
    pid = SpawnWithTraceparent(
        {"/bin/sh", "-c",
         "printf %s \"$SPANPROF_TRACEPARENT\" > " + out.string()},
        ctx);
  }
  const Capture c = StopRecording();
  ASSERT_TRUE(pid.ok()) << pid.status();
  int status = 0;
  ASSERT_EQ(waitpid(*pid, &status, 0), *pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::ifstream in(out);
  std::stringstream got;
  got << in.rdbuf();
  std::filesystem::remove(out);
  EXPECT_EQ(got.str(), expected);
  const Span* spawn = FindSpan(c, "parent.spawn");
  ASSERT_NE(spawn, nullptr);
  EXPECT_EQ(ExternalSpanId(c, *spawn), SpanIdOf(expected));

  const absl::StatusOr<int> missing =
      SpawnWithTraceparent({"/no/such/program"}, Context());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/no/such/program"),
            std::string::npos);
}

}  // namespace
}  // namespace spanprof
