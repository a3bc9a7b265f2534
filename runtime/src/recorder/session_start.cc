// Session start: StartRecording() claims the process-wide capture, picks the
// clock, sets the span budgets and publishes the epoch that turns recording
// on; plus the small helpers a session prints at start (predicted memory,
// measured overhead per span). The collector (runtime/src/collector/) ends
// the session.
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>

#include "recorder/recorder_internal.h"
#include "recorder/runtime_copies.h"
#include "spanprof/internal/parse_int.h"
#include "spanprof/recording.h"

namespace spanprof {

using internal::g_epoch;
using internal::Record;
using internal::SessionState;
using internal::SideRecord;

namespace internal {

std::string DefaultProcessName() {
  char buf[256] = {};
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) {
    std::string path(buf, static_cast<size_t>(n));
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  }
  return "process";
}

}  // namespace internal

namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;
// Bytes of ring memory per span: a 16-byte begin and a 16-byte end record,
// plus three 32-byte side records: drop mode budgets one per span for
// arguments, and context scopes take at most two per retained span in
// practice (a push and a pop around it; empty scopes leave nothing); ring
// mode budgets all three per span for both, so that a flight recorder keeps
// the newest spans with their arguments when each carries up to three side
// records (arguments, counted sites, context scopes).
constexpr uint64_t kMainBytesPerSpan = 2 * sizeof(Record);
constexpr uint64_t kSideBytesPerSpan = 3 * sizeof(SideRecord);

std::string Mib(uint64_t bytes) {
  return std::to_string(bytes / (uint64_t{1} << 20)) + " MiB";
}

std::string CapTooLargeMessage(uint64_t max_events, uint64_t worst,
                               const MemoryLimit& limit) {
  return "max_events " + std::to_string(max_events) + " needs up to " +
         (worst == UINT64_MAX ? std::string("more than 16 EiB") : Mib(worst)) +
         " of ring memory, more than " + limit.source + " (" +
         Mib(limit.bytes) + "); lower the cap";
}

// The limit in the cgroup file at `path` ("max", a missing or unreadable
// file: none).
std::optional<uint64_t> ReadCgroupLimit(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  uint64_t bytes = 0;
  if (internal::ParseUint64(text, &bytes) != std::errc()) return std::nullopt;
  return bytes;
}

// Lowers `limit` to the `file` limit of cgroup `path` under `root` or of any
// of its ancestors (a parent's limit binds its children too).
void LowerToCgroupLimit(const std::string& root, std::string path,
                        const char* file, MemoryLimit* limit) {
  for (;;) {
    const std::string at =
        root + (path == "/" ? std::string() : path) + "/" + file;
    const std::optional<uint64_t> bytes = ReadCgroupLimit(at);
    if (bytes.has_value() && *bytes < limit->bytes) {
      *limit = {*bytes, "the cgroup memory limit (" + at + ")"};
    }
    if (path.empty() || path == "/") return;
    path.resize(path.rfind('/'));
    if (path.empty()) path = "/";
  }
}

// Lowers `limit` to this process's cgroup memory limit: the v2 hierarchy
// ("0::/path" in /proc/self/cgroup) or the v1 memory controller
// ("4:memory:/path").
void LowerToCgroupLimits(MemoryLimit* limit) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const size_t first = line.find(':');
    const size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      LowerToCgroupLimit("/sys/fs/cgroup", path, "memory.max", limit);
    } else if (("," + controllers + ",").find(",memory,") !=
               std::string::npos) {
      LowerToCgroupLimit("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes",
                         limit);
    }
  }
}

int64_t WallClockNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

// The session's time 0 paired with the wall clock.
struct WallAnchor {
  internal::ClockPair start;  // the session clock at time 0
  int64_t wall_ns = 0;        // CLOCK_REALTIME at time 0, estimated
  int64_t uncertainty_ns = 0;
};

// Reads CLOCK_REALTIME between two readings of the session clock, three
// times, and keeps the narrowest bracket: time 0 is the bracket's start, the
// wall clock at time 0 the read minus half the bracket, and the uncertainty
// half the bracket (a preemption between the reads widens one try, not all).
WallAnchor MeasureWallAnchor() {
  WallAnchor best;
  uint64_t best_width = UINT64_MAX;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const internal::ClockPair before = internal::ReadClockPair();
    const int64_t wall = WallClockNs();
    const internal::ClockPair after = internal::ReadClockPair();
    const uint64_t width = after.mono_ns - before.mono_ns;
    if (width < best_width) {
      best_width = width;
      const auto half = static_cast<int64_t>((width + 1) / 2);
      best = WallAnchor{before, wall - half, half};
    }
  }
  return best;
}

// Epochs: bit 0 = monotonic clock, the rest counts sessions. Never 0 and
// never internal::kDroppedEpoch. Called under the session mutex.
uint32_t NextSessionEpoch(bool use_tsc) {
  static uint32_t session_counter = 0;
  session_counter = (session_counter % 0x3FFFFFF0u) + 1;
  return (session_counter << 1) | (use_tsc ? 0u : 1u);
}

}  // namespace

const char* OverflowPolicyName(OverflowPolicy policy) noexcept {
  return policy == OverflowPolicy::kRing ? "ring" : "drop";
}

absl::Status ParseOverflowPolicy(const std::string& text, OverflowPolicy* out) {
  if (text == "drop") {
    *out = OverflowPolicy::kDropNewest;
  } else if (text == "ring") {
    *out = OverflowPolicy::kRing;
  } else {
    return absl::InvalidArgumentError("expected 'drop' or 'ring', got '" +
                                      text + "'");
  }
  return absl::OkStatus();
}

uint64_t PredictedMemoryBytes(uint64_t max_events, OverflowPolicy overflow) {
  static_cast<void>(overflow);  // both policies are bounded by the same cap
  const uint64_t per_span =
      (internal::g_alloc_counting_linked.load(std::memory_order_relaxed) ? 2
                                                                         : 1) *
          kMainBytesPerSpan +
      kSideBytesPerSpan;
  // Saturates: a cap of up to 19 digits times ~100 bytes overflows uint64.
  if (max_events > UINT64_MAX / per_span) return UINT64_MAX;
  return max_events * per_span;
}

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);    // NOLINT(google-runtime-int)
  const long page_size = sysconf(_SC_PAGESIZE);  // NOLINT(google-runtime-int)
  if (pages <= 0 || page_size <= 0) return UINT64_MAX;  // unknown: no bound
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

MemoryLimit ProcessMemoryLimit() {
  MemoryLimit limit{PhysicalMemoryBytes(), "this machine's physical memory"};
  LowerToCgroupLimits(&limit);
  rlimit address_space = {};
  if (getrlimit(RLIMIT_AS, &address_space) == 0 &&
      address_space.rlim_cur != RLIM_INFINITY &&
      address_space.rlim_cur < limit.bytes) {
    limit = {static_cast<uint64_t>(address_space.rlim_cur),
             "the address-space limit (RLIMIT_AS)"};
  }
  return limit;
}

double MeasureSpanOverheadNs() {
  // Times the record-writing path into a private scratch ring: the same
  // stores and clock reads as a real span, without touching the session.
  // 4 rounds of 48 spans: ~5 us in all at ~25 ns a span; the minimum round
  // (1.2 us, against a clock read of ~20 ns) is the figure.
  constexpr int kSpans = 48;
  static const unsigned int kNoExceptions = 0;
  static Record buffer[2 * kSpans + 2];
  internal::ThreadState scratch;
  scratch.uncaught = &kNoExceptions;
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed) != 0
                             ? g_epoch.load(std::memory_order_relaxed)
                             : (internal::TscIsInvariant() ? 2u : 3u);
  double best = 1e9;
  for (int round = 0; round < 4; ++round) {
    scratch.cursor.store(buffer, std::memory_order_relaxed);
    scratch.limit = buffer + ptrdiff_t{2} * kSpans;
    const uint64_t t0 = internal::ReadMonotonicNs();
    for (int i = 0; i < kSpans; ++i) {
      Record* c = scratch.cursor.load(std::memory_order_relaxed);
      if (c >= scratch.limit) break;
      internal::WriteBegin(&scratch, c, 1, epoch);
      asm volatile("" ::: "memory");
      c = scratch.cursor.load(std::memory_order_relaxed);
      c->time = internal::ReadClock(epoch);
      c->word = internal::kEndRecord << internal::kKindShift;
      c->heartbeats = static_cast<uint32_t>(internal::tls_heartbeats);
      scratch.limit += 1;
      scratch.cursor.store(c + 1, std::memory_order_release);
      asm volatile("" ::: "memory");
    }
    const uint64_t t1 = internal::ReadMonotonicNs();
    best = std::min(best, static_cast<double>(t1 - t0) / kSpans);
  }
  return best;
}

namespace {

// A session's W3C trace id and remote parent.
struct TraceIds {
  uint64_t high = 0;
  uint64_t low = 0;
  uint64_t remote_parent = 0;  // 0: none
};

// Adopted from `options.traceparent`, else a random trace id.
absl::Status SessionTraceIds(const RecordingOptions& options, TraceIds* ids) {
  if (options.traceparent.empty()) {
    ids->high = internal::RandomU64();
    ids->low = internal::RandomU64();
    return absl::OkStatus();
  }
  return internal::ParseTraceparent(options.traceparent, &ids->high, &ids->low,
                                    &ids->remote_parent);
}

}  // namespace

absl::Status StartRecording(const RecordingOptions& options) {
  if (options.max_events == 0) {
    return absl::InvalidArgumentError("max_events must be a positive integer");
  }
  const uint64_t worst =
      PredictedMemoryBytes(options.max_events, options.overflow);
  if (const MemoryLimit limit = ProcessMemoryLimit(); worst > limit.bytes) {
    return absl::InvalidArgumentError(
        CapTooLargeMessage(options.max_events, worst, limit));
  }
  TraceIds ids;
  if (absl::Status parsed = SessionTraceIds(options, &ids); !parsed.ok()) {
    return parsed;
  }
  const bool invariant = internal::TscIsInvariant();
  if (options.clock == ClockKind::kTsc && !invariant) {
    return absl::FailedPreconditionError(
        "the TSC clock was requested but this CPU has no invariant TSC");
  }
  SessionState& session = internal::Session();
  std::lock_guard<std::mutex> lock(session.mu);
  if (session.active) {
    return absl::FailedPreconditionError(
        "a spanprof session is already active in this process (one at a "
        "time)");
  }
  // Release every ring a previous session left registered (defensive: the
  // collector normally does it).
  session.rings.clear();
  session.options = options;
  if (session.options.process_name.empty()) {
    session.options.process_name = internal::DefaultProcessName();
  }
  session.use_tsc = options.clock == ClockKind::kTsc ||
                    (options.clock == ClockKind::kAuto && invariant);
  session.count_allocs =
      internal::g_alloc_counting_linked.load(std::memory_order_relaxed);
  const auto cap = static_cast<int64_t>(
      std::min<uint64_t>(options.max_events, INT64_MAX / 4));
  session.span_budget.store(
      options.overflow == OverflowPolicy::kDropNewest ? cap : 0,
      std::memory_order_relaxed);
  session.ring_budget.store(options.overflow == OverflowPolicy::kRing ? cap : 0,
                            std::memory_order_relaxed);
  // Side records (arguments, counts, context scopes): one per span of the
  // cap in drop mode, where context records are not budgeted (see
  // AppendSide); three in ring mode, where all share the wrapping buffer.
  session.failed_prepares.store(0, std::memory_order_relaxed);
  session.side_budget.store(
      static_cast<uint64_t>(cap) *
          (options.overflow == OverflowPolicy::kRing ? 3 : 1),
      std::memory_order_relaxed);
  session.pid = getpid();
  session.trace_high = ids.high;
  session.trace_low = ids.low;
  session.remote_parent_span_id = ids.remote_parent;
  session.span_id_seed = internal::RandomU64();
  session.exports.clear();
  session.epoch = NextSessionEpoch(session.use_tsc);
  const WallAnchor anchor = MeasureWallAnchor();
  session.start_tsc = anchor.start.tsc;
  session.start_mono_ns = anchor.start.mono_ns;
  session.start_wall_ns = anchor.wall_ns;
  session.start_wall_uncertainty_ns = anchor.uncertainty_ns;
  session.streaming = false;  // until the session layer opens a stream
  session.active = true;
  internal::StartPrefaulting(worst);
  g_epoch.store(session.epoch, std::memory_order_release);
  internal::WarnAboutOtherRuntimeCopies();
  return absl::OkStatus();
}

bool IsRecording() noexcept {
  return g_epoch.load(std::memory_order_relaxed) != 0;
}

}  // namespace spanprof
