// Loading captures into the query tables: one prepared statement per table,
// every row bound in place (names are bound without copies: they live in the
// capture for the whole load), all in one transaction.
#include "query/query_loader.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "json/cat.h"
#include "model/capture_format.h"
#include "model/span_args.h"
#include "perfetto/perfetto_format.h"
#include "query/query_schema.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/timing.h"
#include "spanprof/capture.h"
#include "status_macros.h"

namespace spanprof::analysis::internal::query {
namespace {

namespace pf = ::spanprof::analysis::internal::perfetto;

struct StatementCloser {
  void operator()(sqlite3_stmt* statement) const {
    sqlite3_finalize(statement);
  }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementCloser>;

// Binds by position from 1, then steps and resets.
class Row {
 public:
  Row(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}
  Row& Int(int64_t value) {
    sqlite3_bind_int64(statement_, ++column_, value);
    return *this;
  }
  Row& Real(double value) {
    sqlite3_bind_double(statement_, ++column_, value);
    return *this;
  }
  // `text` must outlive the step (SQLITE_STATIC: SQLite copies it into the
  // row, not into the binding).
  Row& Text(std::string_view text) {
    sqlite3_bind_text(statement_, ++column_, text.data(),
                      static_cast<int>(text.size()), SQLITE_STATIC);
    return *this;
  }
  Row& Null() {
    sqlite3_bind_null(statement_, ++column_);
    return *this;
  }
  Row& OptionalText(std::string_view text) {
    return text.empty() ? Null() : Text(text);
  }
  absl::Status Insert() {
    const int rc = sqlite3_step(statement_);
    sqlite3_reset(statement_);
    if (rc != SQLITE_DONE) return SqliteError(db_, "inserting a row");
    return absl::OkStatus();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_;
  int column_ = 0;
};

// The ids that keep several captures apart in one database.
struct Bases {
  int64_t slice_id = 0;
  int64_t utid = 0;
  int64_t upid = 0;
};

class Loader {
 public:
  Loader(sqlite3* db, SliceStore* store) : db_(db), store_(store) {}

  absl::Status Prepare();
  absl::Status Add(const Capture& capture);
  int64_t slices() const { return slices_; }

 private:
  absl::Status AddProcesses(const Capture& capture);
  absl::Status AddThreads(const Capture& capture);
  absl::Status AddSites(const Capture& capture);
  absl::StatusOr<uint32_t> AddSite(const Site& site);
  // The store's site of the capture's site `site`.
  absl::StatusOr<uint32_t> SiteIdOf(const Capture& capture, uint32_t site);
  absl::Status AddSpans(const Capture& capture);
  absl::Status AddSpan(const Capture& capture, size_t index, uint32_t parent,
                       uint32_t thread_depth, const SpanTiming& timing);
  // The arg set of span `index`: its site's tags, arguments and counters;
  // spans with tags only share their site's set. 0: none.
  absl::StatusOr<int64_t> ArgSetOf(const Capture& capture, const Span& span);
  absl::Status AddTags(int64_t arg_set, const Site& site);
  absl::Status AddArg(int64_t arg_set, const SpanArg& arg);
  absl::Status AddStringArg(int64_t arg_set, std::string_view key,
                            std::string_view value);

  Row RowOf(const Statement& statement) { return Row(db_, statement.get()); }

  sqlite3* db_;
  SliceStore* store_;
  Statement process_, thread_, track_, site_, args_, flow_;
  Bases bases_;
  int64_t next_arg_set_ = 1;
  int64_t next_flow_ = 0;
  int64_t slices_ = 0;
  // The shared arg set of each site of the capture being loaded (0: not yet
  // made, -1: the site has no tags).
  std::vector<int64_t> site_arg_sets_;
  std::vector<uint32_t> site_ids_;  // the store's, by the capture's site
  std::optional<uint32_t> unnamed_site_;
  std::string key_;  // scratch for "args.NAME"
};

// Each span's depth among the spans of its own thread (0 for a root and for
// a cross-thread child): trace_processor's `depth`, which counts the slices
// of the same track. Walks each chain up to the first span already known, so
// O(n) in all.
std::vector<uint32_t> ThreadDepths(const Capture& capture,
                                   const Forest& forest) {
  constexpr uint32_t kUnknown = UINT32_MAX;
  std::vector<uint32_t> depths(capture.spans.size(), kUnknown);
  std::vector<uint32_t> chain;
  auto same_thread_parent = [&](uint32_t i) {
    const uint32_t p = forest.parent(i);
    return p != Forest::kNone &&
                   capture.spans[p].thread == capture.spans[i].thread
               ? p
               : Forest::kNone;
  };
  for (uint32_t i = 0; i < depths.size(); ++i) {
    uint32_t at = i;
    while (at != Forest::kNone && depths[at] == kUnknown) {
      chain.push_back(at);
      at = same_thread_parent(at);
    }
    uint32_t depth = at == Forest::kNone ? 0 : depths[at] + 1;
    while (!chain.empty()) {
      depths[chain.back()] = depth++;
      chain.pop_back();
    }
  }
  return depths;
}

bool HasTags(const Site& site) {
  return std::any_of(
      kTagFields.begin(), kTagFields.end(),
      [&](const TagField& tag) { return !(site.*tag.site).empty(); });
}

absl::Status Loader::Prepare() {
  struct Spec {
    Statement* statement;
    const char* sql;
  };
  const Spec specs[] = {
      {&process_, "INSERT INTO process VALUES (?,?,?)"},
      {&thread_, "INSERT INTO thread VALUES (?,?,?,?)"},
      {&track_, "INSERT INTO thread_track VALUES (?,?)"},
      {&site_, "INSERT INTO __spanprof_site VALUES (?,?,?,?,?,?,?)"},
      {&args_, "INSERT INTO args VALUES (?,?,?,?,?,?,?)"},
      {&flow_, "INSERT INTO flow VALUES (?,?,?)"},
  };
  for (const Spec& spec : specs) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v3(db_, spec.sql, -1, SQLITE_PREPARE_PERSISTENT,
                           &statement, nullptr) != SQLITE_OK) {
      return SqliteError(db_, spec.sql);
    }
    spec.statement->reset(statement);
  }
  return absl::OkStatus();
}

absl::Status Loader::Add(const Capture& capture) {
  SPANPROF_RETURN_IF_ERROR(AddProcesses(capture));
  SPANPROF_RETURN_IF_ERROR(AddThreads(capture));
  SPANPROF_RETURN_IF_ERROR(AddSites(capture));
  SPANPROF_RETURN_IF_ERROR(AddSpans(capture));
  uint64_t max_id = 0;
  for (const Span& span : capture.spans) max_id = std::max(max_id, span.id);
  bases_.slice_id += static_cast<int64_t>(max_id);
  bases_.utid += static_cast<int64_t>(capture.threads.size());
  bases_.upid += static_cast<int64_t>(
      capture.processes.empty() ? 1 : capture.processes.size());
  return absl::OkStatus();
}

absl::Status Loader::AddProcesses(const Capture& capture) {
  if (capture.processes.empty()) {
    return RowOf(process_)
        .Int(bases_.upid)
        .Int(capture.pid)
        .Text(capture.process_name)
        .Insert();
  }
  for (size_t p = 0; p < capture.processes.size(); ++p) {
    const ProcessInfo& process = capture.processes[p];
    SPANPROF_RETURN_IF_ERROR(RowOf(process_)
                                 .Int(bases_.upid + static_cast<int64_t>(p))
                                 .Int(process.pid)
                                 .Text(process.process_name)
                                 .Insert());
  }
  return absl::OkStatus();
}

absl::Status Loader::AddThreads(const Capture& capture) {
  for (size_t t = 0; t < capture.threads.size(); ++t) {
    const ThreadInfo& thread = capture.threads[t];
    const int64_t utid = bases_.utid + static_cast<int64_t>(t);
    const int64_t process =
        capture.processes.empty() ? 0 : static_cast<int64_t>(thread.process);
    SPANPROF_RETURN_IF_ERROR(RowOf(thread_)
                                 .Int(utid)
                                 .Int(static_cast<int64_t>(thread.os_tid))
                                 .OptionalText(thread.name)
                                 .Int(bases_.upid + process)
                                 .Insert());
    SPANPROF_RETURN_IF_ERROR(RowOf(track_).Int(utid).Int(utid).Insert());
  }
  return absl::OkStatus();
}

absl::Status Loader::AddSites(const Capture& capture) {
  site_arg_sets_.assign(capture.sites.size(), 0);
  site_ids_.clear();
  for (size_t s = 0; s < capture.sites.size(); ++s) {
    const Site& site = capture.sites[s];
    if (!HasTags(site)) site_arg_sets_[s] = -1;
    SPANPROF_ASSIGN_OR_RETURN(const uint32_t id, AddSite(site));
    site_ids_.push_back(id);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> Loader::AddSite(const Site& site) {
  const uint32_t id = store_->AddSite(
      site.name,
      site.phase.empty() ? std::string(kDefaultCategory) : site.phase);
  // The tag columns of kSchemaSql's __spanprof_site, in kTagFields order.
  Row row = RowOf(site_);
  row.Int(id);
  for (const TagField& tag : kTagFields) row.OptionalText(site.*tag.site);
  SPANPROF_RETURN_IF_ERROR(row.Insert());
  return id;
}

absl::StatusOr<uint32_t> Loader::SiteIdOf(const Capture& capture,
                                          uint32_t site) {
  if (site < capture.sites.size()) return site_ids_[site];
  // Only a capture built in memory has one (the readers refuse it): shown
  // as a site with an empty name.
  if (!unnamed_site_.has_value()) {
    SPANPROF_ASSIGN_OR_RETURN(unnamed_site_, AddSite(Site{}));
  }
  return *unnamed_site_;
}

absl::Status Loader::AddSpans(const Capture& capture) {
  const Forest forest(capture);
  const std::vector<SpanTiming> timings = ComputeTimings(capture, forest);
  const std::vector<uint32_t> depths = ThreadDepths(capture, forest);
  store_->Reserve(capture.spans.size());
  for (size_t i = 0; i < capture.spans.size(); ++i) {
    SPANPROF_RETURN_IF_ERROR(
        AddSpan(capture, i, forest.parent(i), depths[i], timings[i]));
  }
  slices_ += static_cast<int64_t>(capture.spans.size());
  return absl::OkStatus();
}

absl::Status Loader::AddSpan(const Capture& capture, size_t index,
                             uint32_t parent, uint32_t thread_depth,
                             const SpanTiming& timing) {
  const Span& span = capture.spans[index];
  const int64_t id = bases_.slice_id + static_cast<int64_t>(span.id);
  const bool has_parent = parent != Forest::kNone;
  const bool same_thread =
      has_parent && capture.spans[parent].thread == span.thread;
  const int64_t parent_id =
      has_parent
          ? bases_.slice_id + static_cast<int64_t>(capture.spans[parent].id)
          : 0;
  SPANPROF_ASSIGN_OR_RETURN(const int64_t arg_set, ArgSetOf(capture, span));
  SPANPROF_ASSIGN_OR_RETURN(const uint32_t site, SiteIdOf(capture, span.site));
  store_->Add(SliceRow{
      .id = id,
      .ts = span.start_ns,
      .dur = span.end_ns - span.start_ns,
      .self_dur = timing.self_ns,
      .parent_id = same_thread ? parent_id : 0,
      .cross_thread_parent_id = has_parent && !same_thread ? parent_id : 0,
      .arg_set_id = arg_set,
      .track_id = static_cast<uint32_t>(bases_.utid + span.thread),
      .depth = thread_depth,
      .span_depth = span.depth,
      .site = site,
      .heartbeats = span.heartbeats,
      .unfinished = (span.flags & kSpanUnfinished) != 0,
  });
  if (!has_parent || same_thread) return absl::OkStatus();
  return RowOf(flow_).Int(next_flow_++).Int(parent_id).Int(id).Insert();
}

absl::StatusOr<int64_t> Loader::ArgSetOf(const Capture& capture,
                                         const Span& span) {
  const bool valid_site = span.site < capture.sites.size();
  if (span.arg_count == 0) {
    if (!valid_site || site_arg_sets_[span.site] < 0) return 0;
    int64_t& shared = site_arg_sets_[span.site];
    if (shared == 0) {
      shared = next_arg_set_++;
      SPANPROF_RETURN_IF_ERROR(AddTags(shared, capture.sites[span.site]));
    }
    return shared;
  }
  const int64_t arg_set = next_arg_set_++;
  if (valid_site) {
    SPANPROF_RETURN_IF_ERROR(AddTags(arg_set, capture.sites[span.site]));
  }
  for (const SpanArg& arg : ArgsOf(capture, span)) {
    SPANPROF_RETURN_IF_ERROR(AddArg(arg_set, arg));
  }
  return arg_set;
}

absl::Status Loader::AddTags(int64_t arg_set, const Site& site) {
  for (const TagField& tag : kTagFields) {
    const std::string& value = site.*tag.site;
    if (value.empty()) continue;
    key_.assign(kTagPrefix);
    key_.append(tag.name);
    SPANPROF_RETURN_IF_ERROR(AddStringArg(arg_set, key_, value));
  }
  return absl::OkStatus();
}

absl::Status Loader::AddStringArg(int64_t arg_set, std::string_view key,
                                  std::string_view value) {
  return RowOf(args_)
      .Int(arg_set)
      .Text(key)
      .Text(key)
      .Null()
      .Text(value)
      .Null()
      .Text("string")
      .Insert();
}

absl::Status Loader::AddArg(int64_t arg_set, const SpanArg& arg) {
  key_.assign(arg.is_counter ? pf::kCounterPrefix : pf::kArgPrefix);
  key_.append(arg.key);
  if (arg.is_string && !arg.is_counter) {
    return AddStringArg(arg_set, key_, arg.text);
  }
  Row row = RowOf(args_);
  row.Int(arg_set).Text(key_).Text(key_);
  if (arg.is_double && !arg.is_counter) {
    return row.Null().Null().Real(arg.double_value).Text("real").Insert();
  }
  return row.Int(arg.int_value).Null().Null().Text("int").Insert();
}

}  // namespace

absl::Status SqliteError(sqlite3* db, std::string_view what) {
  return absl::InternalError(Cat("SQLite: ", what, ": ", sqlite3_errmsg(db)));
}

absl::Status ExecSql(sqlite3* db, std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string error = message != nullptr ? message : "unknown error";
    sqlite3_free(message);
    return absl::InternalError(Cat("SQLite: ", error));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> LoadCaptures(sqlite3* db,
                                     std::span<const QueryInput> inputs,
                                     SliceStore* store) {
  SPANPROF_RETURN_IF_ERROR(RegisterSliceTable(db, store));
  SPANPROF_RETURN_IF_ERROR(ExecSql(db, kSchemaSql));
  SPANPROF_RETURN_IF_ERROR(ExecSql(db, "BEGIN"));
  Loader loader(db, store);
  SPANPROF_RETURN_IF_ERROR(loader.Prepare());
  for (const QueryInput& input : inputs) {
    if (absl::Status s = loader.Add(*input.capture); !s.ok()) {
      return absl::Status(s.code(),
                          Cat(input.name, ": ", std::string(s.message())));
    }
  }
  store->Seal();
  SPANPROF_RETURN_IF_ERROR(ExecSql(db, kIndexesSql));
  SPANPROF_RETURN_IF_ERROR(ExecSql(db, "COMMIT"));
  return loader.slices();
}

}  // namespace spanprof::analysis::internal::query
