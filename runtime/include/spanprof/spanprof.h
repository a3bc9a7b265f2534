// spanprof/spanprof.h — the umbrella header: everything a program uses.
//
// spanprof records the phases a program names (spans), with their nesting,
// thread, tags, arguments, heartbeats and allocations, at a few nanoseconds a
// span, and turns each capture into a Perfetto trace, a strict JSON summary
// and a console table.
//
// clang-format off
// Example:
//
//   #include <spanprof/spanprof.h>
//
//   int main() {
//     return spanprof::ProfileFromEnvironment("app.run", [] {
//       for (int i = 0; i < 3; ++i) {
//         SPANPROF_SCOPE("model.forward", {.phase = "forward"});
//         spanprof::Heartbeat();
//       }
//       return 0;
//     });
//   }
// clang-format on
#ifndef SPANPROF_SPANPROF_H_
#define SPANPROF_SPANPROF_H_

#include "spanprof/context.h"
#include "spanprof/recording.h"
#include "spanprof/schedule.h"
#include "spanprof/session.h"
#include "spanprof/span.h"

#endif  // SPANPROF_SPANPROF_H_
