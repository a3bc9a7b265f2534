// The SVG primitives of svg.h: numbers, text, values, ticks, the document,
// the heading and the axis.
#include "report/svg.h"

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
#include "spanprof/analysis/table.h"

namespace spanprof::analysis::svg {
namespace {

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
  }
  if ((b0 & 0xE0) == 0xC0) {
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

constexpr uint32_t kEllipsis = 0x2026;

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

}  // namespace

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

std::string Escape(const std::vector<uint32_t>& points) {
  std::string out;
  out.reserve(points.size());
  for (uint32_t cp : points) AppendCodePoint(&out, cp);
  return out;
}

std::string Escape(std::string_view text) { return Escape(CodePoints(text)); }

// Estimated rendered width, in centi, of `points` at `font_px`, with 3% to
// spare for hinting.
Centi TextWidth(const std::vector<uint32_t>& points, int64_t font_px,
                bool bold) {
  const std::array<uint16_t, 95>& widths = bold ? kBoldWidths : kRegularWidths;
  int64_t milli_em = 0;
  for (uint32_t cp : points) {
    milli_em += cp >= 0x20 && cp < 0x7F ? widths[cp - 0x20] : 1000;
  }
  return milli_em * font_px * 103 / 1000;
}

Centi TextWidth(std::string_view text, int64_t font_px, bool bold) {
  return TextWidth(CodePoints(text), font_px, bold);
}

// `text` escaped if it fits in `max_width`; else its longest prefix of at
// least `min_points` code points followed by "…" that fits; else nullopt.
std::optional<std::string> FitText(std::string_view text, Centi max_width,
                                   int64_t font_px, size_t min_points,
                                   bool bold) {
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
                          int64_t font_px, bool bold) {
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

void Document::Text(Centi x, Centi y, std::string_view css_class,
                    std::string_view escaped, std::string_view anchor) {
  absl::StrAppend(&body_, "<text x=\"", N(x), "\" y=\"", N(y), "\" class=\"",
                  V(css_class), "\"");
  if (!anchor.empty())
    absl::StrAppend(&body_, " text-anchor=\"", V(anchor), "\"");
  absl::StrAppend(&body_, ">", V(escaped), "</text>\n");
}

void Document::Rect(Centi x, Centi y, Centi w, Centi h,
                    std::string_view attributes,
                    std::string_view escaped_title) {
  absl::StrAppend(&body_, "<rect x=\"", N(x), "\" y=\"", N(y), "\" width=\"",
                  N(w), "\" height=\"", N(h), "\" ", V(attributes));
  if (escaped_title.empty()) {
    body_.append("/>\n");
  } else {
    absl::StrAppend(&body_, "><title>", V(escaped_title), "</title></rect>\n");
  }
}

void Document::Line(Centi x1, Centi y1, Centi x2, Centi y2,
                    std::string_view attributes) {
  absl::StrAppend(&body_, "<line x1=\"", N(x1), "\" y1=\"", N(y1), "\" x2=\"",
                  N(x2), "\" y2=\"", N(y2), "\" ", V(attributes), "/>\n");
}

std::string Document::Finish(Centi height, std::string_view escaped_title,
                             std::string_view defs) const {
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
  absl::StrAppend(&out, "<rect x=\"0\" y=\"0\" width=\"", w, "\" height=\"", h,
                  "\" fill=\"#ffffff\"/>\n", body_, "</svg>\n");
  return out;
}

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

}  // namespace spanprof::analysis::svg
