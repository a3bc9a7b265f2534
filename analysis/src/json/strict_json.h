// strict_json.h — strict reading helpers over simdjson On Demand (private to
// the analysis library).
//
// The readers accept exactly their schema: every object is read with
// `ReadObject()`, which rejects unknown and duplicate keys and reports missing
// ones; scalars are read with `StrictJson`'s typed getters, which check the
// JSON type and, for integers, the exact lexical form (no `1.0`, no `1e3`, no
// values beyond int64). Numbers are taken from their raw text, never through a
// double, so nanosecond values survive exactly.
//
// Paths are built lazily: a `JsonPath` is a chain of stack frames that is only
// rendered (`$.rows[3].p95_ns`) when an error is reported, so reading a large
// trace does not allocate a string per field.
#ifndef SPANPROF_ANALYSIS_SRC_JSON_STRICT_JSON_H_
#define SPANPROF_ANALYSIS_SRC_JSON_STRICT_JSON_H_

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/simdjson_status.h"
#include "spanprof/internal/parse_int.h"

namespace spanprof::analysis::internal {

// `JsonPath` is one step of a JSON path; its parent must outlive it.
class JsonPath {
 public:
  static JsonPath Root() { return JsonPath(); }

  JsonPath Field(std::string_view name) const {
    JsonPath path;
    path.parent_ = this;
    path.field_ = name;
    return path;
  }
  JsonPath Index(size_t index) const {
    JsonPath path;
    path.parent_ = this;
    path.index_ = index;
    path.is_index_ = true;
    return path;
  }

  std::string ToString() const {
    std::string out = parent_ == nullptr ? "$" : parent_->ToString();
    if (parent_ == nullptr) return out;
    if (is_index_) {
      out += Cat("[", index_, "]");
    } else if (IsIdentifier(field_)) {
      out += Cat(".", field_);
    } else {
      out += Cat("[\"", field_, "\"]");
    }
    return out;
  }

 private:
  JsonPath() = default;

  static bool IsIdentifier(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || c == '_';
    });
  }

  const JsonPath* parent_ = nullptr;
  std::string_view field_;
  size_t index_ = 0;
  bool is_index_ = false;
};

// `FieldSpec` names one field of an object and whether it must be present.
struct FieldSpec {
  std::string_view name;
  bool required = true;
};

// `RequiredFields()` is the spec of an object whose fields are all required,
// from their names (a format's one list of its field names).
template <size_t N>
constexpr std::array<FieldSpec, N> RequiredFields(
    const std::array<std::string_view, N>& names) {
  std::array<FieldSpec, N> specs{};
  for (size_t i = 0; i < N; ++i) specs[i] = FieldSpec{names[i]};
  return specs;
}

// `Quote()` renders a string for an error message, shortened when long.
inline std::string Quote(std::string_view text) {
  constexpr size_t kMax = 48;
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == '"' || c == '\\') {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (text.size() > kMax) out += "...";
  out += "\"";
  return out;
}

// `StrictJson` reads typed values for one input named `source`.
class StrictJson {
 public:
  explicit StrictJson(std::string_view source) : source_(source) {}

  std::string_view source() const { return source_; }

  absl::Status Error(const JsonPath& path, std::string_view message) const {
    return JsonError(source_, path.ToString(), message);
  }
  absl::Status Simdjson(simdjson::error_code code, const JsonPath& path) const {
    return SimdjsonError(code, source_, path.ToString());
  }

  // `Describe()` names what a value is, for "expected X, got Y" messages:
  // the text of a scalar (shortened), or "an object" / "an array".
  static std::string Describe(simdjson::ondemand::value& value) {
    std::string_view raw = TrimRight(value.raw_json_token());
    simdjson::ondemand::json_type type;
    if (value.type().get(type) == simdjson::SUCCESS) {
      if (type == simdjson::ondemand::json_type::object) return "an object";
      if (type == simdjson::ondemand::json_type::array) return "an array";
    }
    constexpr size_t kMax = 48;
    if (raw.size() > kMax) return Cat(raw.substr(0, kMax), "...");
    return std::string(raw);
  }

  absl::Status Expected(simdjson::ondemand::value& value, const JsonPath& path,
                        std::string_view what) const {
    return Error(path, Cat("expected ", what, ", got ", Describe(value)));
  }

  // `Int()` reads an integer in [min, max]. Only the JSON integer form is
  // accepted (`-?(0|[1-9][0-9]*)`): `1.0` and `1e3` are not integers here.
  absl::StatusOr<int64_t> Int(simdjson::ondemand::value& value,
                              const JsonPath& path, int64_t min,
                              int64_t max) const {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS ||
        type != simdjson::ondemand::json_type::number) {
      return Expected(value, path, "integer");
    }
    std::string_view raw = TrimRight(value.raw_json_token());
    int64_t parsed = 0;
    switch (ParseInteger(raw, &parsed)) {
      case IntegerForm::kOk:
        break;
      case IntegerForm::kOutOfRange:
        return Error(path, Cat("integer out of range (beyond int64): ",
                               Describe(value)));
      case IntegerForm::kNotInteger:
        if (IsJsonNumber(raw)) return Expected(value, path, "integer");
        return Error(path, Cat("invalid number ", Describe(value)));
    }
    if (parsed < min || parsed > max) {
      if (min == 0 && parsed < 0) {
        return Error(path,
                     Cat("expected a non-negative integer, got ", parsed));
      }
      return Error(path,
                   Cat("integer ", parsed, " outside [", min, ", ", max, "]"));
    }
    return parsed;
  }

  absl::StatusOr<int64_t> NonNegative(simdjson::ondemand::value& value,
                                      const JsonPath& path) const {
    return Int(value, path, 0, INT64_MAX);
  }

  absl::StatusOr<uint64_t> Unsigned(simdjson::ondemand::value& value,
                                    const JsonPath& path) const {
    absl::StatusOr<int64_t> v = Int(value, path, 0, INT64_MAX);
    if (!v.ok()) return v.status();
    return static_cast<uint64_t>(*v);
  }

  // `NullableNonNegative()` reads `null` (nullopt) or a non-negative integer.
  absl::StatusOr<std::optional<int64_t>> NullableNonNegative(
      simdjson::ondemand::value& value, const JsonPath& path) const {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) == simdjson::SUCCESS &&
        type == simdjson::ondemand::json_type::null) {
      bool is_null = false;
      if (value.is_null().get(is_null) != simdjson::SUCCESS || !is_null) {
        return Expected(value, path, "integer or null");
      }
      return std::optional<int64_t>();
    }
    absl::StatusOr<int64_t> v = Int(value, path, 0, INT64_MAX);
    if (!v.ok()) {
      if (value.type().get(type) != simdjson::SUCCESS ||
          type != simdjson::ondemand::json_type::number) {
        return Expected(value, path, "integer or null");
      }
      return v.status();
    }
    return std::optional<int64_t>(*v);
  }

  // `NullableNonNegativeDouble()` reads `null` (nullopt) or a finite JSON
  // number >= 0 (any lexical form), correctly rounded to a double.
  absl::StatusOr<std::optional<double>> NullableNonNegativeDouble(
      simdjson::ondemand::value& value, const JsonPath& path) const {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS) {
      return Expected(value, path, "number or null");
    }
    if (type == simdjson::ondemand::json_type::null) {
      bool is_null = false;
      if (value.is_null().get(is_null) != simdjson::SUCCESS || !is_null) {
        return Expected(value, path, "number or null");
      }
      return std::optional<double>();
    }
    const std::string_view raw = TrimRight(value.raw_json_token());
    double parsed = 0;
    if (type != simdjson::ondemand::json_type::number ||
        value.get_double().get(parsed) != simdjson::SUCCESS ||
        !std::isfinite(parsed)) {
      return Expected(value, path, "a finite number or null");
    }
    if (parsed < 0) {
      return Error(path, Cat("expected a non-negative number, got ", raw));
    }
    return std::optional<double>(parsed);
  }

  // `String()` reads a string (unescaped; the view lives as long as the
  // parser's document).
  absl::StatusOr<std::string_view> String(simdjson::ondemand::value& value,
                                          const JsonPath& path) const {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS ||
        type != simdjson::ondemand::json_type::string) {
      return Expected(value, path, "string");
    }
    // Without a backslash the string is its raw text: return a view of the
    // input rather than unescape a copy into the parser's string buffer.
    // (Stage 1 has already rejected control characters and bad UTF-8.)
    const std::string_view raw = TrimRight(value.raw_json_token());
    if (raw.size() >= 2 && raw.back() == '"') {
      const std::string_view body = raw.substr(1, raw.size() - 2);
      if (body.find('\\') == std::string_view::npos) return body;
    }
    std::string_view out;
    simdjson::error_code error = value.get_string().get(out);
    if (error != simdjson::SUCCESS) return Simdjson(error, path);
    return out;
  }

  absl::StatusOr<bool> Bool(simdjson::ondemand::value& value,
                            const JsonPath& path) const {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS ||
        type != simdjson::ondemand::json_type::boolean) {
      return Expected(value, path, "true or false");
    }
    bool out = false;
    simdjson::error_code error = value.get_bool().get(out);
    if (error != simdjson::SUCCESS)
      return Expected(value, path, "true or false");
    return out;
  }

  absl::StatusOr<simdjson::ondemand::object> Object(
      simdjson::ondemand::value& value, const JsonPath& path) const {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS ||
        type != simdjson::ondemand::json_type::object) {
      return Expected(value, path, "object");
    }
    simdjson::ondemand::object out;
    simdjson::error_code error = value.get_object().get(out);
    if (error != simdjson::SUCCESS) return Simdjson(error, path);
    return out;
  }

  absl::StatusOr<simdjson::ondemand::array> Array(
      simdjson::ondemand::value& value, const JsonPath& path) const {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS ||
        type != simdjson::ondemand::json_type::array) {
      return Expected(value, path, "array");
    }
    simdjson::ondemand::array out;
    simdjson::error_code error = value.get_array().get(out);
    if (error != simdjson::SUCCESS) return Simdjson(error, path);
    return out;
  }

  // `ReadObject()` visits each field of `object` once: `on_field(i, value)`
  // with `i` the index of its spec. Unknown and duplicate keys are errors, and
  // so is a required field that never appears.
  template <size_t N, typename OnField>
  absl::Status ReadObject(simdjson::ondemand::object& object,
                          const JsonPath& path,
                          const std::array<FieldSpec, N>& specs,
                          OnField&& on_field) const {
    static_assert(N <= 64, "a field mask is 64 bits");
    uint64_t seen = 0;
    // Writers emit fields in spec order, so the field after field i is
    // first compared, raw, with spec i + 1. A raw key that equals a name
    // (names have no quote or backslash) is that name unescaped; any other
    // key is unescaped and searched for.
    size_t next = 0;
    for (auto field_result : object) {
      simdjson::ondemand::field field;
      simdjson::error_code error = std::move(field_result).get(field);
      if (error != simdjson::SUCCESS) return Simdjson(error, path);
      std::string_view key;
      size_t index = N;
      if (next < N && field.key().unsafe_is_equal(specs[next].name)) {
        index = next;
        key = specs[next].name;
      } else {
        error = field.unescaped_key().get(key);
        if (error != simdjson::SUCCESS) return Simdjson(error, path);
        for (size_t i = 0; i < N; ++i) {
          if (specs[i].name == key) {
            index = i;
            break;
          }
        }
      }
      if (index == N) {
        return Error(path, Cat("unknown field ", Quote(key)));
      }
      next = index + 1;
      const uint64_t bit = uint64_t{1} << index;
      if ((seen & bit) != 0) {
        return Error(path, Cat("duplicate field ", Quote(key)));
      }
      seen |= bit;
      simdjson::ondemand::value& value = field.value();
      const JsonPath field_path = path.Field(specs[index].name);
      absl::Status status = on_field(index, value, field_path);
      if (!status.ok()) return status;
    }
    for (size_t i = 0; i < N; ++i) {
      if (specs[i].required && (seen & (uint64_t{1} << i)) == 0) {
        return Error(path, Cat("missing field ", Quote(specs[i].name)));
      }
    }
    return absl::OkStatus();
  }

  // `ForEachField()` calls `on_field(key, value)` for each field of an object
  // whose fields are not a fixed set (`ReadObject()` is for those), with the
  // key unescaped; an error stops the walk.
  template <typename OnField>
  absl::Status ForEachField(simdjson::ondemand::object& object,
                            const JsonPath& path, OnField&& on_field) const {
    for (auto field_result : object) {
      simdjson::ondemand::field field;
      simdjson::error_code error = std::move(field_result).get(field);
      if (error != simdjson::SUCCESS) return Simdjson(error, path);
      std::string_view key;
      error = field.unescaped_key().get(key);
      if (error != simdjson::SUCCESS) return Simdjson(error, path);
      absl::Status status = on_field(key, field.value());
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // `ForEachElement()` calls `on_element(i, value, path)` for each element.
  template <typename OnElement>
  absl::Status ForEachElement(simdjson::ondemand::array& array,
                              const JsonPath& path,
                              OnElement&& on_element) const {
    size_t index = 0;
    for (auto element_result : array) {
      simdjson::ondemand::value value;
      const JsonPath element_path = path.Index(index);
      simdjson::error_code error = element_result.get(value);
      if (error != simdjson::SUCCESS) return Simdjson(error, element_path);
      absl::Status status = on_element(index, value, element_path);
      if (!status.ok()) return status;
      ++index;
    }
    return absl::OkStatus();
  }

  static std::string_view TrimRight(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                          s.back() == '\n' || s.back() == '\r')) {
      s.remove_suffix(1);
    }
    return s;
  }

  enum class IntegerForm { kOk, kOutOfRange, kNotInteger };

  // `ParseInteger()` parses the JSON integer form (`-?(0|[1-9][0-9]*)`)
  // exactly into int64. Text that is not that form is kNotInteger, even when
  // its digits are also out of range.
  static IntegerForm ParseInteger(std::string_view text, int64_t* out) {
    if (spanprof::internal::HasLeadingZero(text)) {
      return IntegerForm::kNotInteger;
    }
    const std::errc error = spanprof::internal::ParseInt64(text, out);
    if (error == std::errc()) return IntegerForm::kOk;
    if (error == std::errc::result_out_of_range) {
      return IntegerForm::kOutOfRange;
    }
    return IntegerForm::kNotInteger;
  }

  // `IsJsonNumber()` is the full JSON number grammar (RFC 8259).
  static bool IsJsonNumber(std::string_view s) {
    size_t i = 0;
    auto digits = [&] {
      const size_t start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      return i > start;
    };
    if (i < s.size() && s[i] == '-') ++i;
    if (i < s.size() && s[i] == '0') {
      ++i;
    } else if (!digits()) {
      return false;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      if (!digits()) return false;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      if (!digits()) return false;
    }
    return i == s.size();
  }

 private:
  std::string_view source_;
};

// `ParsedDocument` holds the padded copy, the parser and the document of one
// input; the root must be an object and nothing may follow it.
class ParsedDocument {
 public:
  explicit ParsedDocument(std::string_view json)
      : padded_(json), size_(json.size()) {}
  ParsedDocument(const ParsedDocument&) = delete;
  ParsedDocument& operator=(const ParsedDocument&) = delete;

  // `Start()` parses and returns the root object.
  absl::StatusOr<simdjson::ondemand::object> Start(const StrictJson& json) {
    const JsonPath root = JsonPath::Root();
    // simdjson leaves the copy empty when it cannot allocate it.
    if (padded_.size() != size_) return json.Simdjson(simdjson::MEMALLOC, root);
    simdjson::error_code error = parser_.iterate(padded_).get(document_);
    if (error != simdjson::SUCCESS) return json.Simdjson(error, root);
    simdjson::ondemand::json_type type;
    error = document_.type().get(type);
    if (error != simdjson::SUCCESS) return json.Simdjson(error, root);
    if (type != simdjson::ondemand::json_type::object) {
      return json.Error(root, "expected a JSON object at the top level");
    }
    simdjson::ondemand::object object;
    error = document_.get_object().get(object);
    if (error != simdjson::SUCCESS) return json.Simdjson(error, root);
    return object;
  }

  // `Rewind()` restarts iteration at the root (invalidates earlier values).
  absl::StatusOr<simdjson::ondemand::object> Rewind(const StrictJson& json) {
    document_.rewind();
    simdjson::ondemand::object object;
    simdjson::error_code error = document_.get_object().get(object);
    if (error != simdjson::SUCCESS) {
      return json.Simdjson(error, JsonPath::Root());
    }
    return object;
  }

  // `Finish()` checks that nothing follows the root object.
  absl::Status Finish(const StrictJson& json) {
    const char* location = nullptr;
    if (document_.current_location().get(location) == simdjson::SUCCESS) {
      return json.Error(JsonPath::Root(),
                        "unexpected content after the top-level object");
    }
    return absl::OkStatus();
  }

 private:
  simdjson::padded_string padded_;
  size_t size_;
  simdjson::ondemand::parser parser_;
  simdjson::ondemand::document document_;
};

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_JSON_STRICT_JSON_H_
