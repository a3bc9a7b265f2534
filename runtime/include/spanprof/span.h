// spanprof/span.h — spans, arguments, counters, heartbeats, thread names.
//
// A span names a phase of the program. `SPANPROF_SCOPE` records one over the
// enclosing scope; `spanprof::Run` records one around a callable and returns
// its result. Both are safe on any thread at any time: with no session active
// a span costs one relaxed load and a predicted branch, and building with
// `SPANPROF_ENABLED=0` compiles every macro and call to nothing.
//
// clang-format off
// Example:
//
//   struct File {  // the program's
//     std::string_view text;
//     uint64_t tokens;
//   };
//   std::string Read(const std::string& path);
//
//   void Parse(const File& f) {
//     SPANPROF_SCOPE("file.parse", {.phase = "parse", .module = "indexer"});
//     SPANPROF_ARG("bytes", f.text.size());
//     spanprof::Heartbeat(f.tokens);
//     SPANPROF_COUNT("bytes_copied", f.text.size());
//   }
//   std::string ReadSource(const std::string& path) {
//     return spanprof::Run("source.read", [&] { return Read(path); });
//   }
//   void Apply(std::string_view rule_name) {
//     SPANPROF_SCOPE_DYNAMIC(rule_name);  // a name known at run time
//   }
// clang-format on
#ifndef SPANPROF_SPAN_H_
#define SPANPROF_SPAN_H_

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "spanprof/internal/recorder.h"
#include "spanprof/tags.h"

#ifndef SPANPROF_ENABLED
#define SPANPROF_ENABLED 1
#endif

// Translation units may be built with different `SPANPROF_ENABLED` values in
// one program. The inline functions whose bodies depend on it live in an
// inline namespace named after the setting, so the two versions are distinct
// functions and the linker never merges one into the other (no ODR
// violation); callers still write `spanprof::Heartbeat`.
#if SPANPROF_ENABLED
#define SPANPROF_SETTING_NAMESPACE_ enabled_v1
#else
#define SPANPROF_SETTING_NAMESPACE_ disabled_v1
#endif

#define SPANPROF_CONCAT_INNER_(a, b) a##b
#define SPANPROF_CONCAT_(a, b) SPANPROF_CONCAT_INNER_(a, b)
#define SPANPROF_UNIQUE_(prefix) SPANPROF_CONCAT_(prefix, __LINE__)
#define SPANPROF_STRINGIZE_INNER_(x) #x
#define SPANPROF_STRINGIZE_(x) SPANPROF_STRINGIZE_INNER_(x)

namespace spanprof {

namespace internal {

// `ScopedSpan` records one span over its lifetime. Hot path; noexcept.
class ScopedSpan {
 public:
  explicit ScopedSpan(SiteStatic& site) noexcept : epoch_(BeginSpan(site)) {}
  // A span with a run-time name (`SPANPROF_SCOPE_DYNAMIC`).
  ScopedSpan(DynamicSite& site, const Tags& tags,
             std::string_view name) noexcept
      : epoch_(BeginDynamicSpan(site, tags, name)) {}
  ScopedSpan(DynamicSite& site, const Tags& tags, const char* name) noexcept
      : epoch_(BeginDynamicSpan(
            site, tags,
            name == nullptr ? std::string_view() : std::string_view(name))) {}
  ~ScopedSpan() { EndSpan(epoch_); }
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  uint32_t epoch_;
};

}  // namespace internal

#if SPANPROF_ENABLED

// `SPANPROF_SCOPE(name[, tags])` records a span over the enclosing scope.
// `name` is a string literal; `tags` a braced `spanprof::Tags` initializer,
// e.g. `SPANPROF_SCOPE("model.forward", {.phase = "forward"})`. The site is
// interned once; the hot path never hashes or copies strings.
#define SPANPROF_SCOPE(name, ...)                                           \
  static constinit ::spanprof::internal::SiteStatic SPANPROF_UNIQUE_(       \
      spanprof_site_){(name), ::spanprof::internal::MakeTags(__VA_ARGS__)}; \
  const ::spanprof::internal::ScopedSpan SPANPROF_UNIQUE_(spanprof_span_)(  \
      SPANPROF_UNIQUE_(spanprof_site_))

// `SPANPROF_SCOPE_DYNAMIC(name[, tags])` is `SPANPROF_SCOPE` with a name
// known only at run time (a rule, a target, a request type): any
// `std::string_view` (or `std::string`, or C string; "" and nullptr show as
// "(unnamed)"). The name is interned by content and copied, so the caller's
// buffer may die right after the statement; each distinct name is its own
// row and trace name, exactly like a literal. Tags are literals, as for
// `SPANPROF_SCOPE`. Cost while recording: a hash of the name and a
// lock-free table lookup (about 1.4x a literal span for a 26-byte name,
// growing with its length), no lock, no allocation; a new name takes a
// process-wide mutex and two allocations, about half a microsecond. At
// most 65,536 distinct names per process (`internal::kMaxDynamicNames`);
// past that, new names of this site are recorded as "<file>:<line>
// (overflow)", reported once on stderr. The name expression is evaluated
// even with no session. For values with many distinct levels (ids, sizes,
// paths of every file), prefer a literal name and `SPANPROF_ARG_STR` /
// `SPANPROF_ARG`.
#define SPANPROF_SCOPE_DYNAMIC(name, ...)                                  \
  static constinit ::spanprof::internal::DynamicSite SPANPROF_UNIQUE_(     \
      spanprof_dynamic_site_){__FILE__ ":" SPANPROF_STRINGIZE_(__LINE__)}; \
  const ::spanprof::internal::ScopedSpan SPANPROF_UNIQUE_(spanprof_span_)( \
      SPANPROF_UNIQUE_(spanprof_dynamic_site_),                            \
      ::spanprof::internal::MakeTags(__VA_ARGS__), (name))

// `SPANPROF_FUNCTION([tags])` is `SPANPROF_SCOPE` named after the enclosing
// function.
#define SPANPROF_FUNCTION(...) SPANPROF_SCOPE(__func__, __VA_ARGS__)

// `SPANPROF_ARG(key, value)` attaches a numeric argument (integer or floating
// point) to the innermost open span of this thread. `key` is a literal. Cost:
// with no session, one relaxed load; recording, the key is interned once per
// call site and each call makes one out-of-line call that appends a 32-byte
// side record to this thread's ring (no global lock; growing the side buffer,
// once per many arguments, takes the thread's own mutex). The hot-path form
// of `AddArg`.
#define SPANPROF_ARG(key, value)                                         \
  do {                                                                   \
    static constinit ::spanprof::internal::SiteStatic spanprof_arg_key_{ \
        (key), ::spanprof::internal::MakeTags()};                        \
    ::spanprof::internal::AddArgValue(spanprof_arg_key_, (value));       \
  } while (false)

// `SPANPROF_ARG_STR(key, text)` attaches a string argument to the innermost
// open span of this thread (a file name, a tensor shape). `key` is a
// literal; `text` a `std::string_view` (or anything convertible: a
// `std::string`, a C string; nullptr is ""). Up to kMaxArgTextBytes (64)
// bytes are copied into the thread's side buffer — no allocation — and
// longer text is cut at a UTF-8 boundary and marked truncated; bytes that
// are not UTF-8 show as U+FFFD. Counted against the cap like numeric
// arguments (1 to 4 side records). `report`/`summarize --group-by-arg KEY`
// split rows by its value.
#define SPANPROF_ARG_STR(key, text)                                      \
  do {                                                                   \
    static constinit ::spanprof::internal::SiteStatic spanprof_arg_key_{ \
        (key), ::spanprof::internal::MakeTags()};                        \
    ::spanprof::internal::AddStringArgValue(spanprof_arg_key_, (text));  \
  } while (false)

// `SPANPROF_SCOPE_WITH_HOOKS(hooks, name[, tags])` is `SPANPROF_SCOPE` with
// hooks (`spanprof::Hooks`, a named variable): `prepare` before the span
// begins, `complete` at the end of the scope before the end timestamp,
// `enrich` after it. See `spanprof::Hooks`.
#define SPANPROF_SCOPE_WITH_HOOKS(hooks, name, ...)                         \
  static constinit ::spanprof::internal::SiteStatic SPANPROF_UNIQUE_(       \
      spanprof_site_){(name), ::spanprof::internal::MakeTags(__VA_ARGS__)}; \
  const ::spanprof::HookedScope SPANPROF_UNIQUE_(spanprof_span_)(           \
      &SPANPROF_UNIQUE_(spanprof_site_), (hooks))

// `SPANPROF_COUNT(name[, n])` adds `n` (default 1) to the named counter
// `name` (a literal) of the innermost open span of this thread: that span's
// self count; analysis adds the counts of a span's same-thread descendants
// for its inclusive count. Count the work that should scale with an item's
// size (bytes copied, comparisons, nodes visited): `spanprof scaling` names
// the counter whose growth explains the time. Cost: with no session, one
// relaxed load; recording, an add to the site's own thread-local count (8
// bytes of static TLS per site; the first increment after a span begin or
// end makes one out-of-line call to register it). The counts reach the ring
// at the thread's next span begin or end, one 32-byte side record per site
// used since then; a span in which nothing was counted pays nothing.
// Counters are identified by name (sites with one name are one counter), at
// most 64 names per process.
#define SPANPROF_COUNT(name, ...)                                           \
  do {                                                                      \
    static_assert(sizeof(name) > 1, "a counter needs a non-empty name");    \
    static constinit ::spanprof::internal::CounterStatic spanprof_counter_{ \
        (name)};                                                            \
    static __thread uint64_t spanprof_count_                                \
        __attribute__((tls_model("initial-exec")));                         \
    ::spanprof::internal::AddCount(                                         \
        spanprof_counter_, spanprof_count_,                                 \
        ::spanprof::internal::CountValue(__VA_ARGS__));                     \
  } while (false)

#else  // !SPANPROF_ENABLED

#define SPANPROF_SCOPE(name, ...) static_cast<void>(0)
#define SPANPROF_FUNCTION(...) static_cast<void>(0)
#define SPANPROF_SCOPE_DYNAMIC(name, ...) static_cast<void>(0)
#define SPANPROF_ARG(key, value) static_cast<void>(0)
#define SPANPROF_ARG_STR(key, text) static_cast<void>(0)
#define SPANPROF_COUNT(name, ...) static_cast<void>(0)
// Hooks still run: a program may rely on them (a device synchronize).
#define SPANPROF_SCOPE_WITH_HOOKS(hooks, name, ...) \
  const ::spanprof::HookedScope SPANPROF_UNIQUE_(spanprof_span_)((hooks))

#endif  // SPANPROF_ENABLED

namespace internal {

template <typename T>
inline void AddArgValue(SiteStatic& key, T value) noexcept {
  static_assert(std::is_arithmetic_v<T>, "span arguments are numeric");
  if (SPANPROF_LIKELY(g_epoch.load(std::memory_order_relaxed) == 0)) return;
  if constexpr (std::is_floating_point_v<T>) {
    AddDoubleArg(key, static_cast<double>(value));
  } else {
    AddIntArg(key, static_cast<int64_t>(value));
  }
}

SiteStatic* InternArgKey(const char* key) noexcept;

inline void AddStringArgValue(SiteStatic& key, std::string_view text) noexcept {
  if (SPANPROF_LIKELY(g_epoch.load(std::memory_order_relaxed) == 0)) return;
  AddStringArg(key, text.data(), text.size());
}
inline void AddStringArgValue(SiteStatic& key, const char* text) noexcept {
  if (SPANPROF_LIKELY(g_epoch.load(std::memory_order_relaxed) == 0)) return;
  AddStringArg(key, text, text == nullptr ? 0 : std::strlen(text));
}

// `SPANPROF_COUNT`'s increment: 1 when the macro has no `n`.
constexpr uint64_t CountValue() noexcept { return 1; }
template <typename T>
constexpr uint64_t CountValue(T n) noexcept {
  static_assert(std::is_integral_v<T>, "counter increments are integers");
  return static_cast<uint64_t>(n);
}

// A per-instantiation cache of one dynamic site: `Run` called from one place
// with the same literals hits it every time and never takes the slow path.
// The tags come as separate pointers so that, inlined, they stay constants
// in registers on the hit path instead of a struct copied to the stack.
template <typename Tag>
inline SiteStatic* CachedDynamicSite(const char* name, const char* phase,
                                     const char* module, const char* activity,
                                     const char* backend, const char* dtype,
                                     const char* device) noexcept {
  static std::atomic<SiteStatic*> cache{nullptr};
  SiteStatic* site = cache.load(std::memory_order_acquire);
  if (SPANPROF_LIKELY(
          site != nullptr && site->name == name && site->tags.phase == phase &&
          site->tags.module == module && site->tags.activity == activity &&
          site->tags.backend == backend && site->tags.dtype == dtype &&
          site->tags.device == device)) {
    return site;
  }
  site = FindOrInternDynamicSite(
      name, Tags{phase, module, activity, backend, dtype, device});
  cache.store(site, std::memory_order_release);
  return site;
}

}  // namespace internal

// `NoHook` is an absent hook: `Hooks` members default to it, and it costs
// nothing (no call, no branch).
struct NoHook {
  void operator()() const noexcept {}
};

// `Hooks` are three optional callables of a span (`Run`, `HookedScope`,
// `SPANPROF_SCOPE_WITH_HOOKS`), set with the `With...` builders:
//
//   spanprof::Run("kernel.matmul", {.phase = "compute"},
//                 spanprof::Hooks<>().WithComplete(
//                     [&] { stream.Synchronize(); }),
//                 [&] { LaunchMatmul(stream); });
//
// (With GCC 11 or later, or clang 17 or later, designated initializers
// deduce the types too: `spanprof::Hooks{.complete = ...}`.)
//
// - `prepare` runs before the span begins. When it throws or returns false,
//   no span is recorded (the body still runs) and the failure is counted
//   (`Capture::failed_prepares`, the summary's `failed_prepares`).
// - `complete` runs after the body and before the end timestamp: its time
//   belongs to the span (wait for a device, a future).
// - `enrich` runs after the end timestamp: the arguments and counts it adds
//   (`SPANPROF_ARG`, `SPANPROF_ARG_STR`, `SPANPROF_COUNT`) belong to the span
//   and its time is not charged to it.
// A `complete` or `enrich` hook that throws does not lose the span: the span
// is flagged `hook_failed` with the message as its string argument
// `hook_error`, and the summary counts it per row (`hook_failures`). Hooks
// never throw out, and the body's own exception still wins (`complete` and
// `enrich` run during its unwinding too). Hooks run whether or not a session
// records (the program may rely on them), and only when `prepare` succeeded.
template <typename Prepare = NoHook, typename Complete = NoHook,
          typename Enrich = NoHook>
struct Hooks {
  Prepare prepare{};
  Complete complete{};
  Enrich enrich{};

  // These hooks with `prepare`, `complete` or `enrich` replaced by `f`.
  template <typename F>
  Hooks<F, Complete, Enrich> WithPrepare(F f) const {
    return {std::move(f), complete, enrich};
  }
  template <typename F>
  Hooks<Prepare, F, Enrich> WithComplete(F f) const {
    return {prepare, std::move(f), enrich};
  }
  template <typename F>
  Hooks<Prepare, Complete, F> WithEnrich(F f) const {
    return {prepare, complete, std::move(f)};
  }
};

namespace internal {

template <typename H>
inline constexpr bool kIsHook = !std::is_same_v<std::decay_t<H>, NoHook>;

// Runs hook `h`; false when it threw or returned false, which is reported
// (`prepare`: counted; the others: the span is flagged).
template <typename H>
bool RunHook(H& h, const char* what) noexcept {
  const bool prepare = std::strcmp(what, "prepare") == 0;
  const char* failure = nullptr;
  try {
    if constexpr (std::is_same_v<std::invoke_result_t<H&>, bool>) {
      if (std::invoke(h)) return true;
      failure = "returned false";
    } else {
      std::invoke(h);
      return true;
    }
  } catch (const std::exception& e) {
    if (prepare) {
      CountFailedPrepare();
    } else {
      MarkHookFailed(what, e.what());
    }
    return false;
  } catch (...) {
    failure = "threw a non-std::exception";
  }
  if (prepare) {
    CountFailedPrepare();
  } else {
    MarkHookFailed(what, failure);
  }
  return false;
}

// Runs `fn` inside the span that a begin returned `epoch` for, ending it
// when `fn` returns or throws (Run's and RunDynamic's common tail).
template <typename Fn>
decltype(auto) InvokeInSpan(uint32_t epoch, Fn&& fn) {
  struct End {
    uint32_t epoch;
    ~End() { EndSpan(epoch); }
  } end{epoch};
  return std::invoke(std::forward<Fn>(fn));
}

}  // namespace internal

// `HookedScope` records a span over its lifetime with hooks (see `Hooks`);
// `SPANPROF_SCOPE_WITH_HOOKS` declares one with a static site.
template <typename Prepare, typename Complete, typename Enrich>
class HookedScope {
 public:
  // `site` null: no span (no session), the hooks still run.
  HookedScope(internal::SiteStatic* site,
              const Hooks<Prepare, Complete, Enrich>& hooks)
      : hooks_(hooks) {
    if constexpr (internal::kIsHook<Prepare>) {
      if (!internal::RunHook(hooks_.prepare, "prepare")) {
        prepared_ = false;
        return;
      }
    }
#if SPANPROF_ENABLED
    if (site != nullptr) epoch_ = internal::BeginSpan(*site);
#else
    static_cast<void>(site);
#endif
  }
  explicit HookedScope(const Hooks<Prepare, Complete, Enrich>& hooks)
      : hooks_(hooks) {
    if constexpr (internal::kIsHook<Prepare>) {
      prepared_ = internal::RunHook(hooks_.prepare, "prepare");
    }
  }
  ~HookedScope() {
    if (!prepared_) return;
    if constexpr (internal::kIsHook<Complete>) {
      internal::RunHook(hooks_.complete, "complete");
    }
    internal::EndSpan(epoch_);
    if constexpr (internal::kIsHook<Enrich>) {
      if (epoch_ != 0) internal::BeginEnrich(epoch_);
      internal::RunHook(hooks_.enrich, "enrich");
      if (epoch_ != 0) internal::EndEnrich(epoch_);
    }
  }
  HookedScope(const HookedScope&) = delete;
  HookedScope& operator=(const HookedScope&) = delete;

 private:
  Hooks<Prepare, Complete, Enrich> hooks_;
  uint32_t epoch_ = 0;
  bool prepared_ = true;
};

inline namespace SPANPROF_SETTING_NAMESPACE_ {

// `AddArg(key, value)` is the function form of `SPANPROF_ARG`, for keys that
// are not known at the call site. Not for the hot path: while recording, each
// call looks `key` up in a process-wide table under a global mutex, and the
// first call with a new `key` pointer allocates a table entry that is never
// freed. Keys are identified by address, so `key` must have static storage
// duration (a literal); a different string at a reused address would report
// the old key. With no session it costs one relaxed load. Prefer
// `SPANPROF_ARG` in loops.
template <typename T>
inline void AddArg(const char* key, T value) noexcept {
#if SPANPROF_ENABLED
  if (SPANPROF_LIKELY(internal::g_epoch.load(std::memory_order_relaxed) == 0)) {
    return;
  }
  internal::AddArgValue(*internal::InternArgKey(key), value);
#else
  static_cast<void>(key);
  static_cast<void>(value);
#endif
}

// `Heartbeat(n)` adds `n` to this thread's deterministic work counter; spans
// report the heartbeats between their begin and end. A thread-local add.
inline void Heartbeat(uint64_t n = 1) noexcept {
#if SPANPROF_ENABLED
  internal::tls_heartbeats += n;
#else
  static_cast<void>(n);
#endif
}

// `Run(name[, tags], fn)` runs `fn` inside a span and returns its result (void
// too). When `fn` throws, the span is recorded, flagged `exception`, and the
// exception is rethrown. `name` and the tags must be literals, or strings with
// static storage duration: a site is identified by their addresses and kept
// for the process's life, so a string at a reused address reports the first
// name, and every new address adds a site. Safe on any thread; from one call
// site with the same literals, it costs as much as `SPANPROF_SCOPE`.
template <typename Fn>
decltype(auto) Run(const char* name, const Tags& tags, Fn&& fn) {
#if SPANPROF_ENABLED
  // One load of the epoch serves the disabled check and the begin.
  uint32_t epoch = internal::g_epoch.load(std::memory_order_relaxed);
  if (SPANPROF_UNLIKELY(epoch != 0)) {
    epoch = internal::BeginSpanInEpoch(
        *internal::CachedDynamicSite<std::decay_t<Fn>>(
            name, tags.phase, tags.module, tags.activity, tags.backend,
            tags.dtype, tags.device),
        epoch);
  }
  return internal::InvokeInSpan(epoch, std::forward<Fn>(fn));
#else
  static_cast<void>(name);
  static_cast<void>(tags);
  return std::invoke(std::forward<Fn>(fn));
#endif
}

template <typename Fn>
decltype(auto) Run(const char* name, Fn&& fn) {
  return Run(name, Tags{}, std::forward<Fn>(fn));
}

// `RunDynamic(name[, tags], fn)` is `Run` with a name known only at run time
// (see `SPANPROF_SCOPE_DYNAMIC`): `name` is any `std::string_view`, interned
// by content and copied, so its buffer may die once the call begins. `tags`
// are literals. Past the bound of distinct names, new names are recorded as
// "dynamic (overflow)" with the call's tags. A distinct name rather than a
// `Run` overload, so that a `const char*` buffer never silently takes
// `Run`'s by-address path.
template <typename Fn>
decltype(auto) RunDynamic(std::string_view name, const Tags& tags, Fn&& fn) {
#if SPANPROF_ENABLED
  static constinit internal::DynamicSite site{"dynamic"};
  uint32_t epoch = internal::g_epoch.load(std::memory_order_relaxed);
  if (SPANPROF_UNLIKELY(epoch != 0)) {
    epoch = internal::BeginSpanInEpoch(
        *internal::FindDynamicName(site, name, tags), epoch);
  }
  return internal::InvokeInSpan(epoch, std::forward<Fn>(fn));
#else
  static_cast<void>(name);
  static_cast<void>(tags);
  return std::invoke(std::forward<Fn>(fn));
#endif
}

template <typename Fn>
decltype(auto) RunDynamic(std::string_view name, Fn&& fn) {
  return RunDynamic(name, Tags{}, std::forward<Fn>(fn));
}

// `Run(name[, tags], hooks, fn)` is `Run` with hooks (see `Hooks`): `prepare`
// before the span, `complete` after `fn` and before the end timestamp,
// `enrich` after it. A span without hooks costs what `Run` costs.
template <typename Prepare, typename Complete, typename Enrich, typename Fn>
decltype(auto) Run(const char* name, const Tags& tags,
                   const Hooks<Prepare, Complete, Enrich>& hooks, Fn&& fn) {
#if SPANPROF_ENABLED
  // Like `Run`: the site is looked up only while a session records.
  const HookedScope<Prepare, Complete, Enrich> scope(
      internal::g_epoch.load(std::memory_order_relaxed) == 0
          ? nullptr
          : internal::CachedDynamicSite<std::decay_t<Fn>>(
                name, tags.phase, tags.module, tags.activity, tags.backend,
                tags.dtype, tags.device),
      hooks);
#else
  static_cast<void>(name);
  static_cast<void>(tags);
  const HookedScope<Prepare, Complete, Enrich> scope(hooks);
#endif
  return std::invoke(std::forward<Fn>(fn));
}

template <typename Prepare, typename Complete, typename Enrich, typename Fn>
decltype(auto) Run(const char* name,
                   const Hooks<Prepare, Complete, Enrich>& hooks, Fn&& fn) {
  return Run(name, Tags{}, hooks, std::forward<Fn>(fn));
}

}  // namespace SPANPROF_SETTING_NAMESPACE_

// `SetThreadName(name)` labels this thread in the trace and the table. Copies
// up to 63 bytes; allocates nothing. Any thread, any time.
void SetThreadName(const char* name) noexcept;

}  // namespace spanprof

#endif  // SPANPROF_SPAN_H_
