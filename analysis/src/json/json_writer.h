// json_writer.h — the one small escaping JSON writer of the analysis library
// (private: summary, trace and comparison writers use it).
//
// `JsonWriter` appends strict JSON to a caller-owned `std::string`: every
// character below 0x20 is written as `\u00XX` (so are `"` and `\` escaped),
// integers are written as integers, and a double that is NaN or infinite is
// written as `null` (JSON has no such numbers). It tracks commas and, when
// asked, indentation, so callers only say what to write.
//
// Example:
//
//   std::string out;
//   JsonWriter w(&out, {.indent = 2});
//   w.BeginObject();
//   w.Key("name");
//   w.String("solver.expand");
//   w.Key("alloc_count");
//   w.Null();
//   w.EndObject();
//
// Hot loops may append pre-rendered text with `RawValue()` / `Raw()` and the
// free `Append*` functions below, which share the writer's escaping rules.
#ifndef SPANPROF_ANALYSIS_SRC_JSON_JSON_WRITER_H_
#define SPANPROF_ANALYSIS_SRC_JSON_JSON_WRITER_H_

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spanprof::analysis {

// `AppendJsonString()` appends `s` as a quoted JSON string. Bytes >= 0x80 are
// copied as they are (the input is expected to be UTF-8).
void AppendJsonString(std::string* out, std::string_view s);

// `AppendInt()` / `AppendUint()` append a decimal integer. (Inline: the trace
// writer calls them several times per span.)
inline void AppendInt(std::string* out, int64_t value) {
  char buffer[24];
  const std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, static_cast<size_t>(result.ptr - buffer));
}
inline void AppendUint(std::string* out, uint64_t value) {
  char buffer[24];
  const std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, static_cast<size_t>(result.ptr - buffer));
}

// `AppendDouble()` appends the shortest text that reads back as exactly
// `value`, always with a '.' or an exponent so that readers can tell it from
// an integer (`3.0`, not `3`); NaN and infinities become `null`.
void AppendDouble(std::string* out, double value);

class JsonWriter {
 public:
  struct Options {
    // Spaces per nesting level; 0 writes no indentation.
    int indent = 0;
    // Containers nested less deeply than this put each element on its own
    // line, indented by `indent` spaces per level (the top-level value is at
    // depth 0, so 1 breaks only the top-level container). 0 writes one line.
    int line_depth = 1 << 30;
  };

  // `out` must outlive the writer; the writer only appends to it. Without
  // options the output is compact (one line, no spaces).
  explicit JsonWriter(std::string* out) : JsonWriter(out, Options{0, 0}) {}
  JsonWriter(std::string* out, Options options);

  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();

  // `Key()` writes an object key; the next call writes its value.
  void Key(std::string_view key);

  void String(std::string_view value);
  void Int(int64_t value);
  void Uint(uint64_t value);
  void Bool(bool value);
  void Null();
  // Non-finite values are written as `null`.
  void Double(double value);
  // `OptionalInt()` writes the value, or `null` when absent.
  void OptionalInt(const std::optional<int64_t>& value);

  // `Raw()` writes `json`, which must be one complete JSON value, verbatim.
  void Raw(std::string_view json);

  // `RawValue()` writes the separator before a value and returns the output
  // string, to which the caller must append exactly one JSON value. Used by
  // hot loops that render values with the `Append*` functions directly.
  std::string* RawValue() {
    BeforeValue();
    return out_;
  }

  // `Newline()` ends the document with '\n' (only valid at depth 0).
  void Newline() { out_->push_back('\n'); }

 private:
  static constexpr int kMaxDepth = 64;

  void BeforeValue();
  void Open(char bracket);
  void Close(char bracket);
  void LineBreak(int depth);

  std::string* out_;
  Options options_;
  int depth_ = 0;
  // Per open container: whether it has an element yet.
  bool has_element_[kMaxDepth] = {};
  // True right after Key(): the value needs no separator.
  bool after_key_ = false;
};

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_SRC_JSON_JSON_WRITER_H_
