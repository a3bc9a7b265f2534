// The `__spanprof_slice` virtual table (slice_table.h).
#include "query/slice_table.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "json/cat.h"

namespace spanprof::analysis::internal::query {
namespace {

constexpr uint32_t kNoRow = UINT32_MAX;

// Column numbers, in kSliceTableSchema's order.
enum Column : int {
  kId,
  kTs,
  kDur,
  kTrackId,
  kCategory,
  kName,
  kDepth,
  kParentId,
  kArgSetId,
  kSite,
  kSelfDur,
  kHeartbeats,
  kUnfinished,
  kCrossThreadParentId,
  kSpanDepth,
};

// Plan numbers handed from xBestIndex to xFilter.
constexpr int kFullScan = 0;
constexpr int kIdLookup = 1;

struct Table {
  sqlite3_vtab base{};
  const SliceStore* store = nullptr;
};

struct Cursor {
  sqlite3_vtab_cursor base{};
  const SliceStore* store = nullptr;
  size_t row = 0;
  size_t end = 0;
};

int Connect(sqlite3* db, void* aux, int /*argc*/, const char* const* /*argv*/,
            sqlite3_vtab** out, char** /*error*/) {
  const int rc = sqlite3_declare_vtab(db, kSliceTableSchema);
  if (rc != SQLITE_OK) return rc;
  // Read-only and side-effect free: the views over it may be used even with
  // an untrusted schema.
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  auto* table = new Table;
  table->store = static_cast<const SliceStore*>(aux);
  *out = &table->base;
  return SQLITE_OK;
}

int Disconnect(sqlite3_vtab* vtab) {
  delete reinterpret_cast<Table*>(vtab);
  return SQLITE_OK;
}

// A lookup by id when the query gives `id = value` (joins on parent_id and
// flow's slice ids), a full scan otherwise.
int BestIndex(sqlite3_vtab* vtab, sqlite3_index_info* info) {
  const auto rows =
      static_cast<double>(reinterpret_cast<Table*>(vtab)->store->size());
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& constraint = info->aConstraint[i];
    if (constraint.usable == 0 || constraint.op != SQLITE_INDEX_CONSTRAINT_EQ ||
        (constraint.iColumn != kId && constraint.iColumn != -1)) {
      continue;
    }
    info->aConstraintUsage[i].argvIndex = 1;
    info->aConstraintUsage[i].omit = 1;
    info->idxNum = kIdLookup;
    info->estimatedCost = 1.0;
    info->estimatedRows = 1;
    info->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
    return SQLITE_OK;
  }
  info->idxNum = kFullScan;
  info->estimatedCost = rows + 1.0;
  info->estimatedRows = static_cast<sqlite3_int64>(rows) + 1;
  return SQLITE_OK;
}

int Open(sqlite3_vtab* vtab, sqlite3_vtab_cursor** out) {
  auto* cursor = new Cursor;
  cursor->store = reinterpret_cast<Table*>(vtab)->store;
  *out = &cursor->base;
  return SQLITE_OK;
}

int Close(sqlite3_vtab_cursor* base) {
  delete reinterpret_cast<Cursor*>(base);
  return SQLITE_OK;
}

int Filter(sqlite3_vtab_cursor* base, int plan, const char* /*plan_text*/,
           int argc, sqlite3_value** argv) {
  auto* cursor = reinterpret_cast<Cursor*>(base);
  if (plan != kIdLookup || argc < 1) {
    cursor->row = 0;
    cursor->end = cursor->store->size();
    return SQLITE_OK;
  }
  cursor->row = cursor->end = 0;
  if (sqlite3_value_numeric_type(argv[0]) != SQLITE_INTEGER) return SQLITE_OK;
  const std::optional<size_t> row =
      cursor->store->Find(sqlite3_value_int64(argv[0]));
  if (row.has_value()) {
    cursor->row = *row;
    cursor->end = *row + 1;
  }
  return SQLITE_OK;
}

int Next(sqlite3_vtab_cursor* base) {
  ++reinterpret_cast<Cursor*>(base)->row;
  return SQLITE_OK;
}

int Eof(sqlite3_vtab_cursor* base) {
  const auto* cursor = reinterpret_cast<Cursor*>(base);
  return cursor->row >= cursor->end ? 1 : 0;
}

void ResultId(sqlite3_context* context, int64_t id) {
  if (id == 0) {
    sqlite3_result_null(context);
  } else {
    sqlite3_result_int64(context, id);
  }
}

void ResultText(sqlite3_context* context, const std::string& text) {
  sqlite3_result_text(context, text.data(), static_cast<int>(text.size()),
                      SQLITE_STATIC);
}

int ColumnOf(sqlite3_vtab_cursor* base, sqlite3_context* context, int column) {
  const auto* cursor = reinterpret_cast<Cursor*>(base);
  const SliceStore& store = *cursor->store;
  const SliceRow& row = store.row(cursor->row);
  switch (column) {
    case kId:
      sqlite3_result_int64(context, row.id);
      break;
    case kTs:
      sqlite3_result_int64(context, row.ts);
      break;
    case kDur:
      sqlite3_result_int64(context, row.dur);
      break;
    case kTrackId:
      sqlite3_result_int64(context, row.track_id);
      break;
    case kCategory:
      ResultText(context, store.category(row));
      break;
    case kName:
      ResultText(context, store.name(row));
      break;
    case kDepth:
      sqlite3_result_int64(context, row.depth);
      break;
    case kParentId:
      ResultId(context, row.parent_id);
      break;
    case kArgSetId:
      ResultId(context, row.arg_set_id);
      break;
    case kSite:
      sqlite3_result_int64(context, row.site);
      break;
    case kSelfDur:
      sqlite3_result_int64(context, row.self_dur);
      break;
    case kHeartbeats:
      sqlite3_result_int64(context, row.heartbeats);
      break;
    case kUnfinished:
      sqlite3_result_int(context, row.unfinished ? 1 : 0);
      break;
    case kCrossThreadParentId:
      ResultId(context, row.cross_thread_parent_id);
      break;
    case kSpanDepth:
      sqlite3_result_int64(context, row.span_depth);
      break;
    default:
      sqlite3_result_null(context);
  }
  return SQLITE_OK;
}

int Rowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid) {
  const auto* cursor = reinterpret_cast<Cursor*>(base);
  *rowid = cursor->store->row(cursor->row).id;
  return SQLITE_OK;
}

sqlite3_module MakeModule() {
  sqlite3_module module{};
  module.iVersion = 0;
  module.xCreate = Connect;
  module.xConnect = Connect;
  module.xBestIndex = BestIndex;
  module.xDisconnect = Disconnect;
  module.xDestroy = Disconnect;
  module.xOpen = Open;
  module.xClose = Close;
  module.xFilter = Filter;
  module.xNext = Next;
  module.xEof = Eof;
  module.xColumn = ColumnOf;
  module.xRowid = Rowid;
  return module;
}

const sqlite3_module kModule = MakeModule();

}  // namespace

uint32_t SliceStore::AddSite(std::string name, std::string category) {
  sites_.emplace_back(std::move(name), std::move(category));
  return static_cast<uint32_t>(sites_.size() - 1);
}

void SliceStore::Seal() {
  dense_.clear();
  sorted_.clear();
  if (rows_.empty()) return;
  int64_t min_id = rows_[0].id;
  int64_t max_id = rows_[0].id;
  for (const SliceRow& row : rows_) {
    min_id = std::min(min_id, row.id);
    max_id = std::max(max_id, row.id);
  }
  // Unsigned: the range of two int64 ids may not fit int64.
  const uint64_t range =
      static_cast<uint64_t>(max_id) - static_cast<uint64_t>(min_id) + 1;
  is_dense_ = range <= 4 * static_cast<uint64_t>(rows_.size()) + 1024;
  min_id_ = min_id;
  if (is_dense_) {
    dense_.assign(range, kNoRow);
    for (size_t i = rows_.size(); i-- > 0;) {  // the first row wins
      dense_[static_cast<uint64_t>(rows_[i].id) -
             static_cast<uint64_t>(min_id)] = static_cast<uint32_t>(i);
    }
    return;
  }
  sorted_.reserve(rows_.size());
  for (size_t i = 0; i < rows_.size(); ++i) {
    sorted_.emplace_back(rows_[i].id, static_cast<uint32_t>(i));
  }
  std::sort(sorted_.begin(), sorted_.end());
}

std::optional<size_t> SliceStore::Find(int64_t id) const {
  if (is_dense_) {
    if (id < min_id_) return std::nullopt;
    const uint64_t offset =
        static_cast<uint64_t>(id) - static_cast<uint64_t>(min_id_);
    if (offset >= dense_.size() || dense_[offset] == kNoRow) {
      return std::nullopt;
    }
    return dense_[offset];
  }
  const auto it = std::lower_bound(sorted_.begin(), sorted_.end(),
                                   std::make_pair(id, uint32_t{0}));
  if (it == sorted_.end() || it->first != id) return std::nullopt;
  return it->second;
}

absl::Status RegisterSliceTable(sqlite3* db, const SliceStore* store) {
  if (sqlite3_create_module_v2(db, "spanprof_slice", &kModule,
                               const_cast<SliceStore*>(store),
                               nullptr) != SQLITE_OK ||
      sqlite3_exec(db,
                   "CREATE VIRTUAL TABLE __spanprof_slice USING spanprof_slice",
                   nullptr, nullptr, nullptr) != SQLITE_OK) {
    return absl::InternalError(
        Cat("SQLite: creating the slice table: ", sqlite3_errmsg(db)));
  }
  return absl::OkStatus();
}

}  // namespace spanprof::analysis::internal::query
