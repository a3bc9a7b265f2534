#include "model/capture_order.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

namespace spanprof::analysis::internal {

void MoveSpansInCaptureOrder(std::vector<Span>& spans,
                             std::vector<SpanAllocs>& allocs,
                             std::vector<SpanArg>& args, Capture& capture) {
  const auto before = [](const Span& x, const Span& y) {
    return std::tie(x.thread, x.start_ns, x.depth, x.id) <
           std::tie(y.thread, y.start_ns, y.depth, y.id);
  };
  if (std::is_sorted(spans.begin(), spans.end(), before)) {
    capture.spans = std::move(spans);
    capture.span_allocs = std::move(allocs);
    capture.args = std::move(args);
    spans = {};
    allocs = {};
    args = {};
    return;
  }
  std::vector<uint32_t> order(spans.size());
  std::iota(order.begin(), order.end(), uint32_t{0});
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return before(spans[a], spans[b]);
  });
  capture.spans.clear();
  capture.spans.reserve(order.size());
  capture.span_allocs.clear();
  capture.span_allocs.reserve(allocs.size());
  for (const uint32_t i : order) {
    capture.spans.push_back(spans[i]);
    if (i < allocs.size()) capture.span_allocs.push_back(allocs[i]);
  }
  spans = {};
  allocs = {};
  capture.args.clear();
  capture.args.reserve(args.size());
  for (Span& span : capture.spans) {
    if (span.arg_count == 0) continue;
    const uint32_t first = span.first_arg;
    span.first_arg = static_cast<uint32_t>(capture.args.size());
    for (uint32_t a = 0; a < span.arg_count; ++a) {
      capture.args.push_back(std::move(args[first + a]));
    }
  }
  args = {};
}

}  // namespace spanprof::analysis::internal
