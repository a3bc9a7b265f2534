// span_overhead_benchmark: the per-span cost of spanprof next to the hardware
// floors it is built on, plus session-end throughput, all in one binary so
// that bench/gate computes its ratios from one run on one machine.
//
// Floors (same loop shape as the spans: two timestamps, a compiler barrier
// after each half):
//   BM_EmptyLoop                      the loop and barriers alone
//   BM_RdtscPair                      two rdtsc reads (the clock floor)
//   BM_RdtscPairPlusTwo16ByteStores   + two 16-byte stores into a thread-local
//                                     ring (the recording floor; also with
//                                     2 threads)
//   BM_ClockGettimePair               two clock_gettime(CLOCK_MONOTONIC)
// spanprof:
//   BM_SpanEnabled (1 and 2 threads), BM_SpanEnabledFirstTouch (fresh ring
//   memory), BM_SpanDisabled, BM_SpanCompiledOut (compiled_out_span.cc,
//   SPANPROF_ENABLED=0), BM_SpanWithTags, BM_RunCallable,
//   BM_SpanWithHeartbeat, BM_SpanWithArg, BM_MeasureSpanOverhead (what a
//   session records as overhead_ns_per_span), BM_CApiSpan (the C API's
//   spanprof_begin/spanprof_end pair), BM_SpanDynamicRepeated and
//   BM_SpanDynamicNewName (SPANPROF_SCOPE_DYNAMIC: a repeated run-time name,
//   a new one every span)
// Session end:
//   BM_CollectAndSummarize (spans/s), BM_TraceToJson (write MB/s),
//   BM_TraceToPerfetto and BM_TraceToPerfettoPlain (the protobuf trace: write
//   time, bytes per span, with and without heartbeats),
//   BM_ParseTrace and BM_ParseSummary (read MB/s)
//
// Every enabled benchmark starts its session before the timed loop with a cap
// that the fixed iteration count never reaches (drop mode), so the timed loop
// measures the recording path including its amortized chunk refills, never
// the drop path. docs/performance.md explains the choice.
#include <x86intrin.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/src/recorder/ring_memory.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"
#include "spanprof/spanprof_c.h"
#include "workload.h"

namespace {

// Fixed iteration counts: the enabled benchmarks size their cap from them.
constexpr int64_t kSpanIterations = 500'000;
constexpr int64_t kCheapIterations = 50'000'000;  // loops under 2 ns
// A long first session: millions of spans into fresh memory.
constexpr int64_t kFirstSessionSpans = 2'000'000;

// The clock the enabled benchmarks record with: SPANPROF_BENCH_CLOCK=monotonic
// forces CLOCK_MONOTONIC (bench/gate uses it to prove that it catches a slower
// span path).
spanprof::ClockKind BenchClock() {
  const char* clock = std::getenv("SPANPROF_BENCH_CLOCK");
  if (clock != nullptr && std::string(clock) == "monotonic") {
    return spanprof::ClockKind::kMonotonic;
  }
  return spanprof::ClockKind::kAuto;
}

// Ring memory handed out before the session started (thread 0's copy).
uint64_t g_ring_bytes_before = 0;

// Starts a session (thread 0 only; the other threads wait at the loop's
// start barrier) with room for every span of the timed loop.
void StartSession(benchmark::State& state, uint64_t spans_per_thread) {
  if (state.thread_index() != 0) return;
  g_ring_bytes_before = spanprof::internal::RingBytesAllocated();
  spanprof::RecordingOptions options;
  // Credit is handed out in chunks of up to 4096 spans: a thread that
  // finishes early may still hold some, so each thread gets that much slack.
  options.max_events =
      (spans_per_thread + 8192) * static_cast<uint64_t>(state.threads());
  options.overflow = spanprof::OverflowPolicy::kDropNewest;
  options.clock = BenchClock();
  const absl::Status started = spanprof::StartRecording(options);
  if (!started.ok()) {
    state.SkipWithError(std::string(started.message()).c_str());
  }
}

// Stops the session and reports the ring memory it took per retained span
// (every chunk of every thread, including the unused tail of the last one)
// and drops (which must be 0: the cap is sized so the loop never drops).
void StopSession(benchmark::State& state) {
  if (state.thread_index() != 0) return;
  const uint64_t ring_bytes =
      spanprof::internal::RingBytesAllocated() - g_ring_bytes_before;
  const spanprof::Capture capture = spanprof::StopRecording();
  const double spans = static_cast<double>(capture.spans.size());
  state.counters["bytes_per_span"] =
      spans > 0 ? static_cast<double>(ring_bytes) / spans : 0.0;
  state.counters["dropped"] = static_cast<double>(capture.dropped_events);
}

// ---------------------------------------------------------------- floors

void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::ClobberMemory();
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_EmptyLoop)->Iterations(kCheapIterations);

void BM_RdtscPair(benchmark::State& state) {
  for (auto _ : state) {
    uint64_t begin = __rdtsc();
    benchmark::DoNotOptimize(begin);
    benchmark::ClobberMemory();
    uint64_t end = __rdtsc();
    benchmark::DoNotOptimize(end);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_RdtscPair)->Iterations(kSpanIterations);

struct FloorRecord {
  uint64_t time;
  uint32_t word;
  uint32_t heartbeats;
};
// A 64 KiB thread-local ring (power of two, masked): the best case of a
// per-thread buffer that stays in cache.
constexpr uint64_t kFloorRingRecords = 4096;
thread_local FloorRecord tls_floor_ring[kFloorRingRecords];
thread_local uint64_t tls_floor_index = 0;

void BM_RdtscPairPlusTwo16ByteStores(benchmark::State& state) {
  FloorRecord* ring = tls_floor_ring;
  uint64_t index = tls_floor_index;
  for (auto _ : state) {
    ring[index & (kFloorRingRecords - 1)] = FloorRecord{__rdtsc(), 1, 0};
    ++index;
    benchmark::ClobberMemory();
    ring[index & (kFloorRingRecords - 1)] = FloorRecord{__rdtsc(), 2, 0};
    ++index;
    benchmark::ClobberMemory();
  }
  tls_floor_index = index;
}
BENCHMARK(BM_RdtscPairPlusTwo16ByteStores)->Iterations(kSpanIterations);
// Two threads at once: the floor for BM_SpanEnabled->Threads(2). On a VM whose
// two vCPUs may be siblings of one physical core, the floor itself slows down
// with a second thread; bench/gate compares spanprof's scaling to it.
BENCHMARK(BM_RdtscPairPlusTwo16ByteStores)
    ->Iterations(kSpanIterations)
    ->Threads(2);

void BM_ClockGettimePair(benchmark::State& state) {
  for (auto _ : state) {
    timespec begin;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    benchmark::DoNotOptimize(begin);
    benchmark::ClobberMemory();
    timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    benchmark::DoNotOptimize(end);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_ClockGettimePair)->Iterations(kSpanIterations);

// -------------------------------------------------------------- spanprof

void BM_SpanEnabled(benchmark::State& state) {
  StartSession(state, kSpanIterations);
  for (auto _ : state) {
    SPANPROF_SCOPE("bench.span");
    benchmark::ClobberMemory();
  }
  StopSession(state);
}
BENCHMARK(BM_SpanEnabled)->Iterations(kSpanIterations);
BENCHMARK(BM_SpanEnabled)->Iterations(kSpanIterations)->Threads(2);

// The first session of a process: 2 million spans into ring memory fresh
// from the kernel (the process-wide block cache is emptied first). Every
// block is faulted in during the timed loop, by the prefaulter thread ahead
// of the ring, or by the recording thread itself when the prefaulter falls
// behind. Gated: the recording thread's CPU time per span.
void BM_SpanEnabledFirstTouch(benchmark::State& state) {
  spanprof::internal::ReleaseCachedChunks();
  StartSession(state, kFirstSessionSpans);
  for (auto _ : state) {
    SPANPROF_SCOPE("bench.span");
    benchmark::ClobberMemory();
  }
  StopSession(state);
}
BENCHMARK(BM_SpanEnabledFirstTouch)->Iterations(kFirstSessionSpans);

void BM_SpanDisabled(benchmark::State& state) {
  for (auto _ : state) {
    SPANPROF_SCOPE("bench.disabled");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_SpanDisabled)->Iterations(kCheapIterations);

void BM_SpanWithTags(benchmark::State& state) {
  StartSession(state, kSpanIterations);
  for (auto _ : state) {
    SPANPROF_SCOPE("bench.tags",
                   {.phase = "forward", .module = "encoder", .activity = "x"});
    benchmark::ClobberMemory();
  }
  StopSession(state);
}
BENCHMARK(BM_SpanWithTags)->Iterations(kSpanIterations);

void BM_RunCallable(benchmark::State& state) {
  StartSession(state, kSpanIterations);
  for (auto _ : state) {
    spanprof::Run("bench.run", [] { benchmark::ClobberMemory(); });
  }
  StopSession(state);
}
BENCHMARK(BM_RunCallable)->Iterations(kSpanIterations);

void BM_SpanWithHeartbeat(benchmark::State& state) {
  StartSession(state, kSpanIterations);
  for (auto _ : state) {
    SPANPROF_SCOPE("bench.heartbeat");
    spanprof::Heartbeat();
    benchmark::ClobberMemory();
  }
  StopSession(state);
}
BENCHMARK(BM_SpanWithHeartbeat)->Iterations(kSpanIterations);

void BM_SpanWithArg(benchmark::State& state) {
  StartSession(state, kSpanIterations);
  int64_t value = 0;
  for (auto _ : state) {
    SPANPROF_SCOPE("bench.arg");
    SPANPROF_ARG("value", ++value);
    benchmark::ClobberMemory();
  }
  StopSession(state);
}
BENCHMARK(BM_SpanWithArg)->Iterations(kSpanIterations);

// Run-time names (SPANPROF_SCOPE_DYNAMIC): 16 names of 24-27 bytes, held in
// strings and cycled, each interned before the timed loop, so every span is
// a repeated name: a hash of the name and a lock-free table lookup on top of
// the plain span. Gated against BM_SpanEnabled (<= 2x).
void BM_SpanDynamicRepeated(benchmark::State& state) {
  std::vector<std::string> names;
  for (int i = 0; i < 16; ++i) {
    names.push_back("build.rule.cxx_compile." + std::to_string(100 + i));
  }
  StartSession(state, kSpanIterations + names.size());
  for (const std::string& name : names) {
    SPANPROF_SCOPE_DYNAMIC(name);
  }
  size_t i = 0;
  for (auto _ : state) {
    SPANPROF_SCOPE_DYNAMIC(names[i++ & 15]);
    benchmark::ClobberMemory();
  }
  StopSession(state);
}
BENCHMARK(BM_SpanDynamicRepeated)->Iterations(kSpanIterations);

// A new run-time name every span (interned, copied, and its site added to
// the site table on its first begin): gated <= 1 us. Names are built before
// the timed loop and are new in every repetition (kNewNameIterations a
// repetition keeps 60 repetitions under the bound of 65,536 names; past it
// the benchmark reports an error instead of timing the overflow path).
constexpr int64_t kNewNameIterations = 1'000;
void BM_SpanDynamicNewName(benchmark::State& state) {
  static int repetition = 0;
  const int run = repetition++;
  std::vector<std::string> names;
  for (int64_t i = 0; i < kNewNameIterations; ++i) {
    names.push_back("target/obj/src/file_" + std::to_string(run) + "_" +
                    std::to_string(i) + ".o");
  }
  StartSession(state, kNewNameIterations);
  size_t i = 0;
  for (auto _ : state) {
    SPANPROF_SCOPE_DYNAMIC(names[i++]);
    benchmark::ClobberMemory();
  }
  const spanprof::Capture capture = spanprof::StopRecording();
  for (const spanprof::Site& site : capture.sites) {
    if (site.name.find("(overflow)") != std::string::npos) {
      state.SkipWithError("the run-time name table is full");
      break;
    }
  }
}
BENCHMARK(BM_SpanDynamicNewName)->Iterations(kNewNameIterations);

// Hooks cost nothing for spans that have none. `Hooks{}` (every
// member NoHook) compiles to the plain `Run`.
void BM_RunEmptyHooks(benchmark::State& state) {
  StartSession(state, kSpanIterations);
  for (auto _ : state) {
    spanprof::Run("bench.run.hooks", spanprof::Hooks{},
                  [] { benchmark::ClobberMemory(); });
  }
  StopSession(state);
}
BENCHMARK(BM_RunEmptyHooks)->Iterations(kSpanIterations);

// A span with one short string argument (a file name: 20 bytes, a
// string record and one text record).
void BM_SpanWithStringArg(benchmark::State& state) {
  // Two side records a span: a cap twice the spans keeps every argument
  // (the side budget is one record per span of the cap).
  StartSession(state, 2 * kSpanIterations);
  const std::string_view file = "src/indexer/main.cc";
  for (auto _ : state) {
    SPANPROF_SCOPE("bench.arg_str");
    SPANPROF_ARG_STR("file", file);
    benchmark::ClobberMemory();
  }
  StopSession(state);
}
BENCHMARK(BM_SpanWithStringArg)->Iterations(kSpanIterations);

// The C API's span (spanprof/spanprof_c.h): the same begin and end as
// BM_SpanEnabled, each behind one out-of-line call. Gated against it.
void BM_CApiSpan(benchmark::State& state) {
  spanprof_site* site =
      spanprof_site_get("bench.c_span", nullptr, nullptr, nullptr);
  StartSession(state, kSpanIterations);
  for (auto _ : state) {
    const spanprof_token span = spanprof_begin(site);
    benchmark::ClobberMemory();
    spanprof_end(span);
  }
  StopSession(state);
}
BENCHMARK(BM_CApiSpan)->Iterations(kSpanIterations);

// The floor of a counter increment: a plain thread-local add (what
// spanprof::Heartbeat does), with the same compiler barrier per iteration.
__thread uint64_t tls_bench_counter = 0;
void BM_ThreadLocalAdd(benchmark::State& state) {
  for (auto _ : state) {
    tls_bench_counter += 1;
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(tls_bench_counter);
}
BENCHMARK(BM_ThreadLocalAdd)->Iterations(kCheapIterations);

// A named counter increment inside an open span: a thread-local add and a bit
// set. The span around the loop flushes the sum once, at its end.
void BM_CountIncrement(benchmark::State& state) {
  StartSession(state, kSpanIterations);
  {
    SPANPROF_SCOPE("bench.counting");
    for (auto _ : state) {
      SPANPROF_COUNT("bench.count");
      benchmark::ClobberMemory();
    }
  }
  StopSession(state);
}
BENCHMARK(BM_CountIncrement)->Iterations(kCheapIterations);

// A span that counts: the increment plus, at the span's end, the flush of
// one side record.
void BM_SpanWithCount(benchmark::State& state) {
  StartSession(state, kSpanIterations);
  for (auto _ : state) {
    SPANPROF_SCOPE("bench.count.span");
    SPANPROF_COUNT("bench.count", 3);
    benchmark::ClobberMemory();
  }
  StopSession(state);
}
BENCHMARK(BM_SpanWithCount)->Iterations(kSpanIterations);

// A thread pool's task that records nothing: a ContextScope whose push is
// withdrawn when it ends (under the ring's lock, so that the stream's drain
// never copies a push that is withdrawn after). Not gated; the figure is in
// docs/performance.md.
void BM_EmptyContextScope(benchmark::State& state) {
  StartSession(state, kSpanIterations);
  spanprof::Context ctx;
  {
    SPANPROF_SCOPE("bench.context.parent");
    ctx = spanprof::CurrentContext();
  }
  for (auto _ : state) {
    const spanprof::ContextScope scope(ctx);
    benchmark::ClobberMemory();
  }
  StopSession(state);
}
BENCHMARK(BM_EmptyContextScope)->Iterations(kSpanIterations);

// What a session records as `overhead_ns_per_span`: MeasureSpanOverheadNs()
// (a few microseconds at session start), reported as the counter
// `overhead_ns` so it can be compared with BM_SpanEnabled in the same run.
void BM_MeasureSpanOverhead(benchmark::State& state) {
  double sum = 0;
  for (auto _ : state) {
    sum += spanprof::MeasureSpanOverheadNs();
  }
  state.counters["overhead_ns"] = sum / static_cast<double>(state.iterations());
}
BENCHMARK(BM_MeasureSpanOverhead)
    ->Iterations(20)
    ->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------- session end

constexpr int64_t kCaptureSpans = 1'000'000;

spanprof::Capture RecordCapture(
    int64_t spans,
    spanprof::bench::Beats beats = spanprof::bench::Beats::kEveryStep) {
  static_cast<void>(spanprof::bench::StartAndRecordWorkload(spans, beats));
  return spanprof::StopRecording();
}

// Session end: StopRecording (collect every ring, pair records, ticks to ns),
// plus analysis::Summarize when `summarize`, timed together; items = spans.
void CollectBenchmark(benchmark::State& state, bool summarize) {
  int64_t spans = 0;
  for (auto _ : state) {
    state.PauseTiming();
    if (!spanprof::bench::StartAndRecordWorkload(kCaptureSpans)) {
      state.SkipWithError("StartRecording failed");
      break;
    }
    state.ResumeTiming();
    spanprof::Capture capture = spanprof::StopRecording();
    spanprof::analysis::Summary summary;
    if (summarize) summary = spanprof::analysis::Summarize(capture);
    benchmark::DoNotOptimize(capture.spans.data());
    benchmark::DoNotOptimize(summary.rows.data());
    spans += static_cast<int64_t>(capture.spans.size());
    state.PauseTiming();  // freeing the capture is not collection
    capture = {};
    summary = {};
    state.ResumeTiming();
  }
  state.SetItemsProcessed(spans);
}

void BM_CollectAndSummarize(benchmark::State& state) {
  CollectBenchmark(state, /*summarize=*/true);
}
BENCHMARK(BM_CollectAndSummarize)->Iterations(2)->Unit(benchmark::kMillisecond);

// The memory floor of session end: the least any collector + analysis must
// do per span is write its 80-byte Span into fresh memory once (first-touch
// page faults included: a real session end allocates the capture anew) and
// read it back once. Same span count as BM_CollectAndSummarize; the gate
// divides the two.
void BM_SessionEndMemoryFloor(benchmark::State& state) {
  int64_t spans = 0;
  for (auto _ : state) {
    std::vector<spanprof::Span> capture;
    capture.reserve(static_cast<size_t>(kCaptureSpans));
    for (int64_t i = 0; i < kCaptureSpans; ++i) {
      spanprof::Span& span = capture.emplace_back();
      span.id = static_cast<uint64_t>(i) + 1;
      span.start_ns = i;
      span.end_ns = i + 1;
    }
    benchmark::ClobberMemory();
    int64_t sum = 0;
    for (const spanprof::Span& span : capture)
      sum += span.end_ns - span.start_ns;
    benchmark::DoNotOptimize(sum);
    spans += static_cast<int64_t>(capture.size());
    state.PauseTiming();  // freeing is not part of it
    capture = {};
    state.ResumeTiming();
  }
  state.SetItemsProcessed(spans);
}
BENCHMARK(BM_SessionEndMemoryFloor)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);

// The two halves of BM_CollectAndSummarize, for the split in
// docs/performance.md: StopRecording() alone, and Summarize() of a
// 1,000,000-span capture made once.
void BM_Collect(benchmark::State& state) {
  CollectBenchmark(state, /*summarize=*/false);
}
BENCHMARK(BM_Collect)->Iterations(2)->Unit(benchmark::kMillisecond);

void BM_Summarize(benchmark::State& state) {
  static const spanprof::Capture* capture =
      new spanprof::Capture(RecordCapture(kCaptureSpans));
  int64_t spans = 0;
  for (auto _ : state) {
    const spanprof::analysis::Summary summary =
        spanprof::analysis::Summarize(*capture);
    benchmark::DoNotOptimize(summary.rows.data());
    spans += static_cast<int64_t>(capture->spans.size());
  }
  state.SetItemsProcessed(spans);
}
BENCHMARK(BM_Summarize)->Iterations(3)->Unit(benchmark::kMillisecond);

const spanprof::Capture& TraceCapture() {
  static const spanprof::Capture* capture =
      new spanprof::Capture(RecordCapture(100'000));
  return *capture;
}

void BM_TraceToJson(benchmark::State& state) {
  const spanprof::Capture& capture = TraceCapture();
  int64_t bytes = 0;
  for (auto _ : state) {
    const std::string json = spanprof::analysis::TraceToJson(capture);
    bytes += static_cast<int64_t>(json.size());
    benchmark::DoNotOptimize(json.data());
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_TraceToJson)->Iterations(5)->Unit(benchmark::kMillisecond);

// The Perfetto protobuf trace of `capture`: bytes_per_span is the file's
// size (its header included) over the spans.
void TraceToPerfetto(benchmark::State& state,
                     const spanprof::Capture& capture) {
  int64_t bytes = 0;
  size_t size = 0;
  for (auto _ : state) {
    const std::string trace = spanprof::analysis::CaptureToPerfetto(capture);
    bytes += static_cast<int64_t>(trace.size());
    size = trace.size();
    benchmark::DoNotOptimize(trace.data());
  }
  state.SetBytesProcessed(bytes);
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(capture.spans.size()));
  state.counters["bytes_per_span"] =
      static_cast<double>(size) / static_cast<double>(capture.spans.size());
}

// The same capture as BM_TraceToJson; bench/gate compares the time per span
// of the two writers (the workload's spans carry no arguments; a third carry
// heartbeats, an annotation).
void BM_TraceToPerfetto(benchmark::State& state) {
  TraceToPerfetto(state, TraceCapture());
}
BENCHMARK(BM_TraceToPerfetto)->Iterations(5)->Unit(benchmark::kMillisecond);

// The two writers on a long capture (1,000,000 spans, the default cap): the
// JSON text no longer fits the caches, which is what a long session's end
// meets. bench/gate checks the ratio of their times per span.
const spanprof::Capture& LongTraceCapture() {
  static const spanprof::Capture* capture =
      new spanprof::Capture(RecordCapture(1'000'000));
  return *capture;
}

void BM_TraceToJsonLong(benchmark::State& state) {
  const spanprof::Capture& capture = LongTraceCapture();
  for (auto _ : state) {
    const std::string json = spanprof::analysis::TraceToJson(capture);
    benchmark::DoNotOptimize(json.data());
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(capture.spans.size()));
}
BENCHMARK(BM_TraceToJsonLong)->Iterations(2)->Unit(benchmark::kMillisecond);

void BM_TraceToPerfettoLong(benchmark::State& state) {
  TraceToPerfetto(state, LongTraceCapture());
}
BENCHMARK(BM_TraceToPerfettoLong)->Iterations(2)->Unit(benchmark::kMillisecond);

// The workload without heartbeats: spans that carry nothing but a name, tags
// (a category) and their times, what the target of 24 bytes a span is about.
void BM_TraceToPerfettoPlain(benchmark::State& state) {
  static const spanprof::Capture* capture = new spanprof::Capture(
      RecordCapture(100'000, spanprof::bench::Beats::kNone));
  TraceToPerfetto(state, *capture);
}
BENCHMARK(BM_TraceToPerfettoPlain)
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

void BM_ParseTrace(benchmark::State& state) {
  const std::string json = spanprof::analysis::TraceToJson(TraceCapture());
  int64_t bytes = 0;
  for (auto _ : state) {
    auto parsed = spanprof::analysis::ParseTrace(json, "bench-trace.json");
    if (!parsed.ok()) {
      state.SkipWithError(std::string(parsed.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(parsed->spans.data());
    bytes += static_cast<int64_t>(json.size());
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_ParseTrace)->Iterations(5)->Unit(benchmark::kMillisecond);

// Reading the Perfetto protobuf trace of the same capture back.
void BM_ParsePerfettoTrace(benchmark::State& state) {
  const std::string trace =
      spanprof::analysis::CaptureToPerfetto(TraceCapture());
  int64_t bytes = 0;
  for (auto _ : state) {
    auto parsed = spanprof::analysis::ParseTrace(trace, "bench.pftrace");
    if (!parsed.ok()) {
      state.SkipWithError(std::string(parsed.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(parsed->spans.data());
    bytes += static_cast<int64_t>(trace.size());
  }
  state.SetBytesProcessed(bytes);
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(TraceCapture().spans.size()));
}
BENCHMARK(BM_ParsePerfettoTrace)->Iterations(5)->Unit(benchmark::kMillisecond);

// A summary with many rows (2000 distinct keys), so that reading it is not
// dominated by fixed costs.
const std::string& SummaryJson() {
  static const std::string* json = [] {
    static std::deque<std::string> names;  // sites are keyed by address
    for (int i = 0; i < 2000; ++i)
      names.push_back("bench.site." + std::to_string(i));
    spanprof::RecordingOptions options;
    options.max_events = 100'000;
    static_cast<void>(spanprof::StartRecording(options));
    for (int round = 0; round < 20; ++round) {
      for (const std::string& name : names) {
        spanprof::Run(name.c_str(), [] { benchmark::ClobberMemory(); });
      }
    }
    const spanprof::Capture capture = spanprof::StopRecording();
    return new std::string(spanprof::analysis::SummaryToJson(
        spanprof::analysis::Summarize(capture)));
  }();
  return *json;
}

void BM_ParseSummary(benchmark::State& state) {
  const std::string& json = SummaryJson();
  int64_t bytes = 0;
  for (auto _ : state) {
    auto parsed = spanprof::analysis::ParseSummary(json, "bench-summary.json");
    if (!parsed.ok()) {
      state.SkipWithError(std::string(parsed.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(parsed->rows.data());
    bytes += static_cast<int64_t>(json.size());
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_ParseSummary)->Iterations(20)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
