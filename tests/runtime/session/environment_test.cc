// The strict SPANPROF* environment table: every variable's good and bad
// values; a bad value is an error that names the variable.
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/recording.h"
#include "spanprof/session.h"

namespace spanprof {
namespace {

constexpr const char* kVariables[] = {"SPANPROF",
                                      "SPANPROF_OUT",
                                      "SPANPROF_SUMMARY_OUT",
                                      "SPANPROF_MAX_EVENTS",
                                      "SPANPROF_OVERFLOW",
                                      "SPANPROF_PROCESS_NAME",
                                      "SPANPROF_CLOCK",
                                      "SPANPROF_QUIET"};

class EnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) unsetenv(name);
  }
  void TearDown() override { SetUp(); }

  static absl::StatusOr<Config> With(const char* name, const char* value) {
    setenv(name, value, 1);
    return ConfigFromEnvironment();
  }

  static void ExpectError(const char* name, const char* value) {
    const absl::StatusOr<Config> config = With(name, value);
    ASSERT_FALSE(config.ok()) << name << "=" << value;
    EXPECT_NE(config.status().message().find(name), std::string::npos)
        << config.status().message();
    unsetenv(name);
  }
};

TEST_F(EnvironmentTest, DefaultsWhenNothingIsSet) {
  const absl::StatusOr<Config> config = ConfigFromEnvironment();
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->enabled);
  EXPECT_EQ(config->trace_path, "build/spanprof-trace.json");
  EXPECT_EQ(config->summary_path, "build/spanprof-summary.json");
  EXPECT_EQ(config->recording.max_events, 1000000u);
  EXPECT_EQ(config->recording.overflow, OverflowPolicy::kDropNewest);
  EXPECT_EQ(config->recording.clock, ClockKind::kAuto);
  EXPECT_TRUE(config->recording.process_name.empty());
  EXPECT_FALSE(config->quiet);
}

TEST_F(EnvironmentTest, SpanprofAcceptsTheBooleanSpellings) {
  for (const char* on : {"1", "true", "on", "yes"}) {
    EXPECT_TRUE(With("SPANPROF", on)->enabled) << on;
  }
  for (const char* off : {"0", "false", "off", "no", ""}) {
    EXPECT_FALSE(With("SPANPROF", off)->enabled) << off;
  }
}

TEST_F(EnvironmentTest, SpanprofRejectsAnythingElse) {
  for (const char* bad : {"2", "TRUE", "enable", " 1", "yes please"}) {
    ExpectError("SPANPROF", bad);
  }
}

TEST_F(EnvironmentTest, OutputPaths) {
  EXPECT_EQ(With("SPANPROF_OUT", "/tmp/x/trace.json.gz")->trace_path,
            "/tmp/x/trace.json.gz");
  EXPECT_EQ(With("SPANPROF_SUMMARY_OUT", "s.json")->summary_path, "s.json");
  ExpectError("SPANPROF_OUT", "");
  ExpectError("SPANPROF_SUMMARY_OUT", "");
}

TEST_F(EnvironmentTest, MaxEventsIsAPositiveInteger) {
  EXPECT_EQ(With("SPANPROF_MAX_EVENTS", "1")->recording.max_events, 1u);
  EXPECT_EQ(With("SPANPROF_MAX_EVENTS", "250000")->recording.max_events,
            250000u);
  for (const char* bad : {"0", "-5", "", "1e6", "12abc", "+3", " 7",
                          "99999999999999999999999", "1.5"}) {
    ExpectError("SPANPROF_MAX_EVENTS", bad);
  }
}

// A cap that could not be met before the process runs out of memory is
// refused at session start, naming the variable and the bound that applied
// (physical memory, the cgroup limit or RLIMIT_AS: memory_limit_test.cc
// lowers RLIMIT_AS to see it chosen).
TEST_F(EnvironmentTest, MaxEventsBeyondTheMemoryLimitIsRefused) {
  setenv("SPANPROF", "1", 1);
  const uint64_t per_span =
      PredictedMemoryBytes(1, OverflowPolicy::kDropNewest);
  const MemoryLimit limit = ProcessMemoryLimit();
  ASSERT_LE(limit.bytes, PhysicalMemoryBytes());
  const uint64_t fits = limit.bytes / per_span;
  const absl::StatusOr<Config> largest =
      With("SPANPROF_MAX_EVENTS", std::to_string(fits).c_str());
  ASSERT_TRUE(largest.ok()) << largest.status();
  EXPECT_EQ(largest->recording.max_events, fits);
  for (const std::string& bad :
       {std::to_string(fits + 1), std::string("99999999999999"),
        std::string("9999999999999999999")}) {
    setenv("SPANPROF_MAX_EVENTS", bad.c_str(), 1);
    const absl::StatusOr<Config> config = ConfigFromEnvironment();
    ASSERT_FALSE(config.ok()) << bad;
    const std::string message(config.status().message());
    EXPECT_NE(message.find("SPANPROF_MAX_EVENTS='" + bad + "'"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("fits " + limit.source), std::string::npos)
        << message;
    EXPECT_NE(message.find("at most " + std::to_string(fits) + " spans"),
              std::string::npos)
        << message;
  }
  // Config users meet the same bound in StartRecording().
  const absl::Status started =
      StartRecording(RecordingOptions{.max_events = fits + 1});
  EXPECT_EQ(started.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(started.message().find("more than " + limit.source),
            std::string::npos)
      << started;
  EXPECT_FALSE(IsRecording());
}

// Only a session that records needs its ring memory: with SPANPROF off the
// cap is parsed strictly but not held against the memory limit, so a program
// run without profiling reads no /proc or cgroup file at start.
TEST_F(EnvironmentTest, TheMemoryLimitIsNotConsultedWhileSpanprofIsOff) {
  const uint64_t per_span =
      PredictedMemoryBytes(1, OverflowPolicy::kDropNewest);
  const uint64_t too_many = ProcessMemoryLimit().bytes / per_span + 1;
  const absl::StatusOr<Config> off =
      With("SPANPROF_MAX_EVENTS", std::to_string(too_many).c_str());
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->enabled);
  EXPECT_EQ(off->recording.max_events, too_many);
  ExpectError("SPANPROF_MAX_EVENTS", "many");
  setenv("SPANPROF_MAX_EVENTS", std::to_string(too_many).c_str(), 1);
  EXPECT_FALSE(With("SPANPROF", "1").ok());
}

// A misspelt SPANPROF_* name is a warning (the run goes on) naming the
// closest known variable; known names, including the ones other parts of the
// session read, are not warned about; a disabled session says nothing.
TEST_F(EnvironmentTest, UnknownVariablesAreNamedWithTheClosestKnownOne) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"SPANPROF_OUTPUT", "SPANPROF_OUT"},
      {"SPANPROF_QUITE", "SPANPROF_QUIET"},
      {"SPANPROF_ENABLE", "SPANPROF"},
      {"SPANPROF_SUMMARY_OUTPUT", "SPANPROF_SUMMARY_OUT"},
      {"SPANPROF_MAXEVENTS", "SPANPROF_MAX_EVENTS"},
      {"SPANPROF_STREAMS", "SPANPROF_STREAM"},
  };
  setenv("SPANPROF", "1", 1);
  for (const auto& [wrong, meant] : cases) {
    setenv(wrong, "x", 1);
    ::testing::internal::CaptureStderr();
    const absl::StatusOr<Config> config = ConfigFromEnvironment();
    const std::string err = ::testing::internal::GetCapturedStderr();
    unsetenv(wrong);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_NE(err.find(std::string("spanprof: unknown variable ") + wrong +
                       "; did you mean " + meant + "?\n"),
              std::string::npos)
        << err;
  }
  const std::vector<std::pair<const char*, const char*>> known = {
      {"SPANPROF_STREAM", "off"},
      {"SPANPROF_SIGNALS", "off"},
      {"SPANPROF_REPORT", "off"},
      {"SPANPROF_TRACEPARENT", ""}};
  for (const auto& [name, value] : known) setenv(name, value, 1);
  ::testing::internal::CaptureStderr();
  const absl::StatusOr<Config> config = ConfigFromEnvironment();
  const std::string err = ::testing::internal::GetCapturedStderr();
  for (const auto& [name, value] : known) {
    unsetenv(name);
    EXPECT_EQ(err.find(std::string("unknown variable ") + name + ";"),
              std::string::npos)
        << err;
  }
  ASSERT_TRUE(config.ok()) << config.status();
  setenv("SPANPROF", "0", 1);
  setenv("SPANPROF_OUTPUT", "x", 1);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(ConfigFromEnvironment().ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  unsetenv("SPANPROF_OUTPUT");
}

TEST_F(EnvironmentTest, OverflowPolicy) {
  EXPECT_EQ(With("SPANPROF_OVERFLOW", "drop")->recording.overflow,
            OverflowPolicy::kDropNewest);
  EXPECT_EQ(With("SPANPROF_OVERFLOW", "ring")->recording.overflow,
            OverflowPolicy::kRing);
  for (const char* bad : {"", "Ring", "newest", "keep"}) {
    ExpectError("SPANPROF_OVERFLOW", bad);
  }
}

TEST_F(EnvironmentTest, ProcessName) {
  EXPECT_EQ(With("SPANPROF_PROCESS_NAME", "indexer")->recording.process_name,
            "indexer");
  ExpectError("SPANPROF_PROCESS_NAME", "");
}

TEST_F(EnvironmentTest, Clock) {
  EXPECT_EQ(With("SPANPROF_CLOCK", "auto")->recording.clock, ClockKind::kAuto);
  EXPECT_EQ(With("SPANPROF_CLOCK", "tsc")->recording.clock, ClockKind::kTsc);
  EXPECT_EQ(With("SPANPROF_CLOCK", "monotonic")->recording.clock,
            ClockKind::kMonotonic);
  for (const char* bad : {"", "rdtsc", "realtime", "MONOTONIC"}) {
    ExpectError("SPANPROF_CLOCK", bad);
  }
}

TEST_F(EnvironmentTest, Quiet) {
  EXPECT_TRUE(With("SPANPROF_QUIET", "1")->quiet);
  EXPECT_FALSE(With("SPANPROF_QUIET", "no")->quiet);
  ExpectError("SPANPROF_QUIET", "loud");
}

TEST_F(EnvironmentTest, ProfileFromEnvironmentThrowsNamingTheVariable) {
  setenv("SPANPROF", "1", 1);
  setenv("SPANPROF_MAX_EVENTS", "lots", 1);
  bool ran = false;
  try {
    ProfileFromEnvironment("root", [&] { ran = true; });
    FAIL() << "expected spanprof::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SPANPROF_MAX_EVENTS"),
              std::string::npos);
  }
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace spanprof
