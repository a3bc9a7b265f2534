// MergeCaptures(): captures of several processes on one timeline
// (spanprof/analysis/merge.h; docs/formats.md, "Merged traces").
//
// The steps: check the inputs (anchors, not merged already, no duplicates,
// anchors within a day), order them by anchor, append each one's threads,
// sites, spans and arguments with its time and id offsets, resolve the
// remote parents across processes, shift the depths of the linked
// processes, and check the links against the anchors (a child that starts
// before its parent span means the clocks disagree).
#include "spanprof/analysis/merge.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "model/capture_format.h"
#include "model/span_args.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {
namespace {

int64_t SatAdd(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result)) {
    return b < 0 ? INT64_MIN : INT64_MAX;
  }
  return result;
}

uint64_t SatAddUnsigned(uint64_t a, uint64_t b) {
  uint64_t result;
  return __builtin_add_overflow(a, b, &result) ? UINT64_MAX : result;
}

// "1.250 ms"-style text for messages: µs with three decimals.
std::string Micros(int64_t ns) { return absl::StrCat(FormatMicros(ns), " µs"); }

// A 64-bit id as the traces write it: 16 lowercase hex digits.
std::string HexId(uint64_t id) {
  return absl::StrCat(absl::Hex(id, absl::kZeroPad16));
}

std::string Quoted(const std::string& name) {
  return absl::StrCat("'", name, "'");
}

// Refuses what cannot be put on one timeline, each error naming its input.
absl::Status CheckInputs(const std::vector<MergeInput>& inputs) {
  if (inputs.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "merge needs at least two captures (got ", inputs.size(), ")"));
  }
  for (const MergeInput& in : inputs) {
    const Capture& c = in.capture;
    if (!c.processes.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          in.name, ": already a merged capture (", c.processes.size(),
          " processes); merge the processes' own captures instead"));
    }
    if (c.source != internal::kSourceSpanprof) {
      return absl::InvalidArgumentError(absl::StrCat(
          in.name, ": a foreign trace (source \"", c.source,
          "\") has no wall-clock anchor to align it with; merge captures "
          "recorded by spanprof"));
    }
    if (c.wall_clock_anchor_ns == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          in.name,
          ": the capture has no wall-clock anchor (a trace written before "
          "spanprof recorded anchors), so it cannot be put on a timeline "
          "with others; record it again"));
    }
  }
  for (size_t a = 0; a < inputs.size(); ++a) {
    for (size_t b = a + 1; b < inputs.size(); ++b) {
      const Capture& x = inputs[a].capture;
      const Capture& y = inputs[b].capture;
      const bool same_session =
          x.pid == y.pid && x.host == y.host &&
          x.wall_clock_anchor_ns == y.wall_clock_anchor_ns;
      const bool same_seed =
          x.span_id_seed != 0 && x.span_id_seed == y.span_id_seed;
      if (same_session || same_seed) {
        return absl::InvalidArgumentError(absl::StrCat(
            inputs[a].name, " and ", inputs[b].name, " are the same capture (",
            same_session ? absl::StrCat("pid ", x.pid, ", host \"", x.host,
                                        "\", anchor ", x.wall_clock_anchor_ns)
                         : absl::StrCat("span id seed ", HexId(x.span_id_seed)),
            "); give each capture once"));
      }
    }
  }
  return absl::OkStatus();
}

// The input indexes by anchor, earliest first (ties in input order).
std::vector<size_t> AnchorOrder(const std::vector<MergeInput>& inputs) {
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return inputs[a].capture.wall_clock_anchor_ns <
           inputs[b].capture.wall_clock_anchor_ns;
  });
  return order;
}

// Builds the merged capture, one input at a time.
class Merger {
 public:
  Merger(const std::vector<MergeInput>& inputs, std::vector<size_t> order)
      : inputs_(inputs), order_(std::move(order)) {}

  absl::StatusOr<MergeResult> Run() {
    const Capture& first = inputs_[order_.front()].capture;
    const Capture& last = inputs_[order_.back()].capture;
    if (last.wall_clock_anchor_ns - first.wall_clock_anchor_ns >
            kMergeMaxAnchorGapNs ||
        last.wall_clock_anchor_ns < first.wall_clock_anchor_ns) {
      return absl::InvalidArgumentError(absl::StrCat(
          inputs_[order_.back()].name, " starts more than a day after ",
          inputs_[order_.front()].name,
          " (by their wall-clock anchors): not captures of one run, or an "
          "anchor is wrong"));
    }
    SetTopLevel(first);
    for (uint32_t k = 0; k < order_.size(); ++k) {
      if (absl::Status s = Append(k, inputs_[order_[k]].capture); !s.ok()) {
        return s;
      }
    }
    SortSpans();
    IndexSpans();
    LinkProcesses();
    CheckTraceIds();
    CheckPids();
    result_.capture = std::move(out_);
    return std::move(result_);
  }

 private:
  const std::string& NameOf(uint32_t process) const {
    return inputs_[order_[process]].name;
  }

  void SetTopLevel(const Capture& first) {
    out_.source = first.source;
    out_.spanprof_version = first.spanprof_version;
    out_.process_name = first.process_name;
    out_.pid = first.pid;
    out_.clock = first.clock;
    out_.host = first.host;
    out_.trace_id = first.trace_id;
    out_.wall_clock_anchor_ns = first.wall_clock_anchor_ns;
    out_.overflow_policy = "drop";
    out_.alloc_measured = true;
  }

  uint32_t SiteIndex(const Site& site) {
    SiteKey key{site.name};
    for (size_t i = 0; i < kTagFields.size(); ++i) {
      key[i + 1] = site.*kTagFields[i].site;
    }
    auto [it, inserted] = site_index_.try_emplace(
        std::move(key), static_cast<uint32_t>(out_.sites.size()));
    if (inserted) out_.sites.push_back(site);
    return it->second;
  }

  // The capture-wide fields that add up (drops, cap, resources).
  void AddTotals(const Capture& c) {
    out_.wall_clock_uncertainty_ns =
        std::max(out_.wall_clock_uncertainty_ns, c.wall_clock_uncertainty_ns);
    result_.anchor_uncertainty_ns = out_.wall_clock_uncertainty_ns;
    out_.event_limit = SatAddUnsigned(out_.event_limit, c.event_limit);
    if (c.overflow_policy == "ring") out_.overflow_policy = "ring";
    out_.dropped_events = SatAddUnsigned(out_.dropped_events, c.dropped_events);
    out_.dropped_args = SatAddUnsigned(out_.dropped_args, c.dropped_args);
    out_.failed_prepares =
        SatAddUnsigned(out_.failed_prepares, c.failed_prepares);
    out_.finished_normally = out_.finished_normally && c.finished_normally;
    out_.overhead_ns_per_span =
        std::max(out_.overhead_ns_per_span, c.overhead_ns_per_span);
    out_.alloc_measured = out_.alloc_measured && c.alloc_measured;
    ProcessResources& r = out_.process_resources;
    const ProcessResources& x = c.process_resources;
    r.user_cpu_ns = SatAdd(r.user_cpu_ns, x.user_cpu_ns);
    r.system_cpu_ns = SatAdd(r.system_cpu_ns, x.system_cpu_ns);
    r.peak_rss_kib = std::max(r.peak_rss_kib, x.peak_rss_kib);
    r.minor_page_faults = SatAdd(r.minor_page_faults, x.minor_page_faults);
    r.major_page_faults = SatAdd(r.major_page_faults, x.major_page_faults);
    r.voluntary_context_switches =
        SatAdd(r.voluntary_context_switches, x.voluntary_context_switches);
    r.involuntary_context_switches =
        SatAdd(r.involuntary_context_switches, x.involuntary_context_switches);
    out_.import_issues.insert(out_.import_issues.end(), c.import_issues.begin(),
                              c.import_issues.end());
  }

  absl::Status Append(uint32_t k, const Capture& c) {
    ProcessInfo& p = out_.processes.emplace_back();
    p.pid = c.pid;
    p.process_name = c.process_name;
    p.host = c.host;
    p.clock = c.clock;
    p.trace_id = c.trace_id;
    p.wall_clock_anchor_ns = c.wall_clock_anchor_ns;
    p.wall_clock_uncertainty_ns = c.wall_clock_uncertainty_ns;
    p.time_offset_ns = c.wall_clock_anchor_ns - out_.wall_clock_anchor_ns;
    p.window_ns = c.window_ns;
    p.remote_parent_span_id = c.remote_parent_span_id;
    p.span_id_seed = c.span_id_seed;
    p.span_id_offset = next_id_offset_;
    uint64_t max_id = 0;
    for (const Span& span : c.spans) max_id = std::max(max_id, span.id);
    if (max_id > static_cast<uint64_t>(INT64_MAX) - p.span_id_offset) {
      return absl::InvalidArgumentError(
          absl::StrCat(NameOf(k), ": span ids too large to renumber"));
    }
    next_id_offset_ = p.span_id_offset + max_id;
    for (const ExportedSpanId& e : c.exported_span_ids) {
      p.exported_span_ids.push_back(
          ExportedSpanId{e.span + p.span_id_offset, e.external_id});
    }
    out_.window_ns =
        std::max(out_.window_ns, SatAdd(p.time_offset_ns, c.window_ns));
    AddTotals(c);

    const auto thread_base = static_cast<uint32_t>(out_.threads.size());
    for (const ThreadInfo& thread : c.threads) {
      ThreadInfo& t = out_.threads.emplace_back(thread);
      t.process = k;
    }
    std::vector<uint32_t> sites(c.sites.size());
    for (size_t s = 0; s < c.sites.size(); ++s)
      sites[s] = SiteIndex(c.sites[s]);
    for (const SiteDrops& drops : c.dropped_by_site) {
      if (drops.site >= sites.size()) continue;  // no site to name it by
      uint64_t& count = drops_[sites[drops.site]];
      count = SatAddUnsigned(count, drops.count);
    }
    for (ArgDrop drop : c.arg_drops) {
      if (drop.site.has_value()) {
        drop.site = *drop.site < sites.size()
                        ? std::optional<uint32_t>(sites[*drop.site])
                        : std::nullopt;
      }
      out_.arg_drops.push_back(std::move(drop));
    }
    for (size_t i = 0; i < c.spans.size(); ++i) {
      const Span& span = c.spans[i];
      Span s = span;
      s.id += p.span_id_offset;
      if (s.parent_id != 0) s.parent_id += p.span_id_offset;
      s.site = span.site < sites.size() ? sites[span.site] : UINT32_MAX;
      s.thread = span.thread < c.threads.size() ? thread_base + span.thread
                                                : UINT32_MAX;
      s.start_ns = SatAdd(span.start_ns, p.time_offset_ns);
      s.end_ns = SatAdd(span.end_ns, p.time_offset_ns);
      s.first_arg = 0;
      s.arg_count = 0;
      spans_.push_back(s);
      span_allocs_.push_back(AllocsOf(c, i));
      span_process_.push_back(k);
    }
    AddSpanArgs(c);
    return absl::OkStatus();
  }

  // Each of `c`'s spans' arguments, in span_args_. A packed capture's
  // ArgsOf() is valid only until its next call: its spans' arguments are
  // copied into storage kept until the merge ends, and viewed once all are
  // in (the storage no longer moves).
  void AddSpanArgs(const Capture& c) {
    if (c.packed_args == nullptr) {
      for (const Span& span : c.spans) {
        span_args_.push_back(internal::ArgsOf(c, span));
      }
      return;
    }
    std::vector<SpanArg>& unpacked = unpacked_args_.emplace_back();
    std::vector<std::pair<size_t, size_t>> ranges;
    ranges.reserve(c.spans.size());
    for (const Span& span : c.spans) {
      const std::span<const SpanArg> args = internal::ArgsOf(c, span);
      ranges.emplace_back(unpacked.size(), args.size());
      unpacked.insert(unpacked.end(), args.begin(), args.end());
    }
    for (const auto& [first, count] : ranges) {
      span_args_.emplace_back(unpacked.data() + first, count);
    }
  }

  // The reader's order, (thread, start, depth, id), and each span's
  // arguments laid out in it, so the merged capture is what its trace reads
  // back into. Allocation deltas are cleared unless every input measured
  // them (known only once every input is in).
  void SortSpans() {
    std::vector<size_t> order(spans_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const Span& x = spans_[a];
      const Span& y = spans_[b];
      return std::tie(x.thread, x.start_ns, x.depth, x.id) <
             std::tie(y.thread, y.start_ns, y.depth, y.id);
    });
    out_.spans.reserve(spans_.size());
    if (out_.alloc_measured) out_.span_allocs.reserve(spans_.size());
    std::vector<uint32_t> process;
    process.reserve(spans_.size());
    for (size_t i : order) {
      Span& s = out_.spans.emplace_back(spans_[i]);
      if (out_.alloc_measured) out_.span_allocs.push_back(span_allocs_[i]);
      process.push_back(span_process_[i]);
      const std::span<const SpanArg> args = span_args_[i];
      if (!args.empty() && out_.args.size() + args.size() <= UINT32_MAX) {
        s.first_arg = static_cast<uint32_t>(out_.args.size());
        s.arg_count = static_cast<uint16_t>(args.size());
        out_.args.insert(out_.args.end(), args.begin(), args.end());
      }
    }
    span_process_ = std::move(process);
    spans_.clear();
    span_args_.clear();
    unpacked_args_ = {};
    span_allocs_ = {};
    for (const auto& [site, count] : drops_) {
      out_.dropped_by_site.push_back(SiteDrops{site, count});
    }
  }

  // Span id → index, and every external id (exported aliases first, then
  // the derived ones) → index, for the remote parents.
  void IndexSpans() {
    bool any_remote = false;
    for (const ProcessInfo& p : out_.processes) {
      any_remote |= p.remote_parent_span_id != 0;
    }
    if (!any_remote) return;
    absl::flat_hash_map<uint64_t, uint32_t> by_id;
    by_id.reserve(out_.spans.size());
    for (uint32_t i = 0; i < out_.spans.size(); ++i) {
      by_id.try_emplace(out_.spans[i].id, i);
    }
    external_.reserve(out_.spans.size());
    for (const ProcessInfo& p : out_.processes) {
      for (const ExportedSpanId& e : p.exported_span_ids) {
        auto it = by_id.find(e.span);
        if (it != by_id.end()) external_.try_emplace(e.external_id, it->second);
      }
    }
    for (uint32_t i = 0; i < out_.spans.size(); ++i) {
      const ProcessInfo& p = out_.processes[span_process_[i]];
      external_.try_emplace(
          DerivedSpanId(p.span_id_seed, out_.spans[i].id - p.span_id_offset),
          i);
    }
  }

  // Each process's parent span in another process (as a span index), or
  // nothing; a link that would close a loop of processes is refused with a
  // warning.
  std::vector<std::optional<uint32_t>> ResolveParents() {
    const size_t n = out_.processes.size();
    std::vector<std::optional<uint32_t>> parent(n);
    for (uint32_t k = 0; k < n; ++k) {
      const uint64_t remote = out_.processes[k].remote_parent_span_id;
      if (remote == 0) continue;
      auto it = external_.find(remote);
      if (it == external_.end() || span_process_[it->second] == k) {
        result_.notes.push_back(absl::StrCat(
            NameOf(k), ": its remote parent span ", HexId(remote),
            " is in none of the captures (the parent process's capture is "
            "missing); its root spans stay roots"));
        continue;
      }
      // Follow the parents already linked: reaching k would close a loop.
      uint32_t j = span_process_[it->second];
      bool loop = false;
      for (size_t steps = 0; steps <= n; ++steps) {
        if (j == k) {
          loop = true;
          break;
        }
        if (!parent[j].has_value()) break;
        j = span_process_[*parent[j]];
      }
      if (loop) {
        result_.warnings.push_back(absl::StrCat(
            NameOf(k), ": its remote parent span ", HexId(remote),
            " would make its processes each other's parents; not linked"));
        continue;
      }
      parent[k] = it->second;
    }
    return parent;
  }

  // Roots of a linked process become children of its parent span; every
  // depth of the process grows by that span's depth + 1 (parents first).
  void LinkProcesses() {
    if (external_.empty()) return;
    const std::vector<std::optional<uint32_t>> parent = ResolveParents();
    const size_t n = out_.processes.size();
    std::vector<uint32_t> level(n, 0);  // process tree depth, for the order
    for (uint32_t k = 0; k < n; ++k) {
      for (uint32_t j = k; parent[j].has_value() && level[k] <= n;) {
        ++level[k];
        j = span_process_[*parent[j]];
      }
    }
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return level[a] < level[b];
    });
    for (uint32_t k : order) {
      if (!parent[k].has_value()) continue;
      const Span parent_span = out_.spans[*parent[k]];
      const uint32_t shift =
          parent_span.depth == UINT32_MAX ? UINT32_MAX : parent_span.depth + 1;
      int64_t first_start = INT64_MAX;
      for (size_t i = 0; i < out_.spans.size(); ++i) {
        if (span_process_[i] != k) continue;
        Span& s = out_.spans[i];
        if (s.parent_id == 0) {
          s.parent_id = parent_span.id;
          first_start = std::min(first_start, s.start_ns);
          ++result_.linked_roots;
        }
        s.depth = s.depth > UINT32_MAX - shift ? UINT32_MAX : s.depth + shift;
      }
      CheckSkew(k, span_process_[*parent[k]], parent_span, first_start);
    }
  }

  // A child process cannot start before the span that started it: when it
  // seems to by more than the anchors' uncertainties allow, they disagree.
  void CheckSkew(uint32_t child, uint32_t parent, const Span& parent_span,
                 int64_t child_start) {
    if (child_start == INT64_MAX) return;
    const int64_t early = parent_span.start_ns - child_start;
    const int64_t allowed =
        SatAdd(SatAdd(out_.processes[child].wall_clock_uncertainty_ns,
                      out_.processes[parent].wall_clock_uncertainty_ns),
               kMergeSkewToleranceNs);
    if (early <= allowed) return;
    const std::string& span_name = parent_span.site < out_.sites.size()
                                       ? out_.sites[parent_span.site].name
                                       : std::string("(invalid site)");
    result_.warnings.push_back(absl::StrCat(
        NameOf(child), " starts ", Micros(early), " before its parent span ",
        Quoted(span_name), " of ", NameOf(parent),
        " on the merged timeline (more than the anchors' uncertainties): "
        "their wall-clock anchors disagree (a clock jump, or clocks of two "
        "hosts out of sync); times across these processes are off by about "
        "that much"));
  }

  void CheckTraceIds() {
    std::vector<std::string> seen;
    std::string listing;
    for (uint32_t k = 0; k < out_.processes.size(); ++k) {
      const std::string& id = out_.processes[k].trace_id;
      if (id.empty()) continue;
      if (std::find(seen.begin(), seen.end(), id) == seen.end()) {
        seen.push_back(id);
      }
      absl::StrAppend(&listing, listing.empty() ? "" : ", ", NameOf(k), " ",
                      id);
    }
    if (seen.size() > 1) {
      result_.warnings.push_back(absl::StrCat(
          "the captures belong to ", seen.size(), " different traces (",
          listing, "); merged anyway, with the trace id of the first"));
    }
  }

  void CheckPids() {
    std::map<int64_t, uint32_t> first;
    for (uint32_t k = 0; k < out_.processes.size(); ++k) {
      auto [it, inserted] = first.try_emplace(out_.processes[k].pid, k);
      if (inserted) continue;
      result_.warnings.push_back(
          absl::StrCat(NameOf(it->second), " and ", NameOf(k),
                       " have the same pid ", out_.processes[k].pid,
                       " (two hosts?): a viewer may show them as one process"));
    }
  }

  const std::vector<MergeInput>& inputs_;
  const std::vector<size_t> order_;
  Capture out_;
  MergeResult result_;
  uint64_t next_id_offset_ = 0;
  // A site's name and tags: sites equal in all of them are shared.
  using SiteKey = std::array<std::string, 1 + kTagFields.size()>;
  std::map<SiteKey, uint32_t> site_index_;
  std::map<uint32_t, uint64_t> drops_;  // merged site → dropped spans
  // Spans as appended, their process, and their arguments' place in their
  // input, until SortSpans(); then span_process_ follows out_.spans.
  std::vector<Span> spans_;
  std::vector<SpanAllocs> span_allocs_;
  std::vector<uint32_t> span_process_;
  // Each span's arguments, in its input's capture (which outlives them), or
  // in unpacked_args_ for a packed one (each vector's storage stays put when
  // the outer one grows).
  std::vector<std::span<const SpanArg>> span_args_;
  std::vector<std::vector<SpanArg>> unpacked_args_;
  absl::flat_hash_map<uint64_t, uint32_t> external_;
};

}  // namespace

absl::StatusOr<MergeResult> MergeCaptures(
    const std::vector<MergeInput>& inputs) {
  if (absl::Status s = CheckInputs(inputs); !s.ok()) return s;
  return Merger(inputs, AnchorOrder(inputs)).Run();
}

}  // namespace spanprof::analysis
