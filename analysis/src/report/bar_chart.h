// bar_chart.h — the row layout that the breakdown and compare figures share
// (private to the analysis library): a label column, a bar area scaled from
// 0, values written after the bars, alternating row bands.
#ifndef SPANPROF_ANALYSIS_SRC_REPORT_BAR_CHART_H_
#define SPANPROF_ANALYSIS_SRC_REPORT_BAR_CHART_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/svg.h"

namespace spanprof::analysis::svg {

struct BarLayout {
  Centi label_x = kMargin;
  Centi label_width = 0;
  Centi x0 = 0;  // value 0
  Centi x1 = 0;  // value `max`
  int64_t max = 1;
};

// Label column as wide as the widest label (within limits); the bar area
// leaves room after the longest bar for the widest value text.
BarLayout LayoutBars(const Document& doc,
                     const std::vector<std::string>& labels, Centi widest_value,
                     int64_t max);

// The x where a bar of `value` ends.
Centi BarEnd(const BarLayout& layout, int64_t value);

// A light band behind every other one of `shown` rows of `row_height` from
// `rows_top`.
void DrawRowBands(Document& doc, Centi rows_top, size_t shown,
                  Centi row_height);

// The notes under the rows: `when_empty` when no row is shown, "3 more rows
// not shown (28 in all)" when some are left out. Returns the y below them.
Centi DrawRowNotes(Document& doc, Centi y, size_t shown, size_t total,
                   std::string_view when_empty);

}  // namespace spanprof::analysis::svg

#endif  // SPANPROF_ANALYSIS_SRC_REPORT_BAR_CHART_H_
