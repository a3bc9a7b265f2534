// `PlotTimeline()` (plot.h): a capture's spans on a time axis, a lane per
// thread, a row per same-thread depth, arrows to cross-thread children.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/svg.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {
namespace {

using svg::Centi;
using svg::Document;
using svg::Escape;
using svg::kMargin;
using svg::N;
using svg::Px;
using svg::SaturatingAdd;
using svg::TextWidth;
using svg::V;

struct Colour {
  std::string_view fill;
  bool dark;  // white text reads better on it
};

// Tableau 10 without its grey (kept for spans without a phase), then three
// lighter companions: distinct for up to 12 phases.
constexpr std::array<Colour, 12> kPalette = {{
    {"#4e79a7", true},
    {"#f28e2b", false},
    {"#e15759", true},
    {"#76b7b2", false},
    {"#59a14f", true},
    {"#edc948", false},
    {"#b07aa1", true},
    {"#ff9da7", false},
    {"#9c755f", true},
    {"#a0cbe8", false},
    {"#ffbe7d", false},
    {"#8cd17d", false},
}};
constexpr Colour kNoPhaseColour = {"#bab0ac", false};

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 14695981039346656037ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

// Each phase's palette slot: its hash picks a preferred slot, and phases
// (in sorted order) take the first free slot from there. So a phase keeps
// its colour from figure to figure unless it collides, and the phases of one
// figure differ while there are at most 12.
std::vector<std::pair<std::string, size_t>> AssignColours(
    std::vector<std::string> phases) {
  std::sort(phases.begin(), phases.end());
  phases.erase(std::unique(phases.begin(), phases.end()), phases.end());
  std::array<bool, kPalette.size()> used = {};
  std::vector<std::pair<std::string, size_t>> out;
  for (std::string& phase : phases) {
    const size_t preferred = Fnv1a(phase) % kPalette.size();
    size_t slot = preferred;
    for (size_t k = 0; k < kPalette.size(); ++k) {
      const size_t candidate = (preferred + k) % kPalette.size();
      if (!used[candidate]) {
        slot = candidate;
        break;
      }
    }
    used[slot] = true;
    out.emplace_back(std::move(phase), slot);
  }
  return out;
}

constexpr Centi kRowHeight = Px(18);
constexpr Centi kRowPitch = Px(20);
constexpr Centi kLanePadding = Px(6);

struct TimelineSpan {
  uint32_t index = 0;  // into capture.spans
  int64_t start = 0;   // clipped to the window
  int64_t end = 0;
  uint32_t row = 0;  // depth among same-thread ancestors
};

// Row within the lane: the number of same-thread ancestors. The forest has
// no cycles (it cuts them), so a walk down from the roots reaches every span
// once.
std::vector<uint32_t> SameThreadRows(const std::vector<Span>& spans,
                                     const Forest& forest) {
  std::vector<uint32_t> row(spans.size(), 0);
  std::vector<uint32_t> stack(forest.roots().begin(), forest.roots().end());
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    for (uint32_t child : forest.children(i)) {
      row[child] = spans[child].thread == spans[i].thread ? row[i] + 1 : 0;
      stack.push_back(child);
    }
  }
  return row;
}

// The phases' colours, and which marks the legend must explain.
struct Marks {
  std::vector<std::pair<std::string, size_t>> colours;  // phase → slot
  bool without_phase = false;
  bool exception = false;
  bool unfinished = false;
  bool cross_thread = false;
};

// One timeline figure, computed step by step: which spans and lanes are
// drawn, then where, then the drawing.
class Timeline {
 public:
  Timeline(const Capture& capture, const TimelineOptions& options)
      : capture_(capture),
        spans_(capture.spans),
        options_(options),
        forest_(capture),
        row_(SameThreadRows(spans_, forest_)),
        doc_(std::clamp(options.width, kMinPlotWidth, kMaxPlotWidth)) {}

  std::string Render() {
    SetWindow();
    SelectSpans();
    SelectLanes();
    CollectMarks();
    const std::string process =
        capture_.process_name.empty() ? "spanprof" : capture_.process_name;
    const std::string title = absl::StrCat(process, " \xE2\x80\x94 timeline");
    Centi y = svg::DrawHeading(doc_, title, Subtitle());
    y = DrawLegend(y + Px(6)) + Px(6);
    LayOut(y);
    DrawLanes();
    const Centi below_axis = svg::DrawAxis(
        doc_, x0_, x1_, std::max(lanes_bottom_, lanes_top_) + Px(4), lanes_top_,
        lo_, hi_, svg::ValueKind::kDuration, "time since session start");
    PlaceSpans();
    DrawLinks();
    for (const TimelineSpan& v : visible_) DrawSpan(v);

    constexpr std::string_view kArrowDefs =
        "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
        "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\" "
        "markerUnits=\"userSpaceOnUse\"><path d=\"M0 0 L10 5 L0 10 z\" "
        "fill=\"#444444\"/></marker>";
    return doc_.Finish(below_axis + Px(8), Escape(title), kArrowDefs);
  }

 private:
  static constexpr uint32_t kNone = Forest::kNone;

  const Site* SiteOf(const Span& span) const {
    return span.site < capture_.sites.size() ? &capture_.sites[span.site]
                                             : nullptr;
  }

  // The parent drawn on another thread than span `i`, or `kNone`.
  uint32_t DrawnCrossThreadParent(uint32_t i) const {
    const uint32_t p = forest_.parent(i);
    if (p == kNone || spans_[p].thread == spans_[i].thread || !drawn_[p]) {
      return kNone;
    }
    return p;
  }

  // The window shown: the options' bounds, else from 0 (or the earliest
  // start) to the end of the session (or of the last span).
  void SetWindow() {
    int64_t last_end = capture_.window_ns;
    int64_t first_start = 0;
    for (const Span& span : spans_) {
      last_end = std::max(last_end, std::max(span.end_ns, span.start_ns));
      first_start = std::min(first_start, span.start_ns);
    }
    lo_ = options_.start_ns.value_or(first_start);
    hi_ = options_.end_ns.value_or(last_end);
    if (hi_ <= lo_) hi_ = SaturatingAdd(lo_, 1);
  }

  // Spans inside the window on a known thread, clipped to it; the longest
  // `max_spans` of them (ties by span order).
  void SelectSpans() {
    for (size_t i = 0; i < spans_.size(); ++i) {
      const Span& span = spans_[i];
      if (span.thread >= capture_.threads.size()) continue;
      const int64_t end = std::max(span.end_ns, span.start_ns);
      if (end < lo_ || span.start_ns > hi_) continue;
      visible_.push_back({static_cast<uint32_t>(i),
                          std::max(span.start_ns, lo_), std::min(end, hi_),
                          row_[i]});
    }
    in_window_ = visible_.size();
    if (visible_.size() > options_.max_spans) {
      const auto longer = [&](const TimelineSpan& a, const TimelineSpan& b) {
        const int64_t da = a.end - a.start;
        const int64_t db = b.end - b.start;
        if (da != db) return da > db;
        return a.index < b.index;
      };
      std::nth_element(
          visible_.begin(),
          visible_.begin() + static_cast<std::ptrdiff_t>(options_.max_spans),
          visible_.end(), longer);
      visible_.resize(options_.max_spans);
    }
    drawn_before_lane_limit_ = visible_.size();
  }

  // Lanes: threads with a visible span, by (sort_index, capture order), at
  // most `max_threads` of them; each lane's rows; the spans in drawing order.
  void SelectLanes() {
    std::vector<bool> has(capture_.threads.size(), false);
    for (const TimelineSpan& v : visible_) has[spans_[v.index].thread] = true;
    for (uint32_t t = 0; t < capture_.threads.size(); ++t) {
      if (has[t]) lane_threads_.push_back(t);
    }
    std::stable_sort(lane_threads_.begin(), lane_threads_.end(),
                     [&](uint32_t a, uint32_t b) {
                       return capture_.threads[a].sort_index <
                              capture_.threads[b].sort_index;
                     });
    threads_with_spans_ = lane_threads_.size();
    KeepBusiestLanes();
    lane_of_.assign(capture_.threads.size(), 0);
    for (uint32_t l = 0; l < lane_threads_.size(); ++l) {
      lane_of_[lane_threads_[l]] = l;
    }
    lane_rows_.assign(lane_threads_.size(), 1);
    for (const TimelineSpan& v : visible_) {
      uint32_t& rows = lane_rows_[lane_of_[spans_[v.index].thread]];
      rows = std::max(rows, v.row + 1);
    }
    std::sort(visible_.begin(), visible_.end(),
              [&](const TimelineSpan& a, const TimelineSpan& b) {
                const uint32_t la = lane_of_[spans_[a.index].thread];
                const uint32_t lb = lane_of_[spans_[b.index].thread];
                if (la != lb) return la < lb;
                if (a.row != b.row) return a.row < b.row;
                if (a.start != b.start) return a.start < b.start;
                return a.index < b.index;
              });
  }

  // Too many lanes (thousands of short-lived threads): keep the busiest, by
  // the time their drawn root-row spans cover, ties by lane order.
  void KeepBusiestLanes() {
    const size_t max_threads = std::max<size_t>(options_.max_threads, 1);
    if (lane_threads_.size() <= max_threads) return;
    std::vector<int64_t> busy(capture_.threads.size(), 0);
    for (const TimelineSpan& v : visible_) {
      if (v.row == 0) {
        int64_t& total = busy[spans_[v.index].thread];
        total = SaturatingAdd(total, v.end - v.start);
      }
    }
    std::vector<uint32_t> by_busy = lane_threads_;
    std::stable_sort(by_busy.begin(), by_busy.end(),
                     [&](uint32_t a, uint32_t b) { return busy[a] > busy[b]; });
    std::vector<bool> keep(capture_.threads.size(), false);
    for (size_t k = 0; k < max_threads; ++k) keep[by_busy[k]] = true;
    std::erase_if(lane_threads_, [&](uint32_t t) { return !keep[t]; });
    std::erase_if(visible_, [&](const TimelineSpan& v) {
      return !keep[spans_[v.index].thread];
    });
  }

  void CollectMarks() {
    std::vector<std::string> phases;
    drawn_.assign(spans_.size(), false);
    for (const TimelineSpan& v : visible_) drawn_[v.index] = true;
    for (const TimelineSpan& v : visible_) {
      const Span& span = spans_[v.index];
      const Site* site = SiteOf(span);
      if (site == nullptr || site->phase.empty()) {
        marks_.without_phase = true;
      } else {
        phases.push_back(site->phase);
      }
      marks_.exception |= (span.flags & kSpanException) != 0;
      marks_.unfinished |= (span.flags & kSpanUnfinished) != 0;
      marks_.cross_thread |= DrawnCrossThreadParent(v.index) != kNone;
    }
    marks_.colours = AssignColours(std::move(phases));
  }

  const Colour& ColourOf(const Site* site) const {
    if (site == nullptr || site->phase.empty()) return kNoPhaseColour;
    auto it = std::lower_bound(marks_.colours.begin(), marks_.colours.end(),
                               site->phase,
                               [](const auto& entry, const std::string& key) {
                                 return entry.first < key;
                               });
    return kPalette[it->second];
  }

  std::string Subtitle() const {
    std::string subtitle = absl::StrCat(
        spans_.size(), spans_.size() == 1 ? " span on " : " spans on ",
        capture_.threads.size(),
        capture_.threads.size() == 1 ? " thread" : " threads", ", window ",
        FormatDuration(capture_.window_ns));
    if (!capture_.clock.empty())
      absl::StrAppend(&subtitle, ", ", capture_.clock, " clock");
    if (options_.start_ns.has_value() || options_.end_ns.has_value()) {
      absl::StrAppend(&subtitle, "; showing ", FormatDuration(lo_), " to ",
                      FormatDuration(hi_));
    }
    if (drawn_before_lane_limit_ < in_window_) {
      absl::StrAppend(&subtitle, "; the ", drawn_before_lane_limit_,
                      " longest of ", in_window_, " spans drawn");
    }
    if (lane_threads_.size() < threads_with_spans_) {
      absl::StrAppend(&subtitle, "; the ", lane_threads_.size(), " busiest of ",
                      threads_with_spans_, " threads drawn (",
                      drawn_before_lane_limit_ - visible_.size(),
                      " spans left out)");
    }
    if (capture_.dropped_events > 0) {
      absl::StrAppend(&subtitle, "; ", capture_.dropped_events,
                      " dropped by the cap");
    }
    return subtitle;
  }

  // The phases, then the marks in use. Returns the y below the legend.
  Centi DrawLegend(Centi y) {
    std::vector<std::string> legend;
    std::vector<std::string> swatch;
    for (const auto& [phase, slot] : marks_.colours) {
      legend.push_back(phase);
      swatch.push_back(absl::StrCat("fill=\"", V(kPalette[slot].fill), "\""));
    }
    if (marks_.without_phase) {
      legend.push_back("(no phase)");
      swatch.push_back(absl::StrCat("fill=\"", V(kNoPhaseColour.fill), "\""));
    }
    if (marks_.exception) {
      legend.push_back("left by an exception");
      swatch.push_back(
          "fill=\"#ffffff\" stroke=\"#d62728\" stroke-width=\"2\"");
    }
    if (marks_.unfinished) {
      legend.push_back("unfinished at stop");
      swatch.push_back(
          "fill=\"#ffffff\" stroke=\"#333333\" stroke-width=\"1.5\" "
          "stroke-dasharray=\"3 2\"");
    }
    const size_t arrow_item = legend.size();
    if (marks_.cross_thread) {
      legend.push_back("parent on another thread");
      swatch.emplace_back();
    }
    return svg::DrawLegend(doc_, y, legend, [&](size_t i, Centi x, Centi top) {
      if (i == arrow_item) {
        absl::StrAppend(&doc_.body(), "<path d=\"M", N(x), " ", N(top + Px(1)),
                        " C", N(x + Px(8)), " ", N(top + Px(1)), " ",
                        N(x + Px(4)), " ", N(top + Px(11)), " ", N(x + Px(11)),
                        " ", N(top + Px(11)),
                        "\" fill=\"none\" stroke=\"#444444\" "
                        "stroke-width=\"1.2\" marker-end=\"url(#arrow)\"/>\n");
        return;
      }
      doc_.Rect(x, top, Px(12), Px(12), absl::StrCat("rx=\"2\" ", swatch[i]));
    });
  }

  Centi LaneHeight(size_t lane) const {
    return 2 * kLanePadding + static_cast<Centi>(lane_rows_[lane]) * kRowPitch;
  }

  // The label column as wide as the widest thread label (within limits),
  // the plot area after it, and the lanes from `y` down.
  void LayOut(Centi y) {
    Centi label_width = Px(90);
    for (uint32_t t : lane_threads_) {
      label_width = std::max(
          label_width,
          TextWidth(ThreadLabel(capture_.threads[t]), 12, true) + Px(16));
    }
    label_width_ = std::min(label_width, Px(220));
    x0_ = kMargin + label_width_;
    x1_ = doc_.width() - kMargin;
    lanes_top_ = y;
    lane_top_.assign(lane_threads_.size(), 0);
    for (size_t l = 0; l < lane_threads_.size(); ++l) {
      lane_top_[l] = y;
      y += LaneHeight(l);
    }
    if (lane_threads_.empty()) {
      doc_.Text(x0_, y + Px(20), "note", Escape("no spans in this window"));
      y += Px(32);
    }
    lanes_bottom_ = y;
  }

  // Lane backgrounds and labels (under the axis grid, which lies under the
  // spans).
  void DrawLanes() {
    for (size_t l = 0; l < lane_threads_.size(); ++l) {
      doc_.Rect(kMargin, lane_top_[l], doc_.width() - 2 * kMargin,
                LaneHeight(l),
                l % 2 == 0 ? "fill=\"#f4f5f7\"" : "fill=\"#fbfbfc\"");
      const ThreadInfo& thread = capture_.threads[lane_threads_[l]];
      doc_.Text(kMargin + Px(6), lane_top_[l] + kLanePadding + Px(13), "lane",
                svg::FitTextAlways(ThreadLabel(thread), label_width_ - Px(12),
                                   12, true));
      if (!thread.name.empty() && lane_rows_[l] >= 2) {
        doc_.Text(kMargin + Px(6), lane_top_[l] + kLanePadding + Px(27), "tid",
                  Escape(absl::StrCat("tid ", thread.os_tid)));
      }
    }
  }

  Centi RowTop(uint32_t lane, uint32_t r) const {
    return lane_top_[lane] + kLanePadding + static_cast<Centi>(r) * kRowPitch;
  }

  Centi XOf(int64_t t) const {
    return x0_ + svg::Scale(t, lo_, hi_, x1_ - x0_);
  }

  void PlaceSpans() {
    span_x_.assign(spans_.size(), 0);
    span_w_.assign(spans_.size(), 0);
    for (const TimelineSpan& v : visible_) {
      span_x_[v.index] = XOf(v.start);
      span_w_[v.index] = std::max<Centi>(XOf(v.end) - span_x_[v.index], Px(1));
    }
  }

  // Cross-thread parent links: from the parent's row at the child's start
  // to the child's left edge, drawn first so that spans cover where they
  // cross other lanes.
  void DrawLinks() {
    for (const TimelineSpan& v : visible_) {
      const uint32_t p = DrawnCrossThreadParent(v.index);
      if (p == kNone) continue;
      const uint32_t child_lane = lane_of_[spans_[v.index].thread];
      const uint32_t parent_lane = lane_of_[spans_[p].thread];
      const Centi child_x = span_x_[v.index];
      const Centi from_x =
          std::clamp(child_x, span_x_[p], span_x_[p] + span_w_[p]);
      const Centi parent_top = RowTop(parent_lane, row_[p]);
      const bool down = parent_lane < child_lane;
      const Centi from_y = down ? parent_top + kRowHeight : parent_top;
      const Centi child_top = RowTop(child_lane, v.row);
      const Centi to_y = down ? child_top : child_top + kRowHeight;
      const Centi mid_y = (from_y + to_y) / 2;
      absl::StrAppend(
          &doc_.body(), "<path d=\"M", N(from_x), " ", N(from_y), " C",
          N(from_x), " ", N(mid_y), " ", N(child_x), " ", N(mid_y), " ",
          N(child_x), " ", N(to_y),
          "\" fill=\"none\" stroke=\"#444444\" stroke-width=\"1.2\" "
          "stroke-opacity=\"0.85\" marker-end=\"url(#arrow)\"/>\n");
    }
  }

  void DrawSpan(const TimelineSpan& v) {
    const Span& span = spans_[v.index];
    const Site* site = SiteOf(span);
    const Centi x = span_x_[v.index];
    const Centi w = span_w_[v.index];
    const Colour& colour = ColourOf(site);
    const Centi top = RowTop(lane_of_[span.thread], v.row);
    doc_.Rect(x, top, w, kRowHeight, SpanAttributes(span, colour, w),
              Escape(SpanTooltip(span, site)));
    if (site != nullptr && w >= Px(14)) {
      if (std::optional<std::string> label =
              svg::FitText(site->name, w - Px(8), 11, 3)) {
        doc_.Text(x + Px(4), top + Px(13),
                  colour.dark ? "span on-dark" : "span", *label);
      }
    }
  }

  static std::string SpanAttributes(const Span& span, const Colour& colour,
                                    Centi w) {
    std::string attributes =
        absl::StrCat("rx=\"2\" fill=\"", V(colour.fill), "\"");
    if ((span.flags & kSpanException) != 0) {
      attributes.append(" stroke=\"#d62728\" stroke-width=\"2\"");
    } else if ((span.flags & kSpanUnfinished) != 0) {
      attributes.append(
          " stroke=\"#333333\" stroke-width=\"1.5\" stroke-dasharray=\"3 2\"");
    } else if (w >= Px(3)) {
      attributes.append(" stroke=\"#ffffff\" stroke-width=\"0.6\"");
    }
    return attributes;
  }

  // Label, duration, start, heartbeats and flags.
  static std::string SpanTooltip(const Span& span, const Site* site) {
    std::string tooltip = absl::StrCat(
        site != nullptr ? RowLabel(RowKeyOf(*site)) : "(unknown site)",
        " \xE2\x80\x94 ",
        FormatDuration(std::max<int64_t>(span.end_ns - span.start_ns, 0)),
        " from ", FormatDuration(span.start_ns), ", ", span.heartbeats,
        span.heartbeats == 1 ? " heartbeat" : " heartbeats");
    if ((span.flags & kSpanException) != 0) tooltip.append(", exception");
    if ((span.flags & kSpanUnfinished) != 0) tooltip.append(", unfinished");
    if ((span.flags & kSpanRerooted) != 0) tooltip.append(", re-rooted");
    return tooltip;
  }

  const Capture& capture_;
  const std::vector<Span>& spans_;
  const TimelineOptions& options_;
  const Forest forest_;
  const std::vector<uint32_t> row_;  // SameThreadRows()
  Document doc_;

  int64_t lo_ = 0;
  int64_t hi_ = 0;
  std::vector<TimelineSpan> visible_;
  size_t in_window_ = 0;
  size_t drawn_before_lane_limit_ = 0;
  std::vector<uint32_t> lane_threads_;
  size_t threads_with_spans_ = 0;
  std::vector<uint32_t> lane_of_;    // by thread
  std::vector<uint32_t> lane_rows_;  // by lane
  std::vector<bool> drawn_;          // by span
  Marks marks_;

  Centi label_width_ = 0;
  Centi x0_ = 0;
  Centi x1_ = 0;
  Centi lanes_top_ = 0;
  Centi lanes_bottom_ = 0;
  std::vector<Centi> lane_top_;
  std::vector<Centi> span_x_;
  std::vector<Centi> span_w_;
};

}  // namespace

std::string PlotTimeline(const Capture& capture,
                         const TimelineOptions& options) {
  return Timeline(capture, options).Render();
}

}  // namespace spanprof::analysis
