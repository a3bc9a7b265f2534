#include "analysis/src/json/json_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>

namespace spanprof::analysis {
namespace {

// Parses `json` with simdjson's strict DOM parser; fails the test otherwise.
simdjson::dom::element ParseStrict(simdjson::dom::parser& parser,
                                   const std::string& json) {
  simdjson::dom::element element;
  const simdjson::error_code error = parser.parse(json).get(element);
  EXPECT_EQ(error, simdjson::SUCCESS)
      << simdjson::error_message(error) << " in " << json;
  return element;
}

TEST(JsonWriterTest, EscapesEveryControlCharacterAsUnicodeEscape) {
  std::string raw;
  for (int c = 0; c < 0x20; ++c) raw.push_back(static_cast<char>(c));
  raw += "\"\\/x\x7f";
  std::string out;
  AppendJsonString(&out, raw);

  std::string expected = "\"";
  for (int c = 0; c < 0x20; ++c) {
    char buffer[8];
    std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
    expected += buffer;
  }
  expected += "\\\"\\\\/x\x7f\"";
  EXPECT_EQ(out, expected);
  for (char c : out) {
    EXPECT_GE(static_cast<unsigned char>(c), 0x20) << "raw control byte";
  }

  simdjson::dom::parser parser;
  std::string_view back;
  ASSERT_EQ(ParseStrict(parser, out).get(back), simdjson::SUCCESS);
  EXPECT_EQ(back, raw);
}

TEST(JsonWriterTest, CopiesUtf8Unchanged) {
  const std::string raw = "caf\xC3\xA9 \xE2\x80\xA6 \xF0\x9F\x94\xA5";
  std::string out;
  AppendJsonString(&out, raw);
  EXPECT_EQ(out, "\"" + raw + "\"");
}

TEST(JsonWriterTest, WritesIntegersExactly) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  w.Int(INT64_MIN);
  w.Int(INT64_MAX);
  w.Int(0);
  w.Int(-1);
  w.Uint(UINT64_MAX);
  w.EndArray();
  EXPECT_EQ(out,
            "[-9223372036854775808,9223372036854775807,0,-1,"
            "18446744073709551615]");
}

TEST(JsonWriterTest, NonFiniteDoublesAreNull) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  w.Double(std::numeric_limits<double>::quiet_NaN());
  w.Double(std::numeric_limits<double>::infinity());
  w.Double(-std::numeric_limits<double>::infinity());
  w.Double(1.5);
  w.EndArray();
  EXPECT_EQ(out, "[null,null,null,1.5]");
  EXPECT_EQ(out.find("nan"), std::string::npos);
  EXPECT_EQ(out.find("inf"), std::string::npos);
  simdjson::dom::parser parser;
  ParseStrict(parser, out);
}

TEST(JsonWriterTest, DoublesAlwaysLookLikeDoublesAndRoundTrip) {
  const std::pair<double, std::string_view> cases[] = {
      {3.0, "3.0"},    {0.1, "0.1"},        {-0.0, "-0.0"},
      {1e20, "1e+20"}, {2.5e-7, "2.5e-07"}, {-42.0, "-42.0"}};
  for (const auto& [value, text] : cases) {
    std::string out;
    AppendDouble(&out, value);
    EXPECT_EQ(out, text);
  }
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; ++i) {
    const uint64_t bits = rng();
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    if (!std::isfinite(value)) continue;
    std::string out;
    AppendDouble(&out, value);
    EXPECT_TRUE(out.find_first_of(".e") != std::string::npos) << out;
    EXPECT_EQ(std::strtod(out.c_str(), nullptr), value) << out;
  }
}

TEST(JsonWriterTest, PrettyPrintsWithTwoSpaceIndentation) {
  std::string out;
  JsonWriter w(&out, {.indent = 2});
  w.BeginObject();
  w.Key("a");
  w.Int(1);
  w.Key("empty");
  w.BeginArray();
  w.EndArray();
  w.Key("list");
  w.BeginArray();
  w.BeginObject();
  w.Key("b");
  w.Null();
  w.EndObject();
  w.Bool(true);
  w.EndArray();
  w.EndObject();
  w.Newline();
  EXPECT_EQ(out,
            "{\n"
            "  \"a\": 1,\n"
            "  \"empty\": [],\n"
            "  \"list\": [\n"
            "    {\n"
            "      \"b\": null\n"
            "    },\n"
            "    true\n"
            "  ]\n"
            "}\n");
}

TEST(JsonWriterTest, CompactAndLineDepthLayouts) {
  std::string compact;
  {
    JsonWriter w(&compact);
    w.BeginObject();
    w.Key("k");
    w.BeginArray();
    w.String("x");
    w.Raw("{\"r\":1}");
    w.EndArray();
    w.EndObject();
  }
  EXPECT_EQ(compact, "{\"k\":[\"x\",{\"r\":1}]}");

  std::string lines;
  {
    JsonWriter w(&lines, {.indent = 0, .line_depth = 2});
    w.BeginObject();
    w.Key("events");
    w.BeginArray();
    w.BeginObject();
    w.Key("a");
    w.BeginArray();
    w.Int(1);
    w.Int(2);
    w.EndArray();
    w.EndObject();
    w.RawValue()->append("{}");
    w.EndArray();
    w.EndObject();
  }
  EXPECT_EQ(lines, "{\n\"events\":[\n{\"a\":[1,2]},\n{}\n]\n}");
  simdjson::dom::parser parser;
  ParseStrict(parser, lines);
}

TEST(JsonWriterTest, OptionalIntWritesNullWhenAbsent) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  w.OptionalInt(std::nullopt);
  w.OptionalInt(0);
  w.EndArray();
  EXPECT_EQ(out, "[null,0]");
}

}  // namespace
}  // namespace spanprof::analysis
