// svg.h — the primitives the SVG figures share (private to the analysis
// library): exact integer coordinates, XML-safe text with width estimates,
// value formatting and axis ticks, and a `Document` that collects elements.
//
// Every coordinate is an integer number of hundredths of a user unit
// ("centi"), every label is formatted with integer arithmetic, and every
// loop runs in a sorted order, so a figure's bytes depend on its input alone.
#ifndef SPANPROF_ANALYSIS_SRC_REPORT_SVG_H_
#define SPANPROF_ANALYSIS_SRC_REPORT_SVG_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace spanprof::analysis::svg {

// Debian's abseil has its own string_view, which `StrCat` wants.
inline absl::string_view V(std::string_view s) { return {s.data(), s.size()}; }

// ---------------------------------------------------------------------------
// Numbers and text.

// Hundredths of an SVG user unit.
using Centi = int64_t;
constexpr Centi Px(int64_t px) { return px * 100; }

// "12", "12.5", "12.34": the shortest exact rendering of a centi value.
std::string N(Centi v);

// The code points of `text`, with characters XML 1.0 does not allow (and
// invalid UTF-8) as '?'.
std::vector<uint32_t> CodePoints(std::string_view text);

// `points` or `text` with XML's special characters escaped.
std::string Escape(const std::vector<uint32_t>& points);
std::string Escape(std::string_view text);

// Estimated rendered width, in centi, at `font_px` (with room to spare, so
// a label that fits by this estimate fits in the fonts of the style sheet).
Centi TextWidth(const std::vector<uint32_t>& points, int64_t font_px,
                bool bold = false);
Centi TextWidth(std::string_view text, int64_t font_px, bool bold = false);

// `text` escaped if it fits in `max_width`; else its longest prefix of at
// least `min_points` code points followed by "…" that fits; else nullopt.
std::optional<std::string> FitText(std::string_view text, Centi max_width,
                                   int64_t font_px, size_t min_points = 2,
                                   bool bold = false);

// Like `FitText()`, but always returns something (possibly just "…").
std::string FitTextAlways(std::string_view text, Centi max_width,
                          int64_t font_px, bool bold = false);

// `text` broken at spaces into lines at most `max_width` wide (a word
// longer than a line is cut with "…"), each escaped.
std::vector<std::string> WrapText(std::string_view text, Centi max_width,
                                  int64_t font_px);

// The last path component, so that figures do not depend on where the
// inputs were read from.
std::string_view BaseName(std::string_view path);

// `(value - lo) * width / (hi - lo)` in centi, clamped to [0, width],
// without overflow.
Centi Scale(int64_t value, int64_t lo, int64_t hi, Centi width);

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return b > 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  }
  return sum;
}

// ---------------------------------------------------------------------------
// Values and axes.

enum class ValueKind { kDuration, kCount, kBytes };

// "1.25 ms", "1234", "1.23 MB".
std::string FormatValue(int64_t v, ValueKind kind);

// ---------------------------------------------------------------------------
// The document.

// Collects elements; `Finish()` wraps them in the root element once the
// height is known.
class Document {
 public:
  explicit Document(int width) : width_(width) { body_.reserve(1 << 14); }

  Centi width() const { return Px(width_); }
  std::string& body() { return body_; }

  void Text(Centi x, Centi y, std::string_view css_class,
            std::string_view escaped, std::string_view anchor = "");

  // `attributes` are written verbatim after the geometry.
  void Rect(Centi x, Centi y, Centi w, Centi h, std::string_view attributes,
            std::string_view escaped_title = "");

  void Line(Centi x1, Centi y1, Centi x2, Centi y2,
            std::string_view attributes);

  std::string Finish(Centi height, std::string_view escaped_title,
                     std::string_view defs = "") const;

 private:
  int width_;
  std::string body_;
};

inline constexpr Centi kMargin = Px(16);

// The title and the subtitle (wrapped); returns the y below them.
Centi DrawHeading(Document& doc, std::string_view title,
                  std::string_view subtitle);

// Lays legend entries out left to right, wrapping; returns the y below them.
// `swatch(i, x, y)` draws entry i's 12×12 swatch with its top left at (x, y).
template <typename Swatch>
Centi DrawLegend(Document& doc, Centi y, const std::vector<std::string>& labels,
                 Swatch&& swatch) {
  Centi x = kMargin;
  const Centi row_height = Px(18);
  for (size_t i = 0; i < labels.size(); ++i) {
    const Centi label_width = TextWidth(labels[i], 12);
    const Centi item_width = Px(12 + 5) + label_width + Px(16);
    if (x > kMargin && x + item_width > doc.width() - kMargin) {
      x = kMargin;
      y += row_height;
    }
    swatch(i, x, y);
    doc.Text(x + Px(17), y + Px(10), "legend", Escape(labels[i]));
    x += item_width;
  }
  return y + row_height;
}

// A horizontal axis from x0 to x1 at y (ticks hang below it); grid lines go
// up to `grid_top`. Returns the y below the labels.
Centi DrawAxis(Document& doc, Centi x0, Centi x1, Centi y, Centi grid_top,
               int64_t lo, int64_t hi, ValueKind kind,
               std::string_view caption);

}  // namespace spanprof::analysis::svg

#endif  // SPANPROF_ANALYSIS_SRC_REPORT_SVG_H_
