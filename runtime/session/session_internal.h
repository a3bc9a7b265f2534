// The session glue's own seam: a session opened and closed by two calls, for
// callers that cannot wrap the body in a function (the C API, c_api.cc).
// `RunSession` (profile.cc) is these two calls around a body. Private to the
// runtime component.
#ifndef SPANPROF_RUNTIME_SESSION_SESSION_INTERNAL_H_
#define SPANPROF_RUNTIME_SESSION_SESSION_INTERNAL_H_

#include "absl/status/status.h"
#include "spanprof/session.h"

namespace spanprof::internal {

// `OpenSession()` claims the process-wide session for `config` (which must be
// enabled), starts recording, prints the forecast line unless quiet and opens
// the root span `root` on the calling thread. Errors (nothing started):
// `AlreadyExists` when a session or recording is active, else a bad
// configuration (a path template, the cap, the clock, the traceparent). The
// messages carry no "spanprof: " prefix.
absl::Status OpenSession(const Config& config, const char* root);

// `CloseSession()` ends the root span (flagged `exception` when
// `body_threw`), collects, analyses, writes the trace and the summary and
// prints the table unless quiet, like the end of `Profile()`. Returns the
// output errors (one status naming every path that failed), or
// `FailedPrecondition` without touching the session when none is active or
// the calling thread is not the one that opened it.
absl::Status CloseSession(bool body_threw);

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SESSION_SESSION_INTERNAL_H_
