// Folded stacks: a trie of frames keyed by (parent frame, span name), with
// self time (from ComputeTimings, the same numbers as the summary) summed per
// node and rendered once per distinct stack.
#include "spanprof/analysis/folded.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/timing.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {
namespace {

constexpr uint32_t kNoNode = UINT32_MAX;

}  // namespace

std::string FoldedFrameName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == ';') {
      c = ':';
    } else if (static_cast<unsigned char>(c) < 0x20) {
      c = ' ';
    }
  }
  return out;
}

std::string FoldedStacks(const Capture& capture) {
  const size_t n = capture.spans.size();
  const Forest forest(capture);
  const std::vector<SpanTiming> timings = ComputeTimings(capture, forest);

  // Frame names, interned by their folded text.
  std::vector<std::string> names;
  std::map<std::string, uint32_t, std::less<>> name_ids;
  std::vector<uint32_t> site_name(capture.sites.size());
  for (size_t s = 0; s < capture.sites.size(); ++s) {
    std::string frame = FoldedFrameName(capture.sites[s].name);
    auto [it, inserted] =
        name_ids.emplace(std::move(frame), static_cast<uint32_t>(names.size()));
    if (inserted) names.push_back(it->first);
    site_name[s] = it->second;
  }
  const uint32_t unknown_name = static_cast<uint32_t>(names.size());
  names.emplace_back("[unknown]");

  // Trie nodes keyed by (parent node, name), built top-down from the roots
  // over children on every thread (the forest has no cycles).
  std::vector<std::pair<uint32_t, uint32_t>> nodes;  // parent node, name
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> node_ids;
  std::vector<uint32_t> span_node(n, kNoNode);
  std::vector<uint32_t> pending(forest.roots().begin(), forest.roots().end());
  while (!pending.empty()) {
    const uint32_t i = pending.back();
    pending.pop_back();
    const Span& span = capture.spans[i];
    const uint32_t parent = forest.parent(i);
    const uint32_t parent_node =
        parent == Forest::kNone ? kNoNode : span_node[parent];
    const uint32_t name =
        span.site < site_name.size() ? site_name[span.site] : unknown_name;
    auto [node, inserted] = node_ids.emplace(
        std::make_pair(parent_node, name), static_cast<uint32_t>(nodes.size()));
    if (inserted) nodes.emplace_back(parent_node, name);
    span_node[i] = node->second;
    for (uint32_t child : forest.children(i)) pending.push_back(child);
  }

  std::vector<int64_t> node_self(nodes.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    if (span_node[i] != kNoNode) node_self[span_node[i]] += timings[i].self_ns;
  }

  std::vector<std::pair<std::string, int64_t>> lines;
  std::vector<uint32_t> path;
  for (uint32_t node = 0; node < nodes.size(); ++node) {
    if (node_self[node] <= 0) continue;
    path.clear();
    for (uint32_t cur = node; cur != kNoNode; cur = nodes[cur].first) {
      path.push_back(nodes[cur].second);
    }
    std::string stack;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      if (!stack.empty()) stack.push_back(';');
      stack += names[*it];
    }
    lines.emplace_back(std::move(stack), node_self[node]);
  }
  // Names are interned by their folded text, so each node renders a distinct
  // stack; the merge below only guards that invariant.
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    int64_t total = 0;
    size_t j = i;
    for (; j < lines.size() && lines[j].first == lines[i].first; ++j) {
      total += lines[j].second;
    }
    out += lines[i].first;
    out.push_back(' ');
    out += std::to_string(total);
    out.push_back('\n');
    i = j;
  }
  return out;
}

}  // namespace spanprof::analysis
