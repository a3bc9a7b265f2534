// fuzz_properties.h — what every fuzz input must satisfy, shared by the
// libFuzzer targets (which abort when a property fails) and by
// tests/analysis/fuzz_regression_test.cc (which checks the seed corpus and
// every input a fuzzer ever crashed on, in every build, without clang).
#ifndef SPANPROF_TESTS_FUZZ_FUZZ_PROPERTIES_H_
#define SPANPROF_TESTS_FUZZ_FUZZ_PROPERTIES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/folded.h"
#include "spanprof/analysis/merge.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/analysis/validate.h"
#include "spanprof/cli/compare_args.h"
#include "spanprof/context.h"
#include "spanprof/stream.h"

namespace spanprof::fuzzing {

// `ContextFromTraceparent()` never crashes; what it accepts renders as
// `00-<the same trace id>-<the same parent id>-01`, which parses again to
// the same rendering; what it refuses is an InvalidArgument naming the
// header.
inline bool TraceparentHolds(std::string_view data) {
  absl::StatusOr<Context> ctx = ContextFromTraceparent(data);
  if (!ctx.ok()) {
    return ctx.status().code() == absl::StatusCode::kInvalidArgument &&
           ctx.status().message().rfind("malformed traceparent '", 0) == 0;
  }
  const std::string rendered = ctx->Traceparent();
  if (!ctx->remote() || rendered.size() != 55 ||
      rendered.substr(0, 3) != "00-" || rendered.substr(52) != "-01" ||
      data.size() < 55 || rendered.substr(3, 49) != data.substr(3, 49)) {
    return false;
  }
  absl::StatusOr<Context> again = ContextFromTraceparent(rendered);
  return again.ok() && again->Traceparent() == rendered;
}

// The stream reader never crashes and never trusts what it cannot check:
// what it refuses is an InvalidArgument naming the file; what it recovers
// summarizes into a summary that the strict reader accepts.
inline bool StreamReaderHolds(std::string_view data) {
  absl::StatusOr<RecoveredCapture> recovered = RecoverStream(data, "fuzz");
  if (!recovered.ok()) {
    return recovered.status().code() == absl::StatusCode::kInvalidArgument &&
           recovered.status().message().rfind("fuzz: ", 0) == 0;
  }
  const std::string json =
      analysis::SummaryToJson(analysis::Summarize(recovered->capture));
  return analysis::ParseSummary(json, "fuzz-summary").ok();
}

// The strict summary reader never crashes; whatever it accepts survives a
// round trip through the writer unchanged.
inline bool SummaryReaderHolds(std::string_view data) {
  absl::StatusOr<analysis::Summary> summary =
      analysis::ParseSummary(data, "fuzz");
  if (!summary.ok()) return true;
  absl::StatusOr<analysis::Summary> again =
      analysis::ParseSummary(analysis::SummaryToJson(*summary), "fuzz-again");
  // The writer writes the current version whatever version was read (a
  // version 1 document reads back as the same content in version 2).
  if (!again.ok() || again->schema_version != analysis::kSummarySchemaVersion) {
    return false;
  }
  again->schema_version = summary->schema_version;
  return *again == *summary;
}

// What every capture read from a trace satisfies: its summary (and its
// JSON) reads back, and folded stacks never crash.
inline bool CaptureConsumersHold(const Capture& capture) {
  const analysis::Summary summary = analysis::Summarize(capture);
  absl::StatusOr<analysis::Summary> back =
      analysis::ParseSummary(analysis::SummaryToJson(summary), "fuzz-summary");
  if (!back.ok() || back->source != capture.source) return false;
  analysis::FoldedStacks(capture);
  return true;
}

// The strict trace reader and everything that consumes its capture
// (validation, the summary, folded stacks) never crash; an accepted trace of
// spanprof's survives a round trip through the writer (compared as text, so
// NaN arguments compare equal) and its summary reads back. (A foreign trace
// the fuzzer reaches is held to chrome_trace_reader_fuzzer's properties.)
inline bool TraceReaderHolds(std::string_view data) {
  analysis::ValidateArtifact(data, "fuzz");
  absl::StatusOr<Capture> capture = analysis::ParseTrace(data, "fuzz");
  if (!capture.ok()) return true;
  if (capture->source != "spanprof") return CaptureConsumersHold(*capture);
  const std::string written = analysis::TraceToJson(*capture);
  absl::StatusOr<Capture> again = analysis::ParseTrace(written, "fuzz-again");
  if (!again.ok() || analysis::TraceToJson(*again) != written) return false;
  const analysis::Summary summary = analysis::Summarize(*capture);
  if (!analysis::ParseSummary(analysis::SummaryToJson(summary), "fuzz-summary")
           .ok()) {
    return false;
  }
  analysis::FoldedStacks(*capture);
  return true;
}

// The Perfetto protobuf trace reader (reached through `ParseTrace()`, as
// every command reaches it, and through validation) never crashes; its
// errors name the source and a byte; an accepted trace summarizes and
// survives a round trip through the writer (compared as the JSON trace, so
// NaN arguments compare equal).
inline bool PerfettoReaderHolds(std::string_view data) {
  analysis::ValidateArtifact(data, "fuzz");
  absl::StatusOr<Capture> capture = analysis::ParseTrace(data, "fuzz");
  if (!capture.ok()) {
    if (!analysis::LooksLikePerfettoTrace(data)) return true;
    // Every refusal names its place: "byte N: ...", or "truncated at byte
    // N" for a file that ends before its end packet says it should.
    const absl::string_view message = capture.status().message();
    return message.substr(0, 11) == "fuzz: byte " ||
           message.substr(0, 24) == "fuzz: truncated at byte ";
  }
  const std::string written = analysis::CaptureToPerfetto(*capture);
  absl::StatusOr<Capture> again = analysis::ParseTrace(written, "fuzz-again");
  if (!again.ok() ||
      analysis::TraceToJson(*again) != analysis::TraceToJson(*capture)) {
    return false;
  }
  const analysis::Summary summary = analysis::Summarize(*capture);
  if (!analysis::ParseSummary(analysis::SummaryToJson(summary), "fuzz-summary")
           .ok()) {
    return false;
  }
  analysis::FoldedStacks(*capture);
  return true;
}

// `kMergeInputSeparator` splits a merge_fuzzer input into its two traces
// (the first occurrence; a trace of either format).
inline constexpr std::string_view kMergeInputSeparator =
    "\n--spanprof-merge-input--\n";

// The merge never crashes: two traces (each read as every command reads
// one) that it accepts give a merged capture of two processes with every
// span of both, which survives a round trip through both trace formats
// (compared as the JSON trace) and whose summary reads back; what it
// refuses is an InvalidArgument error with a message.
inline bool MergeHolds(std::string_view data) {
  const size_t cut = data.find(kMergeInputSeparator);
  if (cut == std::string_view::npos) return true;
  absl::StatusOr<Capture> a = analysis::ParseTrace(data.substr(0, cut), "a");
  absl::StatusOr<Capture> b =
      analysis::ParseTrace(data.substr(cut + kMergeInputSeparator.size()), "b");
  if (!a.ok() || !b.ok()) return true;
  const size_t spans = a->spans.size() + b->spans.size();
  std::vector<analysis::MergeInput> inputs;
  inputs.push_back({"a", *std::move(a)});
  inputs.push_back({"b", *std::move(b)});
  absl::StatusOr<analysis::MergeResult> merged =
      analysis::MergeCaptures(inputs);
  if (!merged.ok()) {
    return merged.status().code() == absl::StatusCode::kInvalidArgument &&
           !merged.status().message().empty();
  }
  const Capture& capture = merged->capture;
  if (capture.processes.size() != 2 || capture.spans.size() != spans) {
    return false;
  }
  const std::string json = analysis::TraceToJson(capture);
  absl::StatusOr<Capture> from_json = analysis::ParseTrace(json, "m.json");
  if (!from_json.ok() || analysis::TraceToJson(*from_json) != json) {
    return false;
  }
  absl::StatusOr<Capture> from_pf =
      analysis::ParseTrace(analysis::CaptureToPerfetto(capture), "m.pftrace");
  if (!from_pf.ok() || analysis::TraceToJson(*from_pf) != json) return false;
  return CaptureConsumersHold(capture);
}

// The foreign Chrome trace reader never crashes; what it accepts is a
// consistent capture: every index in range, times within the window and
// never backwards; its summary reads back with the source, and reading with
// a grouping argument never changes how many spans there are.
inline bool ChromeTraceReaderHolds(std::string_view data) {
  std::vector<std::string> notes;
  absl::StatusOr<Capture> capture =
      analysis::ParseTrace(data, "fuzz", {.notes = &notes});
  if (!capture.ok()) return true;
  if (capture->source == "spanprof") return TraceReaderHolds(data);
  for (const Span& span : capture->spans) {
    if (span.site >= capture->sites.size() ||
        span.thread >= capture->threads.size() ||
        uint64_t{span.first_arg} + span.arg_count > capture->args.size() ||
        span.end_ns < span.start_ns || span.start_ns < 0 ||
        span.end_ns > capture->window_ns) {
      return false;
    }
  }
  if (!CaptureConsumersHold(*capture)) return false;
  absl::StatusOr<Capture> grouped =
      analysis::ParseTrace(data, "fuzz", {.group_by_arg = "detail"});
  return grouped.ok() && grouped->spans.size() == capture->spans.size();
}

// The compare argument parser never crashes, and a command line it accepts
// is a usable policy. The input is split into words at NUL bytes. The
// tolerance parsers, given the whole input, accept only non-negative values;
// a relative tolerance without `%` is a fraction of at most 1.
inline bool CompareArgsHold(std::string_view data) {
  for (const bool is_duration : {true, false}) {
    absl::StatusOr<int64_t> absolute =
        cli::ParseAbsoluteTolerance(data, is_duration);
    if (absolute.ok() && *absolute < 0) return false;
  }
  absl::StatusOr<int64_t> relative = cli::ParseRelativeTolerance(data);
  if (relative.ok() &&
      (*relative < 0 || (!data.ends_with("%") && *relative > 10'000))) {
    return false;
  }
  std::vector<std::string> words(1);
  for (char c : data) {
    if (c == '\0') {
      words.emplace_back();
    } else {
      words.back().push_back(c);
    }
  }
  absl::StatusOr<cli::CompareArgs> args = cli::ParseCompareArgs(words);
  if (!args.ok() || args->help) return true;
  if (args->policy.absolute_tolerance_ns < 0 ||
      args->policy.relative_tolerance_bps < 0 || args->base_path.empty() ||
      args->candidate_path.empty()) {
    return false;
  }
  // The metric's label parses back to the same metric (and counter name).
  analysis::ComparePolicy again;
  return analysis::ParseMetric(analysis::MetricLabel(args->policy), again)
             .ok() &&
         again.metric == args->policy.metric &&
         again.counter == args->policy.counter;
}

}  // namespace spanprof::fuzzing

#endif  // SPANPROF_TESTS_FUZZ_FUZZ_PROPERTIES_H_
