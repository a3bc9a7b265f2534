// The bar-chart row layout of bar_chart.h.
#include "report/bar_chart.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/svg.h"

namespace spanprof::analysis::svg {

BarLayout LayoutBars(const Document& doc,
                     const std::vector<std::string>& labels, Centi widest_value,
                     int64_t max) {
  BarLayout layout;
  Centi widest_label = Px(80);
  for (const std::string& label : labels) {
    widest_label = std::max(widest_label, TextWidth(label, 12));
  }
  layout.label_width =
      std::min(widest_label + Px(12), (doc.width() - 2 * kMargin) * 45 / 100);
  layout.x0 = kMargin + layout.label_width;
  layout.x1 = std::max(layout.x0 + Px(80),
                       doc.width() - kMargin - widest_value - Px(8));
  layout.max = std::max<int64_t>(max, 1);
  return layout;
}

Centi BarEnd(const BarLayout& layout, int64_t value) {
  return layout.x0 + Scale(std::max<int64_t>(value, 0), 0, layout.max,
                           layout.x1 - layout.x0);
}

void DrawRowBands(Document& doc, Centi rows_top, size_t shown,
                  Centi row_height) {
  for (size_t r = 0; r < shown; ++r) {
    if (r % 2 == 0) {
      doc.Rect(kMargin, rows_top + static_cast<Centi>(r) * row_height,
               doc.width() - 2 * kMargin, row_height, "fill=\"#f4f5f7\"");
    }
  }
}

Centi DrawRowNotes(Document& doc, Centi y, size_t shown, size_t total,
                   std::string_view when_empty) {
  if (shown == 0) {
    doc.Text(kMargin, y + Px(14), "note", Escape(when_empty));
    y += Px(22);
  }
  if (shown < total) {
    doc.Text(kMargin, y + Px(10), "note",
             Escape(absl::StrCat(
                 total - shown, total - shown == 1 ? " more row" : " more rows",
                 " not shown (", total, " in all)")));
    y += Px(18);
  }
  return y;
}

}  // namespace spanprof::analysis::svg
