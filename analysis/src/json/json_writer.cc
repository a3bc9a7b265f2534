#include "json/json_writer.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

namespace spanprof::analysis {
namespace {

// True for the bytes that cannot appear raw inside a JSON string.
constexpr std::array<bool, 256> MakeEscapeTable() {
  std::array<bool, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[static_cast<size_t>(c)] = true;
  table['"'] = true;
  table['\\'] = true;
  return table;
}
constexpr std::array<bool, 256> kNeedsEscape = MakeEscapeTable();

constexpr char kHexDigits[] = "0123456789abcdef";

}  // namespace

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  const char* data = s.data();
  const size_t size = s.size();
  size_t run_start = 0;
  for (size_t i = 0; i < size; ++i) {
    const unsigned char c = static_cast<unsigned char>(data[i]);
    if (!kNeedsEscape[c]) continue;
    out->append(data + run_start, i - run_start);
    run_start = i + 1;
    if (c == '"' || c == '\\') {
      const char escaped[2] = {'\\', static_cast<char>(c)};
      out->append(escaped, 2);
    } else {
      // Every control character is written as \u00XX, including \n and \t:
      // one rule, trivially checked by readers and tests.
      const char escaped[6] = {
          '\\', 'u', '0', '0', kHexDigits[c >> 4], kHexDigits[c & 0xf]};
      out->append(escaped, 6);
    }
  }
  out->append(data + run_start, size - run_start);
  out->push_back('"');
}

void AppendDouble(std::string* out, double value) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  char buffer[40];
  // Without a format, to_chars writes the shortest representation that reads
  // back as exactly `value`.
  const std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  const size_t size = static_cast<size_t>(result.ptr - buffer);
  out->append(buffer, size);
  if (std::memchr(buffer, '.', size) == nullptr &&
      std::memchr(buffer, 'e', size) == nullptr) {
    out->append(".0");
  }
}

JsonWriter::JsonWriter(std::string* out, Options options)
    : out_(out), options_(options) {}

void JsonWriter::LineBreak(int depth) {
  out_->push_back('\n');
  if (options_.indent > 0) {
    out_->append(
        static_cast<size_t>(options_.indent) * static_cast<size_t>(depth), ' ');
  }
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0) return;
  const int slot = depth_ < kMaxDepth ? depth_ : kMaxDepth - 1;
  if (has_element_[slot]) out_->push_back(',');
  has_element_[slot] = true;
  if (depth_ <= options_.line_depth) LineBreak(depth_);
}

void JsonWriter::Open(char bracket) {
  BeforeValue();
  out_->push_back(bracket);
  ++depth_;
  if (depth_ < kMaxDepth) has_element_[depth_] = false;
}

void JsonWriter::Close(char bracket) {
  const int slot = depth_ < kMaxDepth ? depth_ : kMaxDepth - 1;
  const bool had_elements = has_element_[slot];
  --depth_;
  if (had_elements && depth_ + 1 <= options_.line_depth) LineBreak(depth_);
  out_->push_back(bracket);
}

void JsonWriter::BeginObject() { Open('{'); }
void JsonWriter::EndObject() { Close('}'); }
void JsonWriter::BeginArray() { Open('['); }
void JsonWriter::EndArray() { Close(']'); }

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(out_, key);
  out_->push_back(':');
  if (options_.indent > 0 && depth_ <= options_.line_depth) {
    out_->push_back(' ');
  }
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(out_, value);
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  AppendInt(out_, value);
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  AppendUint(out_, value);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_->append(value ? "true" : "false");
}

void JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
}

void JsonWriter::Double(double value) {
  BeforeValue();
  AppendDouble(out_, value);
}

void JsonWriter::OptionalInt(const std::optional<int64_t>& value) {
  if (value.has_value()) {
    Int(*value);
  } else {
    Null();
  }
}

void JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_->append(json.data(), json.size());
}

}  // namespace spanprof::analysis
