// W3C Trace Context for spanprof sessions: parsing and rendering
// `traceparent`, the session's trace id, and the span ids a process hands
// out (export points, resolved to spans by the collector).
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "recorder/recorder_internal.h"
#include "spanprof/capture.h"
#include "spanprof/context.h"
#include "spanprof/internal/hex_id.h"

namespace spanprof {
namespace internal {
namespace {

bool IsLowerHex(std::string_view text) {
  return std::ranges::all_of(text, [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// The longest a forward search may read between two exports of one thread
// before it gives up and hands out a new id (an alias of the same span when
// it is one; the capture keeps both).
constexpr uint64_t kMaxSameSpanScan = uint64_t{1} << 20;

// The record at stream `position` of `ring`, or nullptr when it is not held
// (caller holds ring.mu; position is below the thread's cursor).
const Record* RecordAt(const ThreadRing& ring, uint64_t position) {
  for (auto it = ring.chunks.rbegin(); it != ring.chunks.rend(); ++it) {
    if (it->records == nullptr || it->capacity == 0) continue;
    if (it->base_position > position) continue;
    if (position - it->base_position >= it->capacity) return nullptr;
    return &it->records[position - it->base_position];
  }
  return nullptr;
}

// Whether stream points `a` and `b` (a before b) of one drop-mode thread
// have the same innermost span: the records between them are balanced and
// never close a span open at `a`, and no context scope began or ended
// between them (when no span is open, the scope decides).
bool SameSpan(ThreadRing& ring, const ExportPoint& a, uint64_t b_position,
              uint64_t b_side) {
  if (ring.ring_mode || b_position < a.position || b_side < a.side) {
    return false;
  }
  if (b_position - a.position > kMaxSameSpanScan) return false;
  std::lock_guard<std::mutex> lock(ring.mu);
  int64_t depth = 0;
  for (uint64_t x = a.position; x < b_position; ++x) {
    const Record* rec = RecordAt(ring, x);
    if (rec == nullptr) return false;
    const uint32_t kind = rec->word >> kKindShift;
    if (kind == kBeginRecord) {
      ++depth;
    } else if (kind == kEndRecord || kind == kEndExceptionRecord ||
               kind == kEndCountRecord) {
      if (--depth < 0) return false;
    }
  }
  if (depth != 0) return false;
  if (a.side < ring.side.first() || b_side > ring.side.storage()) {
    return false;  // a streaming ring reused the memory of older ones
  }
  for (uint64_t i = a.side; i < b_side; ++i) {
    const uint32_t kind = ring.side[i].kind;
    if (kind == kSideContextPush || kind == kSideContextPop) return false;
  }
  return true;
}

}  // namespace

absl::Status ParseTraceparent(std::string_view header, uint64_t* trace_high,
                              uint64_t* trace_low, uint64_t* span) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(std::string("malformed traceparent '") +
                                      std::string(header.substr(0, 128)) +
                                      (header.size() > 128 ? "...'" : "'") +
                                      ": " + std::string(why));
  };
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2.
  constexpr size_t kLength = 55;
  if (header.size() < kLength) {
    return bad("expected 55 characters (00-<32 hex>-<16 hex>-<2 hex>)");
  }
  const std::string_view version = header.substr(0, 2);
  if (!IsLowerHex(version)) return bad("the version is not 2 lowercase hex");
  if (version == "ff") return bad("version ff is invalid");
  if (header[2] != '-' || header[35] != '-' || header[52] != '-') {
    return bad("expected '-' between the four fields");
  }
  if (version == "00" && header.size() != kLength) {
    return bad("version 00 has exactly 55 characters");
  }
  if (header.size() > kLength && header[kLength] != '-') {
    return bad("a later version's extra fields must follow a '-'");
  }
  const std::string_view trace = header.substr(3, 32);
  const std::string_view parent = header.substr(36, 16);
  const std::string_view flags = header.substr(53, 2);
  if (!IsLowerHex(trace)) return bad("the trace id is not 32 lowercase hex");
  if (!IsLowerHex(parent)) return bad("the parent id is not 16 lowercase hex");
  if (!IsLowerHex(flags)) return bad("the flags are not 2 lowercase hex");
  uint64_t high = 0;
  uint64_t low = 0;
  uint64_t parent_id = 0;
  ParseHexId(trace.substr(0, 16), &high);
  ParseHexId(trace.substr(16), &low);
  ParseHexId(parent, &parent_id);
  if ((high | low) == 0) return bad("the trace id is all zeros");
  if (parent_id == 0) return bad("the parent id is all zeros");
  *trace_high = high;
  *trace_low = low;
  *span = parent_id;
  return absl::OkStatus();
}

std::string RenderTraceparent(uint64_t trace_high, uint64_t trace_low,
                              uint64_t span) {
  return "00-" + HexId(trace_high) + HexId(trace_low) + "-" + HexId(span) +
         "-01";
}

uint64_t RandomU64() noexcept {
  uint64_t v = 0;
  if (getrandom(&v, sizeof(v), 0) == static_cast<ssize_t>(sizeof(v)) &&
      v != 0) {
    return v;
  }
  // No entropy source: the clock and pid, mixed.
  return DerivedSpanId(
      ReadMonotonicNs() ^ (static_cast<uint64_t>(getpid()) << 40), ReadTsc());
}

uint64_t ExportContext(uint32_t epoch, uint32_t slot, uint64_t position,
                       uint64_t side) {
  SessionState& session = Session();
  std::lock_guard<std::mutex> lock(session.mu);
  if (!session.active || session.epoch != epoch) return 0;
  // The thread's latest export: the same point, or a later one in the same
  // span, gets the same id.
  for (auto it = session.exports.rbegin(); it != session.exports.rend(); ++it) {
    if (it->slot != slot) continue;
    if (it->position == position && it->side == side) return it->external_id;
    if (slot < session.rings.size() &&
        SameSpan(*session.rings[slot], *it, position, side)) {
      return it->external_id;
    }
    break;
  }
  const uint64_t id = DerivedSpanId(
      session.span_id_seed, kExportedSpanIdBase + session.exports.size());
  session.exports.push_back(ExportPoint{slot, position, side, id});
  return id;
}

}  // namespace internal

std::string Context::Traceparent() const {
  if (remote()) {
    return internal::RenderTraceparent(trace_high_, trace_low_, remote_span_);
  }
  if (!valid()) return "";
  const uint64_t span =
      internal::ExportContext(epoch_, thread_, position_, side_);
  if (span == 0) return "";
  internal::SessionState& session = internal::Session();
  uint64_t high = 0;
  uint64_t low = 0;
  {
    std::lock_guard<std::mutex> lock(session.mu);
    high = session.trace_high;
    low = session.trace_low;
  }
  return internal::RenderTraceparent(high, low, span);
}

absl::StatusOr<Context> ContextFromTraceparent(std::string_view header) {
  Context ctx;
  if (absl::Status parsed = internal::ParseTraceparent(
          header, &ctx.trace_high_, &ctx.trace_low_, &ctx.remote_span_);
      !parsed.ok()) {
    return parsed;
  }
  return ctx;
}

}  // namespace spanprof
