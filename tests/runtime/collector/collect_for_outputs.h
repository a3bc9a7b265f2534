// Collects the active session as a session end does for its own outputs:
// its arguments packed, its spans compact.
#ifndef SPANPROF_TESTS_RUNTIME_COLLECTOR_COLLECT_FOR_OUTPUTS_H_
#define SPANPROF_TESTS_RUNTIME_COLLECTOR_COLLECT_FOR_OUTPUTS_H_

#include <vector>

#include "collector/assemble.h"
#include "gtest/gtest.h"
#include "recorder/recorder_internal.h"
#include "spanprof/capture.h"

namespace spanprof::internal {

// Ends the active session (a failure to end one fails the test) and
// collects it from its rings.
inline Capture EndAndCollectForOutputs() {
  SessionState& session = Session();
  std::vector<ThreadRing*> rings;
  ClockPair stop{};
  EXPECT_TRUE(EndActiveSession(session, &rings, &stop));
  return CollectEndedSession(session, rings, stop, /*pack_args=*/true);
}

}  // namespace spanprof::internal

#endif  // SPANPROF_TESTS_RUNTIME_COLLECTOR_COLLECT_FOR_OUTPUTS_H_
