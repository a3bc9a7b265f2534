// spanprof/context.h — cross-thread parents.
//
// Work handed to another thread (std::thread, std::async, a thread pool) can
// record spans whose parent is the span that handed it over. The parent is
// linked (a flow arrow in the trace) but never subtracted from its own
// thread's time. A worker may outlive its parent span.
//
// Example:
//
//   SPANPROF_SCOPE("batch.dispatch");
//   auto task = spanprof::Bind([&] { SPANPROF_SCOPE("batch.work"); Work(); });
//   std::thread worker(task);   // batch.work's parent is batch.dispatch
//   worker.join();
#ifndef SPANPROF_CONTEXT_H_
#define SPANPROF_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <utility>

#include "spanprof/span.h"

namespace spanprof {

// `Context` is a copyable handle to a thread's innermost open span at the time
// `CurrentContext()` was called. Cheap to copy; valid only within the session
// it was taken in (later sessions ignore it).
class Context {
 public:
  Context() = default;
  // True when it was taken in the active session on a thread that records.
  bool valid() const noexcept { return epoch_ != 0; }

 private:
  friend Context CurrentContext() noexcept;
  friend class ContextScope;
  uint32_t epoch_ = 0;
  uint32_t thread_ = 0;    // the thread's slot in the session
  uint64_t position_ = 0;  // the thread's record position when taken
  uint64_t side_ = 0;      // the thread's side-record count when taken
};

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
