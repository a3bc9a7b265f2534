// The C API (spanprof/spanprof_c.h): thin extern "C" functions over the C++
// runtime. The span functions are the C++ fast path compiled out of line;
// the session functions are the session glue's OpenSession/CloseSession.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "spanprof/session.h"
#include "spanprof/span.h"
#include "spanprof/spanprof_c.h"

// Private to the runtime component (runtime/src is a private include dir).
#include "recorder/recorder_internal.h"
#include "session_internal.h"

// The opaque handles of the header are never defined: a `spanprof_site*` or
// `spanprof_key*` is the address of the `SiteStatic` that InternSiteByContent
// returned, cast. C and FFI callers pass strings that may not outlive the call
// (a Python bytes object, a stack buffer), so sites and keys are interned by
// content, not by address as the C++ literals are.

namespace spanprof::internal {
namespace {

// The calling thread's last error message (spanprof_last_error()).
thread_local std::string tls_last_error;

spanprof_status Fail(spanprof_status status, std::string message) {
  tls_last_error = std::move(message);
  return status;
}

// Started with SPANPROF off: spanprof_session_stop() then succeeds.
std::atomic<bool> g_started_disabled{false};
// A session started here is open: spanprof_session_stop() never closes a
// session that a C++ `Profile` opened.
std::atomic<bool> g_session_open{false};

spanprof_site* ToHandle(SiteStatic* site) {
  return reinterpret_cast<spanprof_site*>(site);
}

SiteStatic& SiteOf(spanprof_site* site) {
  return *reinterpret_cast<SiteStatic*>(site);
}

SiteStatic& SiteOf(const spanprof_key* key) {
  return *reinterpret_cast<SiteStatic*>(const_cast<spanprof_key*>(key));
}

// The two public site functions: `function` names the caller in messages.
spanprof_site* GetSite(const char* function, const char* name,
                       const spanprof_tags& tags) {
  if (name == nullptr || name[0] == '\0') {
    Fail(SPANPROF_ERROR_ARGUMENT,
         std::string(function) + ": a site needs a non-empty name");
    return nullptr;
  }
  try {
    // The one place the C struct's fields are named: from here on, the tags
    // are a spanprof::Tags (whose fields kTagFields lists).
    static_assert(sizeof(spanprof_tags) == sizeof(Tags),
                  "a new tag comes with a new C struct and function: "
                  "spanprof_tags keeps its layout");
    return ToHandle(InternSiteByContent(name, Tags{.phase = tags.phase,
                                                   .module = tags.module,
                                                   .activity = tags.activity,
                                                   .backend = tags.backend,
                                                   .dtype = tags.dtype,
                                                   .device = tags.device}));
  } catch (const std::bad_alloc&) {
    Fail(SPANPROF_ERROR_ARGUMENT, std::string(function) + ": out of memory");
    return nullptr;
  }
}

// The span functions are the C++ fast path compiled out of line. Inlined
// whole, it makes a stack frame on every call (callee-saved registers for the
// clock_gettime call of the monotonic clock), which a C++ scope pays once per
// enclosing function but a C call pays per span. So each C function handles
// the TSC case inline, with the compiler told that the clock is the TSC (the
// clock_gettime branch folds away and the slow paths become tail calls), and
// leaves the monotonic clock to these out-of-line copies of the same code.
// BM_CApiSpan measures the difference.
bool UsesMonotonicClock(uint32_t epoch) { return (epoch & 1u) != 0; }

// `epoch` itself, for an epoch whose clock bit is known to be clear: the
// mask lets the compiler see it (an assumption alone did not).
uint32_t TscEpoch(uint32_t epoch) { return epoch & ~1u; }

__attribute__((noinline)) uint32_t BeginWithMonotonicClock(SiteStatic& site,
                                                           uint32_t epoch) {
  return BeginSpanInEpoch(site, epoch);
}

__attribute__((noinline)) void EndWithMonotonicClock(uint32_t epoch) {
  EndSpan(epoch);
}

}  // namespace
}  // namespace spanprof::internal

namespace internal = spanprof::internal;

extern "C" {

spanprof_site* spanprof_site_get(const char* name, const char* phase,
                                 const char* module, const char* activity) {
  return internal::GetSite("spanprof_site_get", name,
                           spanprof_tags{.phase = phase,
                                         .module = module,
                                         .activity = activity,
                                         .backend = nullptr,
                                         .dtype = nullptr,
                                         .device = nullptr});
}

spanprof_site* spanprof_site_get_tagged(const char* name,
                                        const spanprof_tags* tags) {
  return internal::GetSite("spanprof_site_get_tagged", name,
                           tags != nullptr ? *tags : spanprof_tags{});
}

spanprof_token spanprof_begin(spanprof_site* site) {
  // The C++ scope's begin (internal/recorder.h), after the one load that
  // decides whether anything records; a null site is checked only then.
  const uint32_t epoch = internal::g_epoch.load(std::memory_order_relaxed);
  if (SPANPROF_LIKELY(epoch == 0) || site == nullptr) return 0;
  if (SPANPROF_UNLIKELY(internal::UsesMonotonicClock(epoch))) {
    return internal::BeginWithMonotonicClock(internal::SiteOf(site), epoch);
  }
  return internal::BeginSpanInEpoch(internal::SiteOf(site),
                                    internal::TscEpoch(epoch));
}

void spanprof_end(spanprof_token token) {
  // A token names a session epoch (32 bits); anything wider is not ours.
  if (SPANPROF_LIKELY(token == 0) || token > UINT32_MAX) return;
  // A thread that never began a span has no state: a token passed to it from
  // another thread must not crash it.
  if (SPANPROF_UNLIKELY(internal::tls_state == nullptr)) return;
  const auto epoch = static_cast<uint32_t>(token);
  if (SPANPROF_UNLIKELY(internal::UsesMonotonicClock(epoch))) {
    internal::EndWithMonotonicClock(epoch);
    return;
  }
  internal::EndSpan(internal::TscEpoch(epoch));
}

spanprof_key* spanprof_key_get(const char* name) {
  if (name == nullptr || name[0] == '\0') {
    internal::Fail(SPANPROF_ERROR_ARGUMENT,
                   "spanprof_key_get: a key needs a non-empty name");
    return nullptr;
  }
  try {
    return reinterpret_cast<spanprof_key*>(
        internal::InternSiteByContent(name, spanprof::Tags{}));
  } catch (const std::bad_alloc&) {
    internal::Fail(SPANPROF_ERROR_ARGUMENT, "spanprof_key_get: out of memory");
    return nullptr;
  }
}

// The argument functions take a const handle (the caller never changes it);
// the runtime interns the key's site id into it on first use, which is the
// one mutable part, as for the C++ macro's static site.
void spanprof_arg_int(const spanprof_key* key, int64_t value) {
  if (key == nullptr) return;
  internal::AddArgValue(internal::SiteOf(key), value);
}

void spanprof_arg_double(const spanprof_key* key, double value) {
  if (key == nullptr) return;
  internal::AddArgValue(internal::SiteOf(key), value);
}

void spanprof_arg_str(const spanprof_key* key, const char* text) {
  if (key == nullptr || text == nullptr) return;
  internal::AddStringArgValue(internal::SiteOf(key), text);
}

void spanprof_arg_strn(const spanprof_key* key, const char* text, size_t size) {
  if (key == nullptr || text == nullptr) return;
  internal::AddStringArgValue(internal::SiteOf(key),
                              std::string_view(text, size));
}

void spanprof_heartbeat(uint64_t n) { spanprof::Heartbeat(n); }

void spanprof_set_thread_name(const char* name) {
  spanprof::SetThreadName(name);
}

int spanprof_is_recording(void) { return spanprof::IsRecording() ? 1 : 0; }

spanprof_status spanprof_session_start_from_env(const char* root) {
  try {
    const absl::StatusOr<spanprof::Config> config =
        spanprof::ConfigFromEnvironment();
    if (!config.ok()) {
      return internal::Fail(
          SPANPROF_ERROR_CONFIG,
          "spanprof: " + std::string(config.status().message()));
    }
    if (!config->enabled) {
      if (spanprof::IsRecording()) {
        return internal::Fail(SPANPROF_ERROR_SESSION,
                              "spanprof: a session is already active in this "
                              "process; sessions cannot nest or overlap");
      }
      internal::g_started_disabled.store(true, std::memory_order_relaxed);
      return SPANPROF_OK;
    }
    const absl::Status opened =
        internal::OpenSession(*config, root != nullptr ? root : "");
    if (!opened.ok()) {
      return internal::Fail(absl::IsAlreadyExists(opened)
                                ? SPANPROF_ERROR_SESSION
                                : SPANPROF_ERROR_CONFIG,
                            "spanprof: " + std::string(opened.message()));
    }
    internal::g_started_disabled.store(false, std::memory_order_relaxed);
    internal::g_session_open.store(true, std::memory_order_relaxed);
    return SPANPROF_OK;
  } catch (const std::exception& e) {
    return internal::Fail(SPANPROF_ERROR_CONFIG,
                          std::string("spanprof: ") + e.what());
  }
}

spanprof_status spanprof_session_stop(void) {
  if (!internal::g_session_open.load(std::memory_order_relaxed)) {
    if (internal::g_started_disabled.exchange(false)) return SPANPROF_OK;
    return internal::Fail(SPANPROF_ERROR_SESSION,
                          "spanprof_session_stop: no session started by "
                          "spanprof_session_start_from_env is active");
  }
  try {
    const absl::Status closed = internal::CloseSession(/*body_threw=*/false);
    if (absl::IsFailedPrecondition(closed)) {
      return internal::Fail(
          SPANPROF_ERROR_SESSION,
          "spanprof_session_stop: " + std::string(closed.message()));
    }
    internal::g_session_open.store(false, std::memory_order_relaxed);
    if (!closed.ok()) {
      return internal::Fail(SPANPROF_ERROR_OUTPUT,
                            std::string(closed.message()));
    }
    return SPANPROF_OK;
  } catch (const std::exception& e) {
    internal::g_session_open.store(false, std::memory_order_relaxed);
    return internal::Fail(SPANPROF_ERROR_OUTPUT,
                          std::string("spanprof: ") + e.what());
  }
}

const char* spanprof_last_error(void) {
  return internal::tls_last_error.c_str();
}

}  // extern "C"
