// Deterministic SVG figures (plot.h). Every coordinate is an integer number
// of hundredths of a user unit ("centi"), every label is formatted with
// integer arithmetic, and every loop runs in a sorted order, so the bytes
// depend on the input alone.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {
namespace {

// Debian's abseil has its own string_view, which `StrCat` wants.
absl::string_view V(std::string_view s) { return {s.data(), s.size()}; }

// ---------------------------------------------------------------------------
// Numbers and text.

// Hundredths of an SVG user unit.
using Centi = int64_t;
constexpr Centi Px(int64_t px) { return px * 100; }

// "12", "12.5", "12.34": the shortest exact rendering of a centi value.
std::string N(Centi v) {
  std::string out;
  uint64_t magnitude = static_cast<uint64_t>(v);
  if (v < 0) {
    out.push_back('-');
    magnitude = ~magnitude + 1;
  }
  absl::StrAppend(&out, magnitude / 100);
  const uint64_t fraction = magnitude % 100;
  if (fraction != 0) {
    out.push_back('.');
    out.push_back(static_cast<char>('0' + fraction / 10));
    if (fraction % 10 != 0) {
      out.push_back(static_cast<char>('0' + fraction % 10));
    }
  }
  return out;
}

// Decodes the UTF-8 code point at `text[*i]` and advances `*i`. Returns
// nullopt (advancing one byte) for an invalid sequence: overlong forms,
// surrogates and values past U+10FFFF are invalid.
std::optional<uint32_t> NextCodePoint(std::string_view text, size_t* i) {
  const auto byte = [&](size_t k) {
    return static_cast<uint32_t>(static_cast<unsigned char>(text[k]));
  };
  const uint32_t b0 = byte(*i);
  size_t length = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if (b0 < 0x80) {
    ++*i;
    return b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    length = 2;
    cp = b0 & 0x1F;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3;
    cp = b0 & 0x0F;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4;
    cp = b0 & 0x07;
    min = 0x10000;
  } else {
    ++*i;
    return std::nullopt;
  }
  if (*i + length > text.size()) {
    ++*i;
    return std::nullopt;
  }
  for (size_t k = 1; k < length; ++k) {
    const uint32_t b = byte(*i + k);
    if ((b & 0xC0) != 0x80) {
      ++*i;
      return std::nullopt;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return std::nullopt;
  }
  *i += length;
  return cp;
}

// Characters XML 1.0 does not allow (and that would break a one-line label)
// are shown as '?', so any name makes a well-formed document.
bool AllowedInText(uint32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return false;
  if (cp == 0xFFFE || cp == 0xFFFF) return false;
  return true;
}

// The code points of `text`, with disallowed and invalid ones as '?'.
std::vector<uint32_t> CodePoints(std::string_view text) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const std::optional<uint32_t> cp = NextCodePoint(text, &i);
    out.push_back(cp.has_value() && AllowedInText(*cp) ? *cp : '?');
  }
  return out;
}

void AppendCodePoint(std::string* out, uint32_t cp) {
  switch (cp) {
    case '&':
      out->append("&amp;");
      return;
    case '<':
      out->append("&lt;");
      return;
    case '>':
      out->append("&gt;");
      return;
    case '"':
      out->append("&quot;");
      return;
    case '\'':
      out->append("&apos;");
      return;
    default:
      break;
  }
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string Escape(const std::vector<uint32_t>& points) {
  std::string out;
  out.reserve(points.size());
  for (uint32_t cp : points) AppendCodePoint(&out, cp);
  return out;
}

std::string Escape(std::string_view text) { return Escape(CodePoints(text)); }

// Advance widths of printable ASCII in thousandths of an em, from DejaVu
// Sans (regular and bold): the widest of the fonts a viewer is likely to
// pick for the font list in `kStyle`, so a label that fits by this estimate
// fits in Helvetica, Arial or Liberation Sans too. Other characters count as
// a full em.
constexpr std::array<uint16_t, 95> kRegularWidths = {
    318, 401, 460, 838, 636,  950, 780, 275, 390, 390, 500, 838, 318, 361,
    318, 337, 636, 636, 636,  636, 636, 636, 636, 636, 636, 636, 337, 337,
    838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295,
    295, 656, 557, 863, 748,  787, 603, 787, 695, 635, 611, 732, 684, 989,
    685, 611, 685, 390, 337,  390, 838, 500, 500, 613, 635, 550, 635, 615,
    352, 635, 634, 278, 278,  579, 278, 974, 634, 612, 635, 635, 411, 521,
    392, 634, 592, 818, 592,  592, 525, 636, 337, 636, 838};
constexpr std::array<uint16_t, 95> kBoldWidths = {
    348, 456, 521, 838, 696,  1002, 872, 306,  457, 457, 523, 838, 380, 415,
    380, 365, 696, 696, 696,  696,  696, 696,  696, 696, 696, 696, 400, 400,
    838, 838, 838, 580, 1000, 774,  762, 734,  830, 683, 683, 821, 837, 372,
    372, 775, 637, 995, 837,  850,  733, 850,  770, 720, 682, 812, 774, 1103,
    771, 724, 725, 457, 365,  457,  838, 500,  500, 675, 716, 593, 716, 678,
    435, 716, 712, 343, 343,  665,  343, 1042, 712, 687, 716, 716, 493, 595,
    478, 712, 652, 924, 645,  652,  582, 712,  365, 712, 838};

// Estimated rendered width, in centi, of `points` at `font_px`, with 3% to
// spare for hinting.
Centi TextWidth(const std::vector<uint32_t>& points, int64_t font_px,
                bool bold = false) {
  const std::array<uint16_t, 95>& widths = bold ? kBoldWidths : kRegularWidths;
  int64_t milli_em = 0;
  for (uint32_t cp : points) {
    milli_em += cp >= 0x20 && cp < 0x7F ? widths[cp - 0x20] : 1000;
  }
  return milli_em * font_px * 103 / 1000;
}

Centi TextWidth(std::string_view text, int64_t font_px, bool bold = false) {
  return TextWidth(CodePoints(text), font_px, bold);
}

constexpr uint32_t kEllipsis = 0x2026;

// `text` escaped if it fits in `max_width`; else its longest prefix of at
// least `min_points` code points followed by "…" that fits; else nullopt.
std::optional<std::string> FitText(std::string_view text, Centi max_width,
                                   int64_t font_px, size_t min_points = 2,
                                   bool bold = false) {
  std::vector<uint32_t> points = CodePoints(text);
  if (TextWidth(points, font_px, bold) <= max_width) return Escape(points);
  const Centi ellipsis = TextWidth({kEllipsis}, font_px, bold);
  while (!points.empty() &&
         TextWidth(points, font_px, bold) + ellipsis > max_width) {
    points.pop_back();
  }
  if (points.size() < min_points || points.empty()) return std::nullopt;
  points.push_back(kEllipsis);
  return Escape(points);
}

// Like `FitText()`, but always returns something (possibly just "…").
std::string FitTextAlways(std::string_view text, Centi max_width,
                          int64_t font_px, bool bold = false) {
  std::optional<std::string> fitted =
      FitText(text, max_width, font_px, 1, bold);
  if (fitted.has_value()) return *fitted;
  return Escape(std::vector<uint32_t>{kEllipsis});
}

// The last path component, so that figures do not depend on where the
// inputs were read from.
std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `(value - lo) * width / (hi - lo)` in centi, without overflow: ranges
// beyond 10^13 are scaled down first (losing at most a thousandth of a
// pixel per 10^13 units).
Centi Scale(int64_t value, int64_t lo, int64_t hi, Centi width) {
  if (hi <= lo) return 0;
  if (value <= lo) return 0;
  if (value >= hi) return width;
  uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  uint64_t offset = static_cast<uint64_t>(value) - static_cast<uint64_t>(lo);
  constexpr uint64_t kMaxRange = 10'000'000'000'000ULL;
  while (range > kMaxRange) {
    range /= 2;
    offset /= 2;
  }
  if (range == 0) return 0;
  return static_cast<Centi>(offset * static_cast<uint64_t>(width) / range);
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return b > 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  }
  return sum;
}

// ---------------------------------------------------------------------------
// Values, axes and ticks.

enum class ValueKind { kDuration, kCount, kBytes };

std::string FormatCount(int64_t v) { return absl::StrCat(v); }

std::string FormatBytes(int64_t v) {
  const bool negative = v < 0;
  const uint64_t magnitude =
      negative ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
  const std::string sign = negative ? "-" : "";
  if (magnitude < 1000) return absl::StrCat(sign, magnitude, " B");
  constexpr std::array<std::pair<uint64_t, std::string_view>, 3> kUnits = {
      {{10, " kB"}, {10'000, " MB"}, {10'000'000, " GB"}}};
  for (size_t u = 0; u < kUnits.size(); ++u) {
    const uint64_t step = kUnits[u].first;
    const uint64_t hundredths =
        magnitude / step + (magnitude % step >= step / 2 ? 1 : 0);
    if (hundredths < 100'000 || u + 1 == kUnits.size()) {
      const uint64_t fraction = hundredths % 100;
      return absl::StrCat(sign, hundredths / 100, ".", fraction < 10 ? "0" : "",
                          fraction, V(kUnits[u].second));
    }
  }
  return "";
}

std::string FormatValue(int64_t v, ValueKind kind) {
  switch (kind) {
    case ValueKind::kDuration:
      return FormatDuration(v);
    case ValueKind::kCount:
      return FormatCount(v);
    case ValueKind::kBytes:
      return FormatBytes(v);
  }
  return "";
}

// The smallest step from the 1-2-5 series with at most `max_ticks` steps in
// `range` (both positive).
int64_t NiceStep(int64_t range, int64_t max_ticks) {
  max_ticks = std::max<int64_t>(max_ticks, 1);
  int64_t magnitude = 1;
  while (true) {
    for (int64_t m : {1, 2, 5}) {
      const int64_t step = m * magnitude;
      if (range / step <= max_ticks) return step;
    }
    if (magnitude > std::numeric_limits<int64_t>::max() / 100) {
      return magnitude * 10;
    }
    magnitude *= 10;
  }
}

// The label of tick `value` on an axis with `step` between ticks: all labels
// of one axis share a unit and a number of decimals ("0.5 ms", "1.0 ms").
std::string TickLabel(int64_t value, int64_t step, ValueKind kind) {
  struct Unit {
    int64_t min_step;
    int64_t size;
    std::string_view suffix;
  };
  // Times switch to the larger unit at half of it, so labels have at most
  // one decimal ("0.5 ms", "1.0 ms"; "100 ms", not "0.1 s"). Counts and
  // bytes switch only at whole units ("100k", not "0.1M").
  constexpr std::array<Unit, 4> kTimeUnits = {
      {{500'000'000, 1'000'000'000, " s"},
       {500'000, 1'000'000, " ms"},
       {500, 1'000, " us"},
       {0, 1, " ns"}}};
  constexpr std::array<Unit, 4> kCountUnits = {
      {{1'000'000'000, 1'000'000'000, "G"},
       {1'000'000, 1'000'000, "M"},
       {1'000, 1'000, "k"},
       {0, 1, ""}}};
  constexpr std::array<Unit, 4> kByteUnits = {
      {{1'000'000'000, 1'000'000'000, " GB"},
       {1'000'000, 1'000'000, " MB"},
       {1'000, 1'000, " kB"},
       {0, 1, " B"}}};
  const std::array<Unit, 4>& units = kind == ValueKind::kDuration ? kTimeUnits
                                     : kind == ValueKind::kCount  ? kCountUnits
                                                                  : kByteUnits;
  Unit unit = units.back();
  for (const Unit& candidate : units) {
    if (step >= candidate.min_step) {
      unit = candidate;
      break;
    }
  }
  int decimals = 0;
  int64_t scale = 1;
  while (decimals < 3 && (step % unit.size) * scale % unit.size != 0) {
    ++decimals;
    scale *= 10;
  }
  const bool negative = value < 0;
  const uint64_t magnitude = negative ? ~static_cast<uint64_t>(value) + 1
                                      : static_cast<uint64_t>(value);
  const uint64_t size = static_cast<uint64_t>(unit.size);
  std::string out = negative ? "-" : "";
  absl::StrAppend(&out, magnitude / size);
  if (decimals > 0) {
    const uint64_t fraction =
        (magnitude % size) * static_cast<uint64_t>(scale) / size;
    std::string digits = absl::StrCat(fraction);
    out.push_back('.');
    out.append(static_cast<size_t>(decimals) - digits.size(), '0');
    out.append(digits);
  }
  out.append(unit.suffix.data(), unit.suffix.size());
  return out;
}

// ---------------------------------------------------------------------------
// The document.

constexpr std::string_view kStyle =
    "text{font-family:Helvetica,Arial,'Liberation Sans','DejaVu Sans',"
    "sans-serif;fill:#222222}"
    ".title{font-size:16px;font-weight:bold}"
    ".sub{font-size:12px;fill:#555555}"
    ".lane{font-size:12px;font-weight:bold}"
    ".tid{font-size:10px;fill:#777777}"
    ".label{font-size:12px}"
    ".span{font-size:11px}"
    ".on-dark{fill:#ffffff}"
    ".axis{font-size:11px;fill:#555555}"
    ".value{font-size:11px;fill:#333333}"
    ".legend{font-size:12px;fill:#333333}"
    ".note{font-size:11px;fill:#777777;font-style:italic}"
    ".grid{stroke:#e3e3e3;stroke-width:1}"
    ".tick{stroke:#888888;stroke-width:1}";

// Collects elements; `Finish()` wraps them in the root element once the
// height is known.
class Document {
 public:
  explicit Document(int width) : width_(width) { body_.reserve(1 << 14); }

  Centi width() const { return Px(width_); }
  std::string& body() { return body_; }

  void Text(Centi x, Centi y, std::string_view css_class,
            std::string_view escaped, std::string_view anchor = "") {
    absl::StrAppend(&body_, "<text x=\"", N(x), "\" y=\"", N(y), "\" class=\"",
                    V(css_class), "\"");
    if (!anchor.empty())
      absl::StrAppend(&body_, " text-anchor=\"", V(anchor), "\"");
    absl::StrAppend(&body_, ">", V(escaped), "</text>\n");
  }

  // `attributes` are written verbatim after the geometry.
  void Rect(Centi x, Centi y, Centi w, Centi h, std::string_view attributes,
            std::string_view escaped_title = "") {
    absl::StrAppend(&body_, "<rect x=\"", N(x), "\" y=\"", N(y), "\" width=\"",
                    N(w), "\" height=\"", N(h), "\" ", V(attributes));
    if (escaped_title.empty()) {
      body_.append("/>\n");
    } else {
      absl::StrAppend(&body_, "><title>", V(escaped_title),
                      "</title></rect>\n");
    }
  }

  void Line(Centi x1, Centi y1, Centi x2, Centi y2,
            std::string_view attributes) {
    absl::StrAppend(&body_, "<line x1=\"", N(x1), "\" y1=\"", N(y1), "\" x2=\"",
                    N(x2), "\" y2=\"", N(y2), "\" ", V(attributes), "/>\n");
  }

  std::string Finish(Centi height, std::string_view escaped_title,
                     std::string_view defs = "") const {
    const std::string w = N(Px(width_));
    const std::string h = N(height);
    std::string out;
    out.reserve(body_.size() + 1024);
    absl::StrAppend(&out,
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
                    "width=\"",
                    w, "\" height=\"", h, "\" viewBox=\"0 0 ", w, " ", h,
                    "\">\n<title>", V(escaped_title), "</title>\n",
                    "<style type=\"text/css\">", V(kStyle), "</style>\n");
    if (!defs.empty()) absl::StrAppend(&out, "<defs>", V(defs), "</defs>\n");
    absl::StrAppend(&out, "<rect x=\"0\" y=\"0\" width=\"", w, "\" height=\"",
                    h, "\" fill=\"#ffffff\"/>\n", body_, "</svg>\n");
    return out;
  }

 private:
  int width_;
  std::string body_;
};

constexpr Centi kMargin = Px(16);

// The title and subtitle; returns the y below them.
// `text` broken at spaces into lines at most `max_width` wide (a word
// longer than a line is cut with "…"), each escaped.
std::vector<std::string> WrapText(std::string_view text, Centi max_width,
                                  int64_t font_px) {
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    const std::string candidate =
        line.empty() ? std::string(word) : absl::StrCat(line, " ", V(word));
    if (line.empty() || TextWidth(candidate, font_px) <= max_width) {
      line = candidate;
    } else {
      lines.push_back(FitTextAlways(line, max_width, font_px));
      line = std::string(word);
    }
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(FitTextAlways(line, max_width, font_px));
  return lines;
}

// The title and the subtitle (wrapped); returns the y below them.
Centi DrawHeading(Document& doc, std::string_view title,
                  std::string_view subtitle) {
  doc.Text(kMargin, Px(26), "title",
           FitTextAlways(title, doc.width() - 2 * kMargin, 16, true));
  Centi y = Px(44);
  for (const std::string& line :
       WrapText(subtitle, doc.width() - 2 * kMargin, 12)) {
    doc.Text(kMargin, y, "sub", line);
    y += Px(16);
  }
  return y - Px(6);
}

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
               std::string_view caption) {
  const int64_t max_ticks = std::max<int64_t>(2, (x1 - x0) / Px(75));
  const int64_t range = std::max<int64_t>(hi - lo, 1);
  const int64_t step = NiceStep(range, max_ticks);
  int64_t first = lo / step * step;
  if (first < lo) first = SaturatingAdd(first, step);
  std::string grid;
  for (int64_t t = first; t <= hi; t = SaturatingAdd(t, step)) {
    const Centi x = x0 + Scale(t, lo, hi, x1 - x0);
    if (grid_top < y) doc.Line(x, grid_top, x, y, "class=\"grid\"");
    doc.Line(x, y, x, y + Px(4), "class=\"tick\"");
    const std::string label = TickLabel(t, step, kind);
    // A label centred on the last tick may not fit: end it at the tick.
    const bool at_edge = x + TextWidth(label, 11) / 2 > doc.width() - Px(2);
    doc.Text(x, y + Px(16), "axis", Escape(label), at_edge ? "end" : "middle");
    if (t > std::numeric_limits<int64_t>::max() - step) break;
  }
  doc.Line(x0, y, x1, y, "class=\"tick\"");
  if (!caption.empty()) {
    doc.Text((x0 + x1) / 2, y + Px(32), "axis", Escape(caption), "middle");
    return y + Px(40);
  }
  return y + Px(24);
}

// ---------------------------------------------------------------------------
// Colours.

struct Colour {
  std::string_view fill;
  bool dark;  // white text reads better on it
};

// Tableau 10 without its grey (kept for spans without a phase), then three
// lighter companions: distinct for up to 12 phases.
constexpr std::array<Colour, 12> kPalette = {{
    {"#4e79a7", true},
    {"#f28e2b", false},
    {"#e15759", true},
    {"#76b7b2", false},
    {"#59a14f", true},
    {"#edc948", false},
    {"#b07aa1", true},
    {"#ff9da7", false},
    {"#9c755f", true},
    {"#a0cbe8", false},
    {"#ffbe7d", false},
    {"#8cd17d", false},
}};
constexpr Colour kNoPhaseColour = {"#bab0ac", false};

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 14695981039346656037ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

// Each phase's palette slot: its hash picks a preferred slot, and phases
// (in sorted order) take the first free slot from there. So a phase keeps
// its colour from figure to figure unless it collides, and the phases of one
// figure differ while there are at most 12.
std::vector<std::pair<std::string, size_t>> AssignColours(
    std::vector<std::string> phases) {
  std::sort(phases.begin(), phases.end());
  phases.erase(std::unique(phases.begin(), phases.end()), phases.end());
  std::array<bool, kPalette.size()> used = {};
  std::vector<std::pair<std::string, size_t>> out;
  for (std::string& phase : phases) {
    const size_t preferred = Fnv1a(phase) % kPalette.size();
    size_t slot = preferred;
    for (size_t k = 0; k < kPalette.size(); ++k) {
      const size_t candidate = (preferred + k) % kPalette.size();
      if (!used[candidate]) {
        slot = candidate;
        break;
      }
    }
    used[slot] = true;
    out.emplace_back(std::move(phase), slot);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Timeline.

constexpr Centi kRowHeight = Px(18);
constexpr Centi kRowPitch = Px(20);
constexpr Centi kLanePadding = Px(6);

std::string ThreadLabel(const ThreadInfo& thread) {
  return thread.name.empty() ? absl::StrCat("thread-", thread.os_tid)
                             : thread.name;
}

struct TimelineSpan {
  uint32_t index = 0;  // into capture.spans
  int64_t start = 0;   // clipped to the window
  int64_t end = 0;
  uint32_t row = 0;  // depth among same-thread ancestors
};

}  // namespace

std::string PlotTimeline(const Capture& capture,
                         const TimelineOptions& options) {
  const int width = std::clamp(options.width, kMinPlotWidth, kMaxPlotWidth);
  Document doc(width);
  const std::vector<Span>& spans = capture.spans;
  const size_t n = spans.size();

  // Span index by id (first span wins for duplicate ids).
  std::vector<std::pair<uint64_t, uint32_t>> by_id;
  by_id.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    by_id.emplace_back(spans[i].id, static_cast<uint32_t>(i));
  }
  std::stable_sort(
      by_id.begin(), by_id.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  const auto find = [&](uint64_t id) -> uint32_t {
    if (id == 0) return kNone;
    auto it = std::lower_bound(
        by_id.begin(), by_id.end(), id,
        [](const auto& entry, uint64_t key) { return entry.first < key; });
    return it != by_id.end() && it->first == id ? it->second : kNone;
  };
  std::vector<uint32_t> parent(n, kNone);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t p = find(spans[i].parent_id);
    if (p != static_cast<uint32_t>(i)) parent[i] = p;
  }

  // Row within the lane: the number of same-thread ancestors. A parent chain
  // that loops (a broken capture) is cut where it closes.
  constexpr uint32_t kUnknown = std::numeric_limits<uint32_t>::max();
  constexpr uint32_t kVisiting = kUnknown - 1;
  std::vector<uint32_t> row(n, kUnknown);
  std::vector<uint32_t> chain;
  for (size_t i = 0; i < n; ++i) {
    chain.clear();
    uint32_t j = static_cast<uint32_t>(i);
    uint32_t base = 0;
    while (true) {
      if (row[j] != kUnknown && row[j] != kVisiting) {
        base = row[j] + 1;
        break;
      }
      if (row[j] == kVisiting) {  // a cycle: treat j's child as a root
        base = 0;
        break;
      }
      row[j] = kVisiting;
      chain.push_back(j);
      const uint32_t p = parent[j];
      if (p == kNone || spans[p].thread != spans[j].thread) {
        base = 0;
        break;
      }
      j = p;
    }
    for (size_t k = chain.size(); k-- > 0;) {
      row[chain[k]] = base;
      ++base;
    }
  }

  // The window.
  int64_t last_end = capture.window_ns;
  int64_t first_start = 0;
  for (const Span& span : spans) {
    last_end = std::max(last_end, std::max(span.end_ns, span.start_ns));
    first_start = std::min(first_start, span.start_ns);
  }
  const int64_t lo = options.start_ns.value_or(first_start);
  int64_t hi = options.end_ns.value_or(last_end);
  if (hi <= lo) hi = SaturatingAdd(lo, 1);

  // Visible spans: inside the window, on a known thread.
  std::vector<TimelineSpan> visible;
  for (size_t i = 0; i < n; ++i) {
    const Span& span = spans[i];
    if (span.thread >= capture.threads.size()) continue;
    const int64_t end = std::max(span.end_ns, span.start_ns);
    if (end < lo || span.start_ns > hi) continue;
    visible.push_back({static_cast<uint32_t>(i), std::max(span.start_ns, lo),
                       std::min(end, hi), row[i]});
  }
  const size_t in_window = visible.size();
  if (visible.size() > options.max_spans) {
    const auto longer = [&](const TimelineSpan& a, const TimelineSpan& b) {
      const int64_t da = a.end - a.start;
      const int64_t db = b.end - b.start;
      if (da != db) return da > db;
      return a.index < b.index;
    };
    std::nth_element(
        visible.begin(),
        visible.begin() + static_cast<std::ptrdiff_t>(options.max_spans),
        visible.end(), longer);
    visible.resize(options.max_spans);
  }

  const size_t drawn_before_lane_limit = visible.size();

  // Lanes: threads with a visible span, by (sort_index, capture order).
  std::vector<uint32_t> lane_threads;
  {
    std::vector<bool> has(capture.threads.size(), false);
    for (const TimelineSpan& v : visible) has[spans[v.index].thread] = true;
    for (uint32_t t = 0; t < capture.threads.size(); ++t) {
      if (has[t]) lane_threads.push_back(t);
    }
    std::stable_sort(
        lane_threads.begin(), lane_threads.end(), [&](uint32_t a, uint32_t b) {
          return capture.threads[a].sort_index < capture.threads[b].sort_index;
        });
  }
  // Too many lanes (thousands of short-lived threads): keep the busiest, by
  // the time their drawn root-row spans cover, ties by lane order.
  const size_t threads_with_spans = lane_threads.size();
  const size_t max_threads = std::max<size_t>(options.max_threads, 1);
  if (lane_threads.size() > max_threads) {
    std::vector<int64_t> busy(capture.threads.size(), 0);
    for (const TimelineSpan& v : visible) {
      if (v.row == 0) {
        int64_t& total = busy[spans[v.index].thread];
        total = SaturatingAdd(total, v.end - v.start);
      }
    }
    std::vector<uint32_t> by_busy = lane_threads;
    std::stable_sort(by_busy.begin(), by_busy.end(),
                     [&](uint32_t a, uint32_t b) { return busy[a] > busy[b]; });
    std::vector<bool> keep(capture.threads.size(), false);
    for (size_t k = 0; k < max_threads; ++k) keep[by_busy[k]] = true;
    std::erase_if(lane_threads, [&](uint32_t t) { return !keep[t]; });
    std::erase_if(visible, [&](const TimelineSpan& v) {
      return !keep[spans[v.index].thread];
    });
  }
  std::vector<uint32_t> lane_of(capture.threads.size(), 0);
  for (uint32_t l = 0; l < lane_threads.size(); ++l) {
    lane_of[lane_threads[l]] = l;
  }
  std::vector<uint32_t> lane_rows(lane_threads.size(), 1);
  for (const TimelineSpan& v : visible) {
    uint32_t& rows = lane_rows[lane_of[spans[v.index].thread]];
    rows = std::max(rows, v.row + 1);
  }
  std::sort(visible.begin(), visible.end(),
            [&](const TimelineSpan& a, const TimelineSpan& b) {
              const uint32_t la = lane_of[spans[a.index].thread];
              const uint32_t lb = lane_of[spans[b.index].thread];
              if (la != lb) return la < lb;
              if (a.row != b.row) return a.row < b.row;
              if (a.start != b.start) return a.start < b.start;
              return a.index < b.index;
            });

  // Phases and colours.
  const auto site_of = [&](const Span& span) -> const Site* {
    return span.site < capture.sites.size() ? &capture.sites[span.site]
                                            : nullptr;
  };
  std::vector<std::string> phases;
  bool any_without_phase = false;
  bool any_exception = false;
  bool any_unfinished = false;
  bool any_cross_thread = false;
  std::vector<bool> drawn(n, false);
  for (const TimelineSpan& v : visible) drawn[v.index] = true;
  for (const TimelineSpan& v : visible) {
    const Span& span = spans[v.index];
    const Site* site = site_of(span);
    if (site == nullptr || site->phase.empty()) {
      any_without_phase = true;
    } else {
      phases.push_back(site->phase);
    }
    any_exception = any_exception || (span.flags & kSpanException) != 0;
    any_unfinished = any_unfinished || (span.flags & kSpanUnfinished) != 0;
    const uint32_t p = parent[v.index];
    if (p != kNone && spans[p].thread != span.thread && drawn[p]) {
      any_cross_thread = true;
    }
  }
  const std::vector<std::pair<std::string, size_t>> colours =
      AssignColours(std::move(phases));
  const auto colour_of = [&](const Site* site) -> const Colour& {
    if (site == nullptr || site->phase.empty()) return kNoPhaseColour;
    auto it = std::lower_bound(colours.begin(), colours.end(), site->phase,
                               [](const auto& entry, const std::string& key) {
                                 return entry.first < key;
                               });
    return kPalette[it->second];
  };

  // Heading.
  std::string subtitle =
      absl::StrCat(capture.spans.size(),
                   capture.spans.size() == 1 ? " span on " : " spans on ",
                   capture.threads.size(),
                   capture.threads.size() == 1 ? " thread" : " threads",
                   ", window ", FormatDuration(capture.window_ns));
  if (!capture.clock.empty())
    absl::StrAppend(&subtitle, ", ", capture.clock, " clock");
  if (options.start_ns.has_value() || options.end_ns.has_value()) {
    absl::StrAppend(&subtitle, "; showing ", FormatDuration(lo), " to ",
                    FormatDuration(hi));
  }
  if (drawn_before_lane_limit < in_window) {
    absl::StrAppend(&subtitle, "; the ", drawn_before_lane_limit,
                    " longest of ", in_window, " spans drawn");
  }
  if (lane_threads.size() < threads_with_spans) {
    absl::StrAppend(&subtitle, "; the ", lane_threads.size(), " busiest of ",
                    threads_with_spans, " threads drawn (",
                    drawn_before_lane_limit - visible.size(),
                    " spans left out)");
  }
  if (capture.dropped_events > 0) {
    absl::StrAppend(&subtitle, "; ", capture.dropped_events,
                    " dropped by the cap");
  }
  const std::string process =
      capture.process_name.empty() ? "spanprof" : capture.process_name;
  Centi y = DrawHeading(doc, absl::StrCat(process, " \xE2\x80\x94 timeline"),
                        subtitle);

  // Legend.
  std::vector<std::string> legend;
  std::vector<std::string> legend_swatch;
  for (const auto& [phase, slot] : colours) {
    legend.push_back(phase);
    legend_swatch.push_back(
        absl::StrCat("fill=\"", V(kPalette[slot].fill), "\""));
  }
  if (any_without_phase) {
    legend.push_back("(no phase)");
    legend_swatch.push_back(
        absl::StrCat("fill=\"", V(kNoPhaseColour.fill), "\""));
  }
  if (any_exception) {
    legend.push_back("left by an exception");
    legend_swatch.push_back(
        "fill=\"#ffffff\" stroke=\"#d62728\" stroke-width=\"2\"");
  }
  if (any_unfinished) {
    legend.push_back("unfinished at stop");
    legend_swatch.push_back(
        "fill=\"#ffffff\" stroke=\"#333333\" stroke-width=\"1.5\" "
        "stroke-dasharray=\"3 2\"");
  }
  const size_t arrow_item = legend.size();
  if (any_cross_thread) {
    legend.push_back("parent on another thread");
    legend_swatch.emplace_back();
  }
  y = DrawLegend(doc, y + Px(6), legend, [&](size_t i, Centi x, Centi top) {
    if (i == arrow_item) {
      absl::StrAppend(&doc.body(), "<path d=\"M", N(x), " ", N(top + Px(1)),
                      " C", N(x + Px(8)), " ", N(top + Px(1)), " ",
                      N(x + Px(4)), " ", N(top + Px(11)), " ", N(x + Px(11)),
                      " ", N(top + Px(11)),
                      "\" fill=\"none\" stroke=\"#444444\" "
                      "stroke-width=\"1.2\" marker-end=\"url(#arrow)\"/>\n");
      return;
    }
    doc.Rect(x, top, Px(12), Px(12),
             absl::StrCat("rx=\"2\" ", legend_swatch[i]));
  });
  y += Px(6);

  // Geometry.
  Centi label_width = Px(90);
  for (uint32_t t : lane_threads) {
    label_width =
        std::max(label_width,
                 TextWidth(ThreadLabel(capture.threads[t]), 12, true) + Px(16));
  }
  label_width = std::min(label_width, Px(220));
  const Centi x0 = kMargin + label_width;
  const Centi x1 = doc.width() - kMargin;
  const Centi plot_width = x1 - x0;
  const auto x_of = [&](int64_t t) {
    return x0 + Scale(t, lo, hi, plot_width);
  };

  std::vector<Centi> lane_top(lane_threads.size(), 0);
  const Centi lanes_top = y;
  for (size_t l = 0; l < lane_threads.size(); ++l) {
    lane_top[l] = y;
    y += 2 * kLanePadding + static_cast<Centi>(lane_rows[l]) * kRowPitch;
  }
  if (lane_threads.empty()) {
    doc.Text(x0, y + Px(20), "note", Escape("no spans in this window"));
    y += Px(32);
  }
  const Centi lanes_bottom = y;

  // Lane backgrounds and labels, then the axis (its grid lies over the
  // backgrounds and under the spans).
  for (size_t l = 0; l < lane_threads.size(); ++l) {
    const Centi h =
        2 * kLanePadding + static_cast<Centi>(lane_rows[l]) * kRowPitch;
    doc.Rect(kMargin, lane_top[l], doc.width() - 2 * kMargin, h,
             l % 2 == 0 ? "fill=\"#f4f5f7\"" : "fill=\"#fbfbfc\"");
    const ThreadInfo& thread = capture.threads[lane_threads[l]];
    doc.Text(
        kMargin + Px(6), lane_top[l] + kLanePadding + Px(13), "lane",
        FitTextAlways(ThreadLabel(thread), label_width - Px(12), 12, true));
    if (!thread.name.empty() && lane_rows[l] >= 2) {
      doc.Text(kMargin + Px(6), lane_top[l] + kLanePadding + Px(27), "tid",
               Escape(absl::StrCat("tid ", thread.os_tid)));
    }
  }
  const Centi axis_y = std::max(lanes_bottom, lanes_top) + Px(4);
  const Centi below_axis =
      DrawAxis(doc, x0, x1, axis_y, lanes_top, lo, hi, ValueKind::kDuration,
               "time since session start");

  const auto row_top = [&](uint32_t lane, uint32_t r) {
    return lane_top[lane] + kLanePadding + static_cast<Centi>(r) * kRowPitch;
  };
  std::vector<Centi> span_x(n, 0);
  std::vector<Centi> span_w(n, 0);
  for (const TimelineSpan& v : visible) {
    span_x[v.index] = x_of(v.start);
    span_w[v.index] = std::max<Centi>(x_of(v.end) - span_x[v.index], Px(1));
  }

  // Cross-thread parent links: from the parent's row at the child's start
  // to the child's left edge, drawn first so that spans cover where they
  // cross other lanes.
  for (const TimelineSpan& v : visible) {
    const Span& span = spans[v.index];
    const uint32_t p = parent[v.index];
    if (p == kNone || spans[p].thread == span.thread || !drawn[p]) continue;
    const uint32_t child_lane = lane_of[span.thread];
    const uint32_t parent_lane = lane_of[spans[p].thread];
    const Centi child_x = span_x[v.index];
    const Centi from_x = std::clamp(child_x, span_x[p], span_x[p] + span_w[p]);
    const Centi parent_top = row_top(parent_lane, row[p]);
    const bool down = parent_lane < child_lane;
    const Centi from_y = down ? parent_top + kRowHeight : parent_top;
    const Centi child_top = row_top(child_lane, v.row);
    const Centi to_y = down ? child_top : child_top + kRowHeight;
    const Centi mid_y = (from_y + to_y) / 2;
    absl::StrAppend(&doc.body(), "<path d=\"M", N(from_x), " ", N(from_y), " C",
                    N(from_x), " ", N(mid_y), " ", N(child_x), " ", N(mid_y),
                    " ", N(child_x), " ", N(to_y),
                    "\" fill=\"none\" stroke=\"#444444\" stroke-width=\"1.2\" "
                    "stroke-opacity=\"0.85\" marker-end=\"url(#arrow)\"/>\n");
  }

  // Spans, over the links.
  for (const TimelineSpan& v : visible) {
    const Span& span = spans[v.index];
    const Site* site = site_of(span);
    const uint32_t lane = lane_of[span.thread];
    const Centi x = span_x[v.index];
    const Centi w = span_w[v.index];
    const Colour& colour = colour_of(site);
    std::string attributes =
        absl::StrCat("rx=\"2\" fill=\"", V(colour.fill), "\"");
    if ((span.flags & kSpanException) != 0) {
      attributes.append(" stroke=\"#d62728\" stroke-width=\"2\"");
    } else if ((span.flags & kSpanUnfinished) != 0) {
      attributes.append(
          " stroke=\"#333333\" stroke-width=\"1.5\" stroke-dasharray=\"3 2\"");
    } else if (w >= Px(3)) {
      attributes.append(" stroke=\"#ffffff\" stroke-width=\"0.6\"");
    }
    RowKey key;
    if (site != nullptr)
      key = {site->name, site->phase, site->module, site->activity};
    std::string tooltip = absl::StrCat(
        site != nullptr ? RowLabel(key) : "(unknown site)", " \xE2\x80\x94 ",
        FormatDuration(std::max<int64_t>(span.end_ns - span.start_ns, 0)),
        " from ", FormatDuration(span.start_ns), ", ", span.heartbeats,
        span.heartbeats == 1 ? " heartbeat" : " heartbeats");
    if ((span.flags & kSpanException) != 0) tooltip.append(", exception");
    if ((span.flags & kSpanUnfinished) != 0) tooltip.append(", unfinished");
    if ((span.flags & kSpanRerooted) != 0) tooltip.append(", re-rooted");
    const Centi top = row_top(lane, v.row);
    doc.Rect(x, top, w, kRowHeight, attributes, Escape(tooltip));
    if (site != nullptr && w >= Px(14)) {
      if (std::optional<std::string> label =
              FitText(site->name, w - Px(8), 11, 3)) {
        doc.Text(x + Px(4), top + Px(13), colour.dark ? "span on-dark" : "span",
                 *label);
      }
    }
  }

  constexpr std::string_view kArrowDefs =
      "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
      "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\" "
      "markerUnits=\"userSpaceOnUse\"><path d=\"M0 0 L10 5 L0 10 z\" "
      "fill=\"#444444\"/></marker>";
  return doc.Finish(below_axis + Px(8),
                    Escape(absl::StrCat(process, " \xE2\x80\x94 timeline")),
                    kArrowDefs);
}

namespace {

// ---------------------------------------------------------------------------
// Bar charts (breakdown and compare) share a row layout: a label column, a
// bar area scaled from 0, and values written after the bars.

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

std::string MoreRowsNote(size_t shown, size_t total) {
  return absl::StrCat(total - shown,
                      total - shown == 1 ? " more row" : " more rows",
                      " not shown (", total, " in all)");
}

}  // namespace

std::string PlotBreakdown(const Summary& summary,
                          const BreakdownOptions& options) {
  const int width = std::clamp(options.width, kMinPlotWidth, kMaxPlotWidth);
  Document doc(width);
  const size_t total_rows = summary.rows.size();
  const size_t shown = options.max_rows == 0
                           ? total_rows
                           : std::min(total_rows, options.max_rows);

  const std::string process =
      summary.process_name.empty() ? "spanprof" : summary.process_name;
  const std::string title =
      absl::StrCat(process, " \xE2\x80\x94 inclusive and self time per row");
  std::string subtitle = absl::StrCat(
      summary.event_count, summary.event_count == 1 ? " span, " : " spans, ",
      total_rows, total_rows == 1 ? " row, " : " rows, ", summary.thread_count,
      summary.thread_count == 1 ? " thread" : " threads", "; window ",
      FormatDuration(summary.window_ns), ", recorded thread time ",
      FormatDuration(summary.recorded_thread_time_ns));
  if (!summary.complete || summary.dropped_events > 0 ||
      summary.unfinished_events > 0 || !summary.validation_issues.empty()) {
    absl::StrAppend(&subtitle, "; incomplete capture");
  }
  Centi y = DrawHeading(doc, title, subtitle);

  constexpr std::string_view kInclusiveFill = "#a0cbe8";
  constexpr std::string_view kSelfFill = "#2f5d8c";
  y = DrawLegend(
      doc, y + Px(6),
      {"inclusive (total) time", "self time (excluding same-thread children)"},
      [&](size_t i, Centi x, Centi top) {
        doc.Rect(x, top, Px(12), Px(12),
                 absl::StrCat("rx=\"2\" fill=\"",
                              V(i == 0 ? kInclusiveFill : kSelfFill), "\""));
      });
  y += Px(8);

  std::vector<std::string> labels;
  std::vector<std::string> inclusive_text;
  std::vector<std::string> self_text;
  Centi widest_value = 0;
  int64_t max = 1;
  for (size_t r = 0; r < shown; ++r) {
    const Row& row = summary.rows[r];
    labels.push_back(row.label.empty() ? RowLabel(row.key) : row.label);
    inclusive_text.push_back(absl::StrCat(FormatDuration(row.total_ns), " in ",
                                          row.calls,
                                          row.calls == 1 ? " call" : " calls"));
    self_text.push_back(absl::StrCat(FormatDuration(row.self_ns), " self (",
                                     row.share_permille / 10, ".",
                                     row.share_permille % 10, "%)"));
    widest_value = std::max({widest_value, TextWidth(inclusive_text.back(), 11),
                             TextWidth(self_text.back(), 11)});
    max = std::max({max, row.total_ns, row.self_ns});
  }
  const BarLayout layout = LayoutBars(doc, labels, widest_value, max);

  constexpr Centi kBar = Px(12);
  constexpr Centi kRow = Px(36);
  const Centi rows_top = y;
  for (size_t r = 0; r < shown; ++r) {
    const Centi top = rows_top + static_cast<Centi>(r) * kRow;
    if (r % 2 == 0) {
      doc.Rect(kMargin, top, doc.width() - 2 * kMargin, kRow,
               "fill=\"#f4f5f7\"");
    }
  }
  const Centi rows_bottom = rows_top + static_cast<Centi>(shown) * kRow;
  y = DrawAxis(doc, layout.x0, layout.x1, rows_bottom + Px(4), rows_top, 0,
               layout.max, ValueKind::kDuration, "");
  for (size_t r = 0; r < shown; ++r) {
    const Row& row = summary.rows[r];
    const Centi top = rows_top + static_cast<Centi>(r) * kRow;
    doc.Text(layout.label_x + Px(4), top + Px(22), "label",
             FitTextAlways(labels[r], layout.label_width - Px(10), 12));
    const Centi inclusive_end = BarEnd(layout, row.total_ns);
    const Centi self_end = BarEnd(layout, row.self_ns);
    doc.Rect(layout.x0, top + Px(5),
             std::max<Centi>(inclusive_end - layout.x0, Px(1)), kBar,
             absl::StrCat("fill=\"", V(kInclusiveFill), "\""),
             Escape(absl::StrCat(labels[r], ": ", inclusive_text[r])));
    doc.Rect(layout.x0, top + Px(5) + kBar + Px(2),
             std::max<Centi>(self_end - layout.x0, Px(1)), kBar,
             absl::StrCat("fill=\"", V(kSelfFill), "\""),
             Escape(absl::StrCat(labels[r], ": ", self_text[r])));
    doc.Text(inclusive_end + Px(6), top + Px(15), "value",
             Escape(inclusive_text[r]));
    doc.Text(self_end + Px(6), top + Px(29), "value", Escape(self_text[r]));
  }
  if (shown == 0) {
    doc.Text(kMargin, y + Px(14), "note", Escape("the summary has no rows"));
    y += Px(22);
  }
  if (shown < total_rows) {
    doc.Text(kMargin, y + Px(10), "note",
             Escape(MoreRowsNote(shown, total_rows)));
    y += Px(18);
  }
  return doc.Finish(y + Px(8), Escape(title));
}

namespace {

ValueKind MetricKind(CompareMetric metric) {
  switch (metric) {
    case CompareMetric::kTotalHeartbeats:
    case CompareMetric::kSelfHeartbeats:
    case CompareMetric::kAllocCount:
      return ValueKind::kCount;
    case CompareMetric::kAllocBytes:
      return ValueKind::kBytes;
    default:
      return ValueKind::kDuration;
  }
}

// Basis points as a percentage: 1000 → "10%", 250 → "2.5%", 5 → "0.05%".
std::string FormatBps(int64_t bps) {
  std::string out = absl::StrCat(bps / 100);
  const int64_t fraction = bps % 100;
  if (fraction != 0) {
    out.push_back('.');
    out.push_back(static_cast<char>('0' + fraction / 10));
    if (fraction % 10 != 0)
      out.push_back(static_cast<char>('0' + fraction % 10));
  }
  out.push_back('%');
  return out;
}

// The largest |Δ| still within tolerance of `base`:
// max(absolute, floor(bps·base/10000)), saturated.
int64_t ToleranceAround(int64_t base, const ComparePolicy& policy) {
  const int64_t b = std::max<int64_t>(base, 0);
  const int64_t bps = std::max<int64_t>(policy.relative_tolerance_bps, 0);
  int64_t relative = 0;
  int64_t whole = 0;
  if (__builtin_mul_overflow(b / 10000, bps, &whole)) {
    relative = std::numeric_limits<int64_t>::max();
  } else {
    int64_t part = 0;
    if (__builtin_mul_overflow(b % 10000, bps, &part)) {
      relative = std::numeric_limits<int64_t>::max();
    } else {
      relative = SaturatingAdd(whole, part / 10000);
    }
  }
  return std::max(std::max<int64_t>(policy.absolute_tolerance_ns, 0), relative);
}

struct StatusStyle {
  std::string_view fill;
  std::string_view text;  // a darker shade for the status word
  std::string_view name;
};

StatusStyle StyleOf(RowStatus status) {
  switch (status) {
    case RowStatus::kRegressed:
      return {"#d62728", "#b01c1d", "regressed"};
    case RowStatus::kImproved:
      return {"#2ca02c", "#1f7a1f", "improved"};
    case RowStatus::kWithin:
      return {"#9e9e9e", "#666666", "within tolerance"};
    case RowStatus::kNew:
      return {"#1f77b4", "#165a8a", "new"};
    case RowStatus::kMissing:
      return {"#ff7f0e", "#c15f00", "missing"};
    case RowStatus::kNotMeasured:
      return {"#dddddd", "#888888", "not measured"};
  }
  return {"#9e9e9e", "#666666", ""};
}

std::string FormatChange(const ComparisonRow& row, ValueKind kind) {
  if (!row.delta.has_value()) return "";
  if (*row.delta == 0) return "no change";
  std::string delta =
      absl::StrCat(*row.delta > 0 ? "+" : "", FormatValue(*row.delta, kind));
  if (!row.change_bps.has_value()) return delta;
  // One decimal of a percent, truncated toward zero: 5023 bps → "+50.2%".
  const int64_t bps = *row.change_bps;
  const uint64_t magnitude =
      bps < 0 ? ~static_cast<uint64_t>(bps) + 1 : static_cast<uint64_t>(bps);
  return absl::StrCat(bps < 0 ? "-" : "+", magnitude / 100, ".",
                      magnitude % 100 / 10, "% (", delta, ")");
}

}  // namespace

std::string PlotCompare(const Comparison& comparison,
                        const ComparePlotOptions& options) {
  const int width = std::clamp(options.width, kMinPlotWidth, kMaxPlotWidth);
  Document doc(width);
  const ComparePolicy& policy = comparison.policy;
  const ValueKind kind = MetricKind(policy.metric);
  const std::string_view metric = CompareMetricName(policy.metric);
  const size_t total_rows = comparison.rows.size();
  const size_t shown = options.max_rows == 0
                           ? total_rows
                           : std::min(total_rows, options.max_rows);

  const std::string title = absl::StrCat(
      "Comparison on ", V(metric), ": regression when \xCE\x94 > ",
      FormatValue(policy.absolute_tolerance_ns, kind), " and \xCE\x94 > ",
      FormatBps(policy.relative_tolerance_bps), " of base");
  const ComparisonCounts& c = comparison.counts;
  std::string subtitle;
  if (!comparison.base_path.empty() || !comparison.candidate_path.empty()) {
    absl::StrAppend(&subtitle, "base ", V(BaseName(comparison.base_path)),
                    " vs candidate ", V(BaseName(comparison.candidate_path)),
                    "; ");
  }
  absl::StrAppend(&subtitle, c.regressed, " regressed, ", c.improved,
                  " improved, ", c.within, " within, ", c.new_keys, " new, ",
                  c.missing, " missing");
  if (c.not_measured > 0)
    absl::StrAppend(&subtitle, ", ", c.not_measured, " not measured");
  absl::StrAppend(&subtitle, " \xE2\x86\x92 ",
                  comparison.passed ? "PASS" : "FAIL");
  Centi y = DrawHeading(doc, title, subtitle);

  // Legend: baseline, candidate by status (all of them, so the key is the
  // same in every figure), and the tolerance band.
  const std::vector<RowStatus> statuses = {
      RowStatus::kRegressed, RowStatus::kImproved, RowStatus::kWithin,
      RowStatus::kNew, RowStatus::kMissing};
  std::vector<std::string> legend = {"base"};
  for (RowStatus status : statuses) {
    legend.push_back(absl::StrCat("candidate: ", V(StyleOf(status).name)));
  }
  legend.push_back("within tolerance of base");
  constexpr std::string_view kBaseAttributes =
      "fill=\"#ffffff\" stroke=\"#555555\" stroke-width=\"1\"";
  constexpr std::string_view kBandAttributes =
      "fill=\"#f2c94c\" fill-opacity=\"0.35\"";
  y = DrawLegend(doc, y + Px(6), legend, [&](size_t i, Centi x, Centi top) {
    if (i == 0) {
      doc.Rect(x + Px(1) / 2, top + Px(1) / 2, Px(11), Px(11), kBaseAttributes);
    } else if (i <= statuses.size()) {
      doc.Rect(x, top, Px(12), Px(12),
               absl::StrCat("fill=\"", V(StyleOf(statuses[i - 1]).fill), "\""));
    } else {
      doc.Rect(x, top, Px(12), Px(12), kBandAttributes);
      doc.Line(x, top, x, top + Px(12),
               "stroke=\"#b8860b\" stroke-dasharray=\"2 2\"");
      doc.Line(x + Px(12), top, x + Px(12), top + Px(12),
               "stroke=\"#b8860b\" stroke-dasharray=\"2 2\"");
    }
  });
  y += Px(8);

  std::vector<std::string> labels;
  std::vector<std::string> base_text;
  std::vector<std::string> candidate_text;
  Centi widest_value = 0;
  int64_t max = 1;
  for (size_t r = 0; r < shown; ++r) {
    const ComparisonRow& row = comparison.rows[r];
    labels.push_back(row.label.empty() ? RowLabel(row.key) : row.label);
    const StatusStyle style = StyleOf(row.status);
    base_text.push_back(row.base.has_value()
                            ? FormatValue(*row.base, kind)
                            : std::string(row.status == RowStatus::kNew
                                              ? "not in base"
                                              : "not measured"));
    std::string cand =
        row.candidate.has_value()
            ? FormatValue(*row.candidate, kind)
            : std::string(row.status == RowStatus::kMissing ? "not in candidate"
                                                            : "not measured");
    const std::string change = FormatChange(row, kind);
    if (!change.empty()) absl::StrAppend(&cand, ", ", change);
    if (row.status != RowStatus::kMissing &&
        row.status != RowStatus::kNotMeasured) {
      absl::StrAppend(&cand, ": ", V(style.name));
    }
    candidate_text.push_back(std::move(cand));
    widest_value = std::max({widest_value, TextWidth(base_text.back(), 11),
                             TextWidth(candidate_text.back(), 11, true)});
    if (row.base.has_value()) {
      max = std::max(
          max, SaturatingAdd(*row.base, ToleranceAround(*row.base, policy)));
    }
    if (row.candidate.has_value()) max = std::max(max, *row.candidate);
  }
  const BarLayout layout = LayoutBars(doc, labels, widest_value, max);

  constexpr Centi kBar = Px(11);
  constexpr Centi kRow = Px(36);
  const Centi rows_top = y;
  for (size_t r = 0; r < shown; ++r) {
    const Centi top = rows_top + static_cast<Centi>(r) * kRow;
    if (r % 2 == 0) {
      doc.Rect(kMargin, top, doc.width() - 2 * kMargin, kRow,
               "fill=\"#f4f5f7\"");
    }
  }
  const Centi rows_bottom = rows_top + static_cast<Centi>(shown) * kRow;
  y = DrawAxis(doc, layout.x0, layout.x1, rows_bottom + Px(4), rows_top, 0,
               layout.max, kind, std::string(metric));

  for (size_t r = 0; r < shown; ++r) {
    const ComparisonRow& row = comparison.rows[r];
    const StatusStyle style = StyleOf(row.status);
    const Centi top = rows_top + static_cast<Centi>(r) * kRow;
    const Centi base_top = top + Px(5);
    const Centi candidate_top = base_top + kBar + Px(3);
    doc.Text(layout.label_x + Px(4), top + Px(22), "label",
             FitTextAlways(labels[r], layout.label_width - Px(10), 12));
    if (row.base.has_value()) {
      const int64_t tolerance = ToleranceAround(*row.base, policy);
      const Centi band_lo =
          BarEnd(layout, SaturatingAdd(*row.base, -tolerance));
      const Centi band_hi = BarEnd(layout, SaturatingAdd(*row.base, tolerance));
      const Centi band_top = base_top - Px(2);
      const Centi band_bottom = candidate_top + kBar + Px(2);
      doc.Rect(
          band_lo, band_top, std::max<Centi>(band_hi - band_lo, 0),
          band_bottom - band_top, kBandAttributes,
          Escape(absl::StrCat(
              labels[r], ": within tolerance from ",
              FormatValue(std::max<int64_t>(*row.base - tolerance, 0), kind),
              " to ", FormatValue(SaturatingAdd(*row.base, tolerance), kind))));
      for (Centi edge : {band_lo, band_hi}) {
        doc.Line(
            edge, band_top, edge, band_bottom,
            "stroke=\"#b8860b\" stroke-width=\"1\" stroke-dasharray=\"2 2\"");
      }
      const Centi base_end = BarEnd(layout, *row.base);
      doc.Rect(layout.x0, base_top + Px(1) / 2,
               std::max<Centi>(base_end - layout.x0, Px(1)), kBar - Px(1),
               kBaseAttributes,
               Escape(absl::StrCat(labels[r], ": ", base_text[r])));
      doc.Text(std::max(base_end, band_hi) + Px(6), base_top + Px(9), "value",
               Escape(base_text[r]));
    } else {
      doc.Text(layout.x0 + Px(6), base_top + Px(9), "value",
               Escape(base_text[r]));
    }
    Centi candidate_end = layout.x0;
    if (row.candidate.has_value()) {
      candidate_end = BarEnd(layout, *row.candidate);
      doc.Rect(layout.x0, candidate_top,
               std::max<Centi>(candidate_end - layout.x0, Px(1)), kBar,
               absl::StrCat("fill=\"", V(style.fill), "\""),
               Escape(absl::StrCat(labels[r], ": ", candidate_text[r])));
    }
    Centi text_x = candidate_end + Px(6);
    if (row.base.has_value()) {
      text_x = std::max(
          text_x,
          BarEnd(layout,
                 SaturatingAdd(*row.base, ToleranceAround(*row.base, policy))) +
              Px(6));
    }
    absl::StrAppend(
        &doc.body(), "<text x=\"", N(text_x), "\" y=\"",
        N(candidate_top + Px(9)),
        "\" class=\"value\" font-weight=\"bold\" style=\"fill:", V(style.text),
        "\">", Escape(candidate_text[r]), "</text>\n");
  }
  if (shown == 0) {
    doc.Text(kMargin, y + Px(14), "note", Escape("no rows to compare"));
    y += Px(22);
  }
  if (shown < total_rows) {
    doc.Text(kMargin, y + Px(10), "note",
             Escape(MoreRowsNote(shown, total_rows)));
    y += Px(18);
  }
  return doc.Finish(y + Px(8), Escape(title));
}

}  // namespace spanprof::analysis
