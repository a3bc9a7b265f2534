// spanprof/context.h — cross-thread parents.
//
// Work handed to another thread (std::thread, std::async, a thread pool) can
// record spans whose parent is the span that handed it over. The parent is
// linked (a flow arrow in the trace) but never subtracted from its own
// thread's time. A worker may outlive its parent span.
//
// clang-format off
// Example:
//
//   void Work();  // the program's
//
//   SPANPROF_SCOPE("batch.dispatch");
//   auto task = spanprof::Bind([&] { SPANPROF_SCOPE("batch.work"); Work(); });
//   std::thread worker(task);  // batch.work's parent is batch.dispatch
//   worker.join();
// clang-format on
#ifndef SPANPROF_CONTEXT_H_
#define SPANPROF_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/span.h"

namespace spanprof {

// `Context` is a copyable handle to a thread's innermost open span at the time
// `CurrentContext()` was called. Cheap to copy; valid only within the session
// it was taken in (later sessions ignore it).
//
// A context may also name a span of another process: `ContextFromTraceparent`
// reads a W3C `traceparent` header into a remote context, and
// `Traceparent()` writes one for a local span, to hand to a child process or
// a remote service (docs/distributed.md).
class Context {
 public:
  Context() = default;
  // True when it was taken in the active session on a thread that records.
  bool valid() const noexcept { return epoch_ != 0; }
  // True for a context read by `ContextFromTraceparent()`: a span of another
  // process. `ContextScope` ignores it; a session adopts one as its remote
  // parent through `RecordingOptions::traceparent` (SPANPROF_TRACEPARENT).
  bool remote() const noexcept { return remote_span_ != 0; }

  // `Traceparent()` renders the W3C `traceparent` header of this context's
  // span: `00-<trace id, 32 hex>-<span id, 16 hex>-01`, lowercase. For a
  // local context the trace id is the session's and the span id is the one
  // the span carries in the capture (`Capture::exported_span_ids`; OTLP
  // export and `spanprof merge` use it), so a process started with this
  // header links its session to the span. "" for a context that is neither
  // valid in the active session nor remote. Not a hot-path call: it takes a
  // lock and may read the thread's recent records.
  std::string Traceparent() const;

 private:
  friend Context CurrentContext() noexcept;
  friend class ContextScope;
  friend absl::StatusOr<Context> ContextFromTraceparent(std::string_view);
  uint32_t epoch_ = 0;
  uint32_t thread_ = 0;    // the thread's slot in the session
  uint64_t position_ = 0;  // the thread's record position when taken
  uint64_t side_ = 0;      // the thread's side-record count when taken
  // A remote context: the W3C trace id and parent id (remote_span_ != 0).
  uint64_t trace_high_ = 0;
  uint64_t trace_low_ = 0;
  uint64_t remote_span_ = 0;
};

// `ContextFromTraceparent()` parses a W3C `traceparent` header
// (`version-traceid-parentid-flags`) into a remote context. Version `00` must
// have exactly four fields; a later version may carry more after a `-`, of
// which the first four are read (the W3C forward-compatibility rule).
// Malformed input is an InvalidArgument status naming the fault: wrong
// lengths, non-hex or uppercase digits, an all-zero trace id or parent id,
// version `ff`. Never throws, never reads past `header`.
absl::StatusOr<Context> ContextFromTraceparent(std::string_view header);

// `SpawnWithTraceparent(argv, parent)` starts `argv[0]` (searched in PATH)
// with `argv` as its arguments and this process's environment plus
// `SPANPROF_TRACEPARENT=<parent.Traceparent()>`, so that its session becomes
// a child of `parent`'s span. Returns the child's pid (wait for it with
// waitpid), or an error naming the program. With an invalid `parent` the
// child inherits the environment unchanged (SPANPROF_TRACEPARENT removed).
// To hand a context over a socket or an RPC header instead, send
// `Traceparent()` and, on the other side, set `RecordingOptions::traceparent`
// (or SPANPROF_TRACEPARENT) before its session starts.
absl::StatusOr<int> SpawnWithTraceparent(const std::vector<std::string>& argv,
                                         const Context& parent);

// `CurrentContext()` returns a handle to this thread's innermost open span
// (the innermost retained one when the cap dropped some). When no span is
// open but a `ContextScope` is active, the handle stands for that scope's
// context, so hand-offs chain across threads. The span is resolved when the
// session is collected, so the handle may outlive it. Not a hot-path call,
// but allocation- and lock-free once the thread recorded its first span.
Context CurrentContext() noexcept;

// `ContextScope` makes `ctx`'s span the parent of the spans opened on this
// thread while it lives and no span of this thread is open (the outermost
// ones; their children nest normally, and a span already open on this thread
// stays the parent of spans opened inside it). Scopes nest. An invalid
// context, or one from another session, is ignored.
class ContextScope {
 public:
  explicit ContextScope(const Context& ctx) noexcept;
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  uint32_t epoch_ = 0;
};

// `Bind(fn)` returns a callable that runs `fn` under the caller's current
// context, for thread pools and std::async.
template <typename Fn>
auto Bind(Fn fn) {
  return [ctx = CurrentContext(),
          fn = std::move(fn)](auto&&... args) mutable -> decltype(auto) {
    ContextScope scope(ctx);
    return std::invoke(fn, std::forward<decltype(args)>(args)...);
  };
}

}  // namespace spanprof

#endif  // SPANPROF_CONTEXT_H_
