// Assembling a capture from ring snapshots: the collector's steps after the
// rings are taken, shared by a session's end (StopRecording, from the live
// rings) and by recovery (the stream reader, from a stream file's records).
#ifndef SPANPROF_RUNTIME_SRC_COLLECTOR_ASSEMBLE_H_
#define SPANPROF_RUNTIME_SRC_COLLECTOR_ASSEMBLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collector/ring_parser.h"
#include "collector/ring_snapshot.h"
#include "recorder/recorder_internal.h"
#include "spanprof/capture.h"
#include "spanprof/recording.h"

namespace spanprof::internal {

// What a capture says about its session (`SessionState`'s description, or
// the stream's session chunk).
struct SessionFacts {
  std::string version;
  std::string process_name;
  std::string host;
  int64_t pid = 0;
  bool use_tsc = true;
  uint64_t start_tsc = 0;
  uint64_t start_mono_ns = 0;
  int64_t start_wall_ns = 0;
  int64_t start_wall_uncertainty_ns = 0;
  uint64_t trace_high = 0;
  uint64_t trace_low = 0;
  uint64_t remote_parent_span_id = 0;
  uint64_t span_id_seed = 0;
  uint64_t max_events = 0;
  OverflowPolicy overflow = OverflowPolicy::kDropNewest;
  bool count_allocs = false;
};

// The rings' contents and what goes with them. Snapshots whose `ring` is
// set are handed back to their rings as they are parsed.
struct CaptureInputs {
  std::vector<RingSnapshot> snaps;
  std::vector<uint64_t> drops_by_site;  // by interned site id
  std::vector<Site> sites;              // by interned site id
  std::vector<std::string> counter_names;
  std::vector<ExportPoint> exports;
  ClockPair stop{};
  uint64_t failed_prepares = 0;
  // The threads' named drops (SessionState::ended_drops), when known: a
  // stream read back by `spanprof recover` has only their totals.
  std::vector<SlotDrop> arg_drops;
  bool arg_drops_known = false;
  // Storage for the capture's spans reserved ahead (empty: none). Used when
  // it holds every span; the session end faults it in on another thread
  // while it reads the stream back.
  std::vector<Span> spans;
  // The same for a capture whose spans go compact (`pack_args`): a
  // CompactSpans store reserved ahead, or null.
  std::shared_ptr<CompactSpans> compact_spans;
  // Storage for the collector's pending arguments reserved ahead (empty:
  // none), faulted in the same way. Used when it holds every side record.
  std::vector<PendingArg> args;
  // Storage for the capture's arguments reserved ahead (empty: none), used
  // when it fits them, and the progress that paces the helper faulting
  // these stores in (null: none).
  std::vector<SpanArg> span_args;
  EndProgress* progress = nullptr;
  // The capture only feeds the session end's own outputs: its arguments are
  // packed (Capture::packed_args) instead of 32 bytes each in `args`, and
  // its spans compact (Capture::compact_spans) instead of whole in `spans`.
  bool pack_args = false;
};

// Ends the active session: from here on no span is recorded (the fast path
// sees epoch 0, slow paths re-check it under their ring's lock). Returns
// false when no session was active; else the session's rings and the stop
// time.
bool EndActiveSession(SessionState& session, std::vector<ThreadRing*>* rings,
                      ClockPair* stop);

// The capture of a session that EndActiveSession() ended, from its rings
// (which go back to their threads as they are parsed).
// `pack_args`: as CaptureInputs::pack_args.
Capture CollectEndedSession(const SessionState& session,
                            const std::vector<ThreadRing*>& rings,
                            const ClockPair& stop, bool pack_args = false);

// StopRecording(); `pack_args` as CaptureInputs::pack_args (a capture that
// only feeds the session's own outputs).
Capture StopAndCollect(bool pack_args);

// What an ended session itself knows, beside its threads' records: the
// process's sites and counter names (complete, unlike a stream's, which
// lag by up to a drain), its exported points, the stop time and the failed
// prepares.
void AddSessionTables(const SessionState& session, const ClockPair& stop,
                      CaptureInputs& in);

// The description of the active (or just ended) session.
SessionFacts FactsOf(const SessionState& session);

// Parses `in.snaps` into a capture: spans, cross-thread parents, ring-mode
// trimming, arguments, exports and drops, described by `facts`. Spans open
// at `in.stop` end there, flagged unfinished.
Capture AssembleCapture(const SessionFacts& facts, CaptureInputs& in);

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_COLLECTOR_ASSEMBLE_H_
