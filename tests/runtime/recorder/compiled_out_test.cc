// A translation unit built with SPANPROF_ENABLED=0 in a program whose other
// units record (mixed_enabled_test.cc checks the two against each other):
// every macro and call here compiles to nothing, even inside a session.
#define SPANPROF_ENABLED 0

#include <cstdint>
#include <string_view>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"

#if SPANPROF_ENABLED
#error "compiled_out_test.cc must see SPANPROF_ENABLED=0"
#endif

namespace spanprof::testing {

using HeartbeatFunction = void (*)(uint64_t) noexcept;

// This unit's `Heartbeat` (the compiled-out one).
HeartbeatFunction CompiledOutHeartbeat() { return &spanprof::Heartbeat; }

// Records through every form this unit offers; none of it may reach a capture.
void RecordCompiledOut() {
  SPANPROF_SCOPE("compiled.out.scope");
  SPANPROF_ARG("compiled.out.arg", 1);
  SPANPROF_COUNT("compiled.out.count", 3);
  SPANPROF_COUNT("compiled.out.count");
  AddArg("compiled.out.add_arg", 2);
  Heartbeat(5);
  Run("compiled.out.run", [] { Heartbeat(7); });
  SPANPROF_SCOPE_DYNAMIC(std::string_view("compiled.out.dynamic"));
  RunDynamic(std::string_view("compiled.out.run_dynamic"), {.phase = "p"},
             [] { Heartbeat(9); });
}

namespace {

TEST(CompiledOutTest, NothingIsRecordedInsideASession) {
  ASSERT_TRUE(StartRecording({}).ok());
  RecordCompiledOut();
  const Capture capture = StopRecording();
  EXPECT_TRUE(capture.spans.empty());
  EXPECT_TRUE(capture.args.empty());
}

}  // namespace
}  // namespace spanprof::testing
