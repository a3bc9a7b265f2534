// One program, two settings: this unit records (SPANPROF_ENABLED=1, the
// default) and compiled_out_test.cc is built with SPANPROF_ENABLED=0. The
// inline functions whose bodies depend on the setting must stay two distinct
// functions (span.h puts them in an inline namespace named after it), or the
// linker would keep one body for both units.
#include <cstdint>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"

namespace spanprof::testing {

using HeartbeatFunction = void (*)(uint64_t) noexcept;

HeartbeatFunction CompiledOutHeartbeat();
void RecordCompiledOut();

namespace {

TEST(MixedEnabledTest, EachUnitKeepsItsOwnInlineBodies) {
  const HeartbeatFunction enabled = &spanprof::Heartbeat;
  const HeartbeatFunction compiled_out = CompiledOutHeartbeat();
  EXPECT_NE(enabled, compiled_out);
  const uint64_t before = internal::tls_heartbeats;
  compiled_out(5);
  EXPECT_EQ(internal::tls_heartbeats, before);
  enabled(5);
  EXPECT_EQ(internal::tls_heartbeats, before + 5);
}

TEST(MixedEnabledTest, OnlyTheEnabledUnitRecords) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("enabled.scope");
    RecordCompiledOut();
    AddArg("enabled.add_arg", 3);
  }
  const Capture capture = StopRecording();
  ASSERT_EQ(capture.spans.size(), 1u);
  EXPECT_EQ(capture.sites[capture.spans[0].site].name, "enabled.scope");
  ASSERT_EQ(capture.args.size(), 1u);
  EXPECT_EQ(capture.args[0].key, "enabled.add_arg");
}

}  // namespace
}  // namespace spanprof::testing
