// The query database (spanprof/analysis/query.h): an in-memory SQLite
// database, loaded once, then guarded by an authorizer so that queries read
// the capture but cannot change it or reach anything outside it.
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "json/cat.h"
#include "query/query_loader.h"
#include "query/query_schema.h"
#include "query/slice_table.h"
#include "spanprof/analysis/query.h"
#include "spanprof/analysis/table_output.h"
#include "status_macros.h"

namespace spanprof::analysis {

namespace q = ::spanprof::analysis::internal::query;

struct QueryDatabase::Connection {
  sqlite3* db = nullptr;
  // The slices, read by the virtual table: destroyed after `db` is closed.
  std::unique_ptr<q::SliceStore> store = std::make_unique<q::SliceStore>();
  // Why the authorizer refused the statement being prepared ("" when it did
  // not): SQLite's own message only says "not authorized".
  std::string refusal;
  ~Connection() { sqlite3_close_v2(db); }
};

namespace {

bool IsCaptureTable(const char* name) {
  if (name == nullptr) return false;
  const std::string_view table(name);
  return std::find(std::begin(q::kCaptureTables), std::end(q::kCaptureTables),
                   table) != std::end(q::kCaptureTables);
}

// PRAGMAs that only read, with or without an argument.
bool IsReadingPragma(std::string_view name) {
  constexpr std::string_view kReading[] = {
      "table_info",     "table_xinfo",     "table_list",    "index_list",
      "index_info",     "index_xinfo",     "function_list", "pragma_list",
      "collation_list", "compile_options", "module_list",   "foreign_key_list"};
  return std::find(std::begin(kReading), std::end(kReading), name) !=
         std::end(kReading);
}

// What a query may not do, or "" when it may.
std::string Refusal(int action, const char* arg1, const char* arg2) {
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      return "ATTACH and DETACH are refused: the query database is in memory "
             "and reads only the capture";
    case SQLITE_PRAGMA:
      if (arg2 == nullptr || IsReadingPragma(arg1 != nullptr ? arg1 : "")) {
        return "";
      }
      return internal::Cat("PRAGMA ", arg1 != nullptr ? arg1 : "",
                           " with a value is refused: settings are read-only");
    case SQLITE_FUNCTION:
      if (arg2 != nullptr && std::string_view(arg2) == "load_extension") {
        return "load_extension() is refused: no extensions are loaded";
      }
      return "";
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
    case SQLITE_DROP_TABLE:
    case SQLITE_DROP_VIEW:
    case SQLITE_ALTER_TABLE:
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_DROP_INDEX:
      if (IsCaptureTable(arg1)) {
        return internal::Cat("changing table ", arg1,
                             " is refused: the capture's tables are read-only "
                             "(CREATE TEMP TABLE ... AS SELECT makes a copy)");
      }
      return "";
    default:
      return "";
  }
}

int Authorize(void* data, int action, const char* arg1, const char* arg2,
              const char* /*database*/, const char* /*trigger*/) {
  std::string refusal = Refusal(action, arg1, arg2);
  if (refusal.empty()) return SQLITE_OK;
  *static_cast<std::string*>(data) = std::move(refusal);
  return SQLITE_DENY;
}

// "line L, column C: MESSAGE\n  TEXT OF THE LINE\n  ^" for the byte
// `offset` of `sql` (no position when offset < 0).
std::string PositionedMessage(std::string_view sql, int64_t offset,
                              std::string_view message) {
  if (offset < 0 || static_cast<size_t>(offset) > sql.size()) {
    return std::string(message);
  }
  const auto at = static_cast<size_t>(offset);
  const size_t line_start =
      at == 0 ? 0 : (sql.rfind('\n', at - 1) + 1);  // npos + 1 == 0
  size_t line_end = sql.find('\n', at);
  if (line_end == std::string_view::npos) line_end = sql.size();
  const int64_t line =
      1 + std::count(sql.begin(), sql.begin() + static_cast<int64_t>(at), '\n');
  std::string caret_pad;
  for (size_t i = line_start; i < at; ++i) {
    const char c = sql[i];
    if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) continue;
    caret_pad.push_back(c == '\t' ? '\t' : ' ');
  }
  return internal::Cat(
      "line ", line, ", column ", caret_pad.size() + 1, ": ", message, "\n  ",
      sql.substr(line_start, line_end - line_start), "\n  ", caret_pad, "^");
}

// The offset in `sql` of the first character that is not white space at or
// after `from` (a pointer into `sql`).
int64_t StatementStart(std::string_view sql, const char* from) {
  auto at = static_cast<size_t>(from - sql.data());
  while (at < sql.size() && std::isspace(static_cast<unsigned char>(sql[at]))) {
    ++at;
  }
  return static_cast<int64_t>(at);
}

TableCell CellOf(sqlite3_stmt* statement, int column) {
  switch (sqlite3_column_type(statement, column)) {
    case SQLITE_INTEGER:
      return TableCell::Int(sqlite3_column_int64(statement, column));
    case SQLITE_FLOAT:
      return TableCell::Real(sqlite3_column_double(statement, column));
    case SQLITE_NULL:
      return TableCell::Null();
    default: {  // text, and blobs shown as their bytes
      const auto* bytes =
          static_cast<const char*>(sqlite3_column_blob(statement, column));
      const int size = sqlite3_column_bytes(statement, column);
      return TableCell::Text(
          bytes == nullptr ? ""
                           : std::string(bytes, static_cast<size_t>(size)));
    }
  }
}

struct StatementCloser {
  void operator()(sqlite3_stmt* statement) const {
    sqlite3_finalize(statement);
  }
};

}  // namespace

QueryDatabase::QueryDatabase(std::unique_ptr<Connection> connection)
    : connection_(std::move(connection)) {}
QueryDatabase::QueryDatabase(QueryDatabase&&) noexcept = default;
QueryDatabase& QueryDatabase::operator=(QueryDatabase&&) noexcept = default;
QueryDatabase::~QueryDatabase() = default;

absl::StatusOr<QueryDatabase> QueryDatabase::Load(
    std::span<const QueryInput> inputs) {
  auto connection = std::make_unique<Connection>();
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                    SQLITE_OPEN_MEMORY | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(":memory:", &connection->db, flags, nullptr) !=
      SQLITE_OK) {
    return absl::ResourceExhaustedError("SQLite: cannot open a database");
  }
  sqlite3* db = connection->db;
  // Loading: no journal (nothing to roll back to), no extensions ever.
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  SPANPROF_RETURN_IF_ERROR(
      q::ExecSql(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"));
  SPANPROF_ASSIGN_OR_RETURN(
      const int64_t slices,
      q::LoadCaptures(db, inputs, connection->store.get()));
  sqlite3_set_authorizer(db, Authorize, &connection->refusal);
  QueryDatabase database(std::move(connection));
  database.slice_count_ = slices;
  return database;
}

absl::StatusOr<OutputTable> QueryDatabase::Run(std::string_view sql) {
  sqlite3* db = connection_->db;
  OutputTable result;
  const char* const begin = sql.data();
  const char* const end = begin + sql.size();
  const char* next = begin;
  while (next < end) {
    const char* tail = nullptr;
    sqlite3_stmt* raw = nullptr;
    connection_->refusal.clear();
    const int rc =
        sqlite3_prepare_v2(db, next, static_cast<int>(end - next), &raw, &tail);
    std::unique_ptr<sqlite3_stmt, StatementCloser> statement(raw);
    const char* const statement_begin = next;
    const int64_t statement_offset = next - begin;
    if (rc != SQLITE_OK) {
      const int at = sqlite3_error_offset(db);
      std::string message = connection_->refusal.empty()
                                ? std::string(sqlite3_errmsg(db))
                                : connection_->refusal;
      // Without a place of its own, the error is the statement's.
      return absl::InvalidArgumentError(PositionedMessage(
          sql, at >= 0 ? statement_offset + at : StatementStart(sql, next),
          message));
    }
    next = tail;
    if (statement == nullptr) continue;  // only whitespace or a comment
    const int columns = sqlite3_column_count(statement.get());
    OutputTable table;
    for (int c = 0; c < columns; ++c) {
      table.columns.emplace_back(sqlite3_column_name(statement.get(), c));
    }
    int step = SQLITE_ROW;
    while ((step = sqlite3_step(statement.get())) == SQLITE_ROW) {
      std::vector<TableCell>& row = table.rows.emplace_back();
      row.reserve(static_cast<size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        row.push_back(CellOf(statement.get(), c));
      }
    }
    if (step != SQLITE_DONE) {
      return absl::InvalidArgumentError(PositionedMessage(
          sql, StatementStart(sql, statement_begin), sqlite3_errmsg(db)));
    }
    if (columns > 0) result = std::move(table);
  }
  return result;
}

}  // namespace spanprof::analysis
