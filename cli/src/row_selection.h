// row_selection.h — which rows of a summary `spanprof report` shows, and in
// what order: --sort COLUMN, --filter REGEX, --top N (private to the CLI).
#ifndef SPANPROF_CLI_SRC_ROW_SELECTION_H_
#define SPANPROF_CLI_SRC_ROW_SELECTION_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flags.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::cli::internal {

// The flags of the row selection, for a command's flag table.
inline constexpr FlagSpec kSortFlag = {"--sort", "", true, "COLUMN"};
inline constexpr FlagSpec kTopFlag = {"--top", "", true, "N"};
inline constexpr FlagSpec kFilterFlag = {"--filter", "", true, "REGEX"};

// What `SelectRows()` left out, for the table's note.
struct RowsLeftOut {
  size_t count = 0;
  std::string by;  // "--filter x, --top 10"
};

// `SelectRows()` keeps the rows of `rows` whose label matches --filter
// (ECMAScript regex, searched anywhere in the label), sorts them by --sort
// (self, total, calls, mean, median, p95, p99, max, heartbeats, share:
// largest first; name: A to Z; ties keep the summary's order; default: the
// summary's order, self time) and keeps the first --top N. Errors name the
// flag.
absl::StatusOr<RowsLeftOut> SelectRows(const ParsedFlags& flags,
                                       std::vector<analysis::Row>* rows);

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_ROW_SELECTION_H_
