// decoded_trace.h — decodes a Perfetto protobuf trace with `protoc --decode`
// (Debian's protobuf-compiler) against tests/analysis/perfetto/
// perfetto_subset.proto, and parses protoc's text output into a tree, so
// that the tests check spanprof's bytes with a decoder nobody here wrote.
#ifndef SPANPROF_TESTS_ANALYSIS_PERFETTO_DECODED_TRACE_H_
#define SPANPROF_TESTS_ANALYSIS_PERFETTO_DECODED_TRACE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/src/perfetto/proto_decoder.h"
#include "spanprof/capture.h"
#include "tests/testing/test_support.h"

namespace spanprof::testing {

// One message of protoc's text format: scalar fields in order, and nested
// messages in order.
struct TextMessage {
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::pair<std::string, std::unique_ptr<TextMessage>>> children;

  // The values of `name`, in order (strings keep their quotes removed).
  std::vector<std::string> All(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& [key, value] : fields) {
      if (key == name) out.push_back(value);
    }
    return out;
  }
  std::optional<std::string> Get(const std::string& name) const {
    for (const auto& [key, value] : fields) {
      if (key == name) return value;
    }
    return std::nullopt;
  }
  uint64_t Uint(const std::string& name, uint64_t fallback = 0) const {
    const std::optional<std::string> v = Get(name);
    return v ? std::stoull(*v) : fallback;
  }
  std::vector<const TextMessage*> Children(const std::string& name) const {
    std::vector<const TextMessage*> out;
    for (const auto& [key, child] : children) {
      if (key == name) out.push_back(child.get());
    }
    return out;
  }
  const TextMessage* Child(const std::string& name) const {
    for (const auto& [key, child] : children) {
      if (key == name) return child.get();
    }
    return nullptr;
  }
};

// Undoes protoc's C-style string escapes (enough for the names we write).
inline std::string Unquote(const std::string& quoted) {
  std::string out;
  for (size_t i = 1; i + 1 < quoted.size(); ++i) {
    if (quoted[i] == '\\' && i + 2 < quoted.size()) {
      const char c = quoted[++i];
      if (c >= '0' && c <= '7') {
        int value = c - '0';
        for (int k = 0; k < 2 && quoted[i + 1] >= '0' && quoted[i + 1] <= '7';
             ++k) {
          value = value * 8 + (quoted[++i] - '0');
        }
        out.push_back(static_cast<char>(value));
      } else {
        out.push_back(c == 'n' ? '\n' : c == 't' ? '\t' : c);
      }
    } else {
      out.push_back(quoted[i]);
    }
  }
  return out;
}

inline std::unique_ptr<TextMessage> ParseTextFormat(const std::string& text) {
  auto root = std::make_unique<TextMessage>();
  std::vector<TextMessage*> stack = {root.get()};
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (line == "}") {
      stack.pop_back();
    } else if (line.size() > 2 && line.substr(line.size() - 2) == " {") {
      auto child = std::make_unique<TextMessage>();
      TextMessage* raw = child.get();
      stack.back()->children.emplace_back(line.substr(0, line.size() - 2),
                                          std::move(child));
      stack.push_back(raw);
    } else {
      const size_t colon = line.find(": ");
      std::string value = line.substr(colon + 2);
      if (!value.empty() && value[0] == '"') value = Unquote(value);
      stack.back()->fields.emplace_back(line.substr(0, colon), value);
    }
  }
  return root;
}

// True when protoc can be run.
inline bool HaveProtoc() {
  return RunProcess({"/bin/sh", "-c", "command -v protoc"}).exit_code == 0;
}

// Decodes `bytes` as `spanprof_test.Trace`; fails the test (and returns
// nullptr) when protoc does not accept them.
inline std::unique_ptr<TextMessage> DecodeTrace(const std::string& bytes,
                                                std::string* text = nullptr) {
  TempDir dir;
  const std::string path = dir.File("trace.pftrace");
  WriteText(path, bytes);
  const std::string proto_dir =
      std::string(SPANPROF_TEST_SOURCE_DIR) + "/tests/analysis/perfetto";
  const ProcessResult r =
      RunProcess({"/bin/sh", "-c",
                  "protoc --decode=spanprof_test.Trace -I '" + proto_dir +
                      "' perfetto_subset.proto < '" + path + "'"});
  if (r.exit_code != 0) {
    ADD_FAILURE() << "protoc --decode failed (" << r.exit_code
                  << "): " << r.err;
    return nullptr;
  }
  if (text != nullptr) *text = r.out;
  return ParseTextFormat(r.out);
}

// A slice rebuilt from a sequence's begin and end events.
struct DecodedSlice {
  uint32_t sequence = 0;
  std::string name;
  std::string category;
  uint64_t begin_ts = 0;  // absolute ns (REALTIME)
  uint64_t end_ts = 0;
  std::map<std::string, std::string> annotations;  // name -> value text
  std::vector<uint64_t> flow_ids;
  std::vector<uint64_t> terminating_flow_ids;
};

// What the structural checks read from a decoded trace. `problems` lists
// every broken rule: a sequence whose first packet does not clear the
// incremental state, a later packet with sequence_flags, an
// iid used before its sequence interned it or interned twice, the same iid
// naming two strings, an end without a begin, a begin never ended.
struct DecodedTrace {
  size_t packets = 0;
  std::string process_name;
  int64_t pid = 0;
  uint32_t primary_clock = 0;
  std::map<int64_t, std::string> thread_names;  // tid -> name
  std::vector<DecodedSlice> slices;             // in begin order per sequence
  // The "spanprof end" instant's int annotations, and the index (from 1) of
  // its packet; 0 when there is none.
  std::map<std::string, uint64_t> end_counts;
  size_t end_packet = 0;
  std::vector<std::string> problems;
};

namespace decoded_internal {

struct Sequence {
  bool started = false;
  uint64_t clock = 0;  // the incremental clock's value
  std::map<std::string, std::map<uint64_t, std::string>> interned;
  std::vector<size_t> open;  // indexes into slices
};

inline void Intern(const TextMessage& data, Sequence& seq,
                   std::map<std::string, std::map<uint64_t, std::string>>& all,
                   std::vector<std::string>& problems) {
  for (const char* kind :
       {"event_names", "event_categories", "debug_annotation_names"}) {
    for (const TextMessage* entry : data.Children(kind)) {
      const uint64_t iid = entry->Uint("iid");
      const std::string name = entry->Get("name").value_or("");
      if (!seq.interned[kind].emplace(iid, name).second) {
        problems.push_back(std::string(kind) + " iid interned twice");
      }
      auto [it, inserted] = all[kind].emplace(iid, name);
      if (!inserted && it->second != name) {
        problems.push_back(std::string(kind) + " iid names two strings");
      }
    }
  }
}

inline std::string Lookup(Sequence& seq, const char* kind, uint64_t iid,
                          std::vector<std::string>& problems) {
  auto it = seq.interned[kind].find(iid);
  if (it == seq.interned[kind].end()) {
    problems.push_back(std::string(kind) + " iid " + std::to_string(iid) +
                       " used before it was interned");
    return "";
  }
  return it->second;
}

inline DecodedSlice BeginSlice(const TextMessage& event, Sequence& seq,
                               std::vector<std::string>& problems) {
  DecodedSlice slice;
  slice.name = Lookup(seq, "event_names", event.Uint("name_iid"), problems);
  for (const std::string& iid : event.All("category_iids")) {
    if (!slice.category.empty()) slice.category += ",";
    slice.category +=
        Lookup(seq, "event_categories", std::stoull(iid), problems);
  }
  for (const TextMessage* a : event.Children("debug_annotations")) {
    const std::string name =
        Lookup(seq, "debug_annotation_names", a->Uint("name_iid"), problems);
    for (const auto& [key, value] : a->fields) {
      if (key != "name_iid") slice.annotations[name] = value;
    }
  }
  for (const std::string& id : event.All("flow_ids")) {
    slice.flow_ids.push_back(std::stoull(id));
  }
  for (const std::string& id : event.All("terminating_flow_ids")) {
    slice.terminating_flow_ids.push_back(std::stoull(id));
  }
  return slice;
}

}  // namespace decoded_internal

inline void ReadDescriptor(const TextMessage& track, DecodedTrace& out) {
  if (const TextMessage* p = track.Child("process")) {
    out.process_name = p->Get("process_name").value_or("");
    out.pid = static_cast<int64_t>(p->Uint("pid"));
  }
  if (const TextMessage* t = track.Child("thread")) {
    out.thread_names[static_cast<int64_t>(t->Uint("tid"))] =
        t->Get("thread_name").value_or("");
  }
}

// Walks the packets in file order, per sequence.
inline DecodedTrace AnalyzeTrace(const TextMessage& root) {
  using decoded_internal::Sequence;
  DecodedTrace out;
  std::map<uint32_t, Sequence> sequences;
  std::map<std::string, std::map<uint64_t, std::string>> all;
  for (const TextMessage* packet : root.Children("packet")) {
    ++out.packets;
    const auto id =
        static_cast<uint32_t>(packet->Uint("trusted_packet_sequence_id"));
    if (id == 0) out.problems.push_back("packet without a sequence id");
    if (const TextMessage* track = packet->Child("track_descriptor")) {
      ReadDescriptor(*track, out);
    }
    const TextMessage* snapshot = packet->Child("clock_snapshot");
    if (snapshot != nullptr) {
      out.primary_clock =
          static_cast<uint32_t>(snapshot->Uint("primary_trace_clock"));
    }
    if (id == 1) {  // descriptors: no incremental state
      const TextMessage* event = packet->Child("track_event");
      if (event == nullptr || event->Get("name") != "spanprof end") continue;
      out.end_packet = out.packets;
      for (const TextMessage* a : event->Children("debug_annotations")) {
        out.end_counts[a->Get("name").value_or("")] = a->Uint("int_value");
      }
      continue;
    }
    Sequence& seq = sequences[id];
    const uint64_t flags = packet->Uint("sequence_flags");
    if (!seq.started) {
      if (flags != 1) out.problems.push_back("first packet does not clear");
      seq.started = true;
      for (const TextMessage* c : snapshot
                                      ? snapshot->Children("clocks")
                                      : std::vector<const TextMessage*>{}) {
        if (c->Get("is_incremental")) seq.clock = c->Uint("timestamp");
      }
    } else if (flags != 0) {
      // spanprof sets no flag after a sequence's first packet
      // (docs/formats.md, "Sequence flags").
      out.problems.push_back("sequence_flags on a later packet");
    }
    if (const TextMessage* data = packet->Child("interned_data")) {
      decoded_internal::Intern(*data, seq, all, out.problems);
    }
    const TextMessage* event = packet->Child("track_event");
    if (event == nullptr) continue;
    uint64_t ts = packet->Uint("timestamp");
    if (packet->Get("timestamp_clock_id")) {
      // absolute; the incremental clock stays
    } else {
      seq.clock += ts;
      ts = seq.clock;
    }
    if (event->Get("type") == "TYPE_SLICE_BEGIN") {
      DecodedSlice slice =
          decoded_internal::BeginSlice(*event, seq, out.problems);
      slice.sequence = id;
      slice.begin_ts = ts;
      seq.open.push_back(out.slices.size());
      out.slices.push_back(std::move(slice));
    } else if (seq.open.empty()) {
      out.problems.push_back("slice end without a begin");
    } else {
      out.slices[seq.open.back()].end_ts = ts;
      seq.open.pop_back();
    }
  }
  for (const auto& [id, seq] : sequences) {
    if (!seq.open.empty()) out.problems.push_back("slice never ended");
  }
  return out;
}

// The capture's cross-thread parent links: what the trace must draw as flows.
inline int CrossThreadLinks(const Capture& c) {
  int links = 0;
  for (const Span& child : c.spans) {
    for (const Span& parent : c.spans) {
      if (parent.id == child.parent_id && parent.thread != child.thread) {
        ++links;
      }
    }
  }
  return links;
}

// Every flow id appears once in `flow_ids` and once in
// `terminating_flow_ids`; returns the number of flows, or -1 when the rule
// is broken.
inline int CountMatchedFlows(const DecodedTrace& trace) {
  std::map<uint64_t, std::pair<int, int>> uses;
  for (const DecodedSlice& s : trace.slices) {
    for (uint64_t id : s.flow_ids) ++uses[id].first;
    for (uint64_t id : s.terminating_flow_ids) ++uses[id].second;
  }
  for (const auto& [id, count] : uses) {
    if (count.first != 1 || count.second != 1) return -1;
  }
  return static_cast<int>(uses.size());
}

// The offset of the last `Trace.packet` of a protobuf trace: where its end
// packet starts in a trace spanprof wrote (so `trace.substr(0, offset)` is
// the trace cut at a packet boundary).
inline size_t LastPacketOffset(const std::string& trace) {
  analysis::internal::ProtoDecoder d(trace, 0);
  analysis::internal::ProtoField f;
  size_t last = 0;
  while (d.Next(&f)) last = f.offset;
  return last;
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_ANALYSIS_PERFETTO_DECODED_TRACE_H_
