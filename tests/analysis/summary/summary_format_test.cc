// The one table of summary fields (summary_format.h): each version's list of
// fields is derived from it; the writer writes the current version's list
// in the table's order; the reader accepts each version with exactly its
// list (a field of another version is refused by name, and so is a missing
// one); and the summaries recorded with earlier versions still read.
#include "analysis/src/summary/summary_format.h"

#include <simdjson.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/analysis/captures.h"
#include "tests/testing/summary_versions.h"

namespace spanprof::analysis {
namespace {

using internal::CountIn;
using internal::FieldsIn;
using internal::kIssueFields;
using internal::kRowCounterFields;
using internal::kRowFields;
using internal::kRowKeyFields;
using internal::kSummaryFields;
using internal::VersionedField;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::SummaryAsVersion;
using ::spanprof::testing::SummaryParseError;
using ::testing::HasSubstr;

constexpr std::string_view kSource = "v.json";

// Every kind of object the tables describe, and the field that holds it (it
// exists only in the versions that have that field).
struct ObjectKind {
  std::string_view what;
  std::span<const VersionedField> fields;
  const VersionedField* holder;
};
const std::array<ObjectKind, 5> kKinds = {{
    {"top level", kSummaryFields, nullptr},
    {"row", kRowFields, &kSummaryFields[internal::kRootRows]},
    {"key", kRowKeyFields, &kRowFields[internal::kRowKey]},
    {"counter", kRowCounterFields, &kRowFields[internal::kRowCounters]},
    {"issue", kIssueFields, &kSummaryFields[internal::kRootValidationIssues]},
}};

// Counters, dropped arguments and validation issues: a field of every
// kind. (Keys with backend, dtype and device are `KeyedJson()`'s: without
// them, two of its rows would have one key.)
std::string PlainJson() {
  return SummaryToJson(
      Summarize(RichCapture({.broken = true, .counters = true})));
}
std::string KeyedJson() {
  return SummaryToJson(Summarize(RichCapture({.keys = true})));
}

std::string ParseError(const std::string& json) {
  return SummaryParseError(json, kSource);
}

std::vector<std::string_view> NamesIn(std::span<const VersionedField> fields,
                                      int64_t version) {
  std::vector<std::string_view> names;
  for (const VersionedField& field : fields) {
    if (field.In(version)) names.push_back(field.name);
  }
  return names;
}

std::vector<std::string_view> KeysOf(simdjson::dom::object object) {
  std::vector<std::string_view> keys;
  for (simdjson::dom::key_value_pair field : object) keys.push_back(field.key);
  return keys;
}

// The number of fields each version had when it was released (a later
// version's fields do not change them).
TEST(SummaryFormatTest, EachVersionHasTheFieldsItsReleaseWrote) {
  const std::array<size_t, 5> root = {19, 20, 25, 27, 30};
  const std::array<size_t, 5> row = {20, 24, 25, 27, 27};
  const std::array<size_t, 5> key = {4, 4, 4, 7, 7};
  for (int64_t v = 1; v <= 5; ++v) {
    const size_t i = static_cast<size_t>(v - 1);
    EXPECT_EQ(CountIn(kSummaryFields, v), root[i]) << "version " << v;
    EXPECT_EQ(CountIn(kRowFields, v), row[i]) << "version " << v;
    EXPECT_EQ(CountIn(kRowKeyFields, v), key[i]) << "version " << v;
  }
  // The derived lists keep the writer's order.
  constexpr auto v1 = FieldsIn<kSummaryFields, 1>();
  EXPECT_EQ(v1[2], internal::kRootClock);
  EXPECT_EQ(v1[v1.size() - 1], internal::kRootRows);
  constexpr auto v2_rows = FieldsIn<kRowFields, 2>();
  EXPECT_EQ(v2_rows[11], internal::kRowTailRatio);
  EXPECT_EQ((FieldsIn<kRowCounterFields, 1>().size()), 0u);
}

TEST(SummaryFormatTest, TheWriterWritesTheCurrentListInTableOrder) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const simdjson::padded_string json(PlainJson());
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS);
  const int64_t now = kSummarySchemaVersion;
  EXPECT_EQ(KeysOf(doc.get_object()), NamesIn(kSummaryFields, now));
  simdjson::dom::array rows = doc["rows"];
  ASSERT_GT(rows.size(), 0u);
  bool saw_counter = false;
  for (simdjson::dom::element row : rows) {
    EXPECT_EQ(KeysOf(row.get_object()), NamesIn(kRowFields, now));
    for (simdjson::dom::key_value_pair counter : row["counters"].get_object()) {
      saw_counter = true;
      EXPECT_EQ(KeysOf(counter.value.get_object()),
                NamesIn(kRowCounterFields, now));
    }
  }
  EXPECT_TRUE(saw_counter);
  simdjson::dom::array issues = doc["validation_issues"];
  ASSERT_GT(issues.size(), 0u);
  EXPECT_EQ(KeysOf(issues.at(0).get_object()), NamesIn(kIssueFields, now));

  // Optional key fields are written when set.
  const simdjson::padded_string keyed(KeyedJson());
  ASSERT_EQ(parser.parse(keyed).get(doc), simdjson::SUCCESS);
  bool saw_full_key = false;
  for (simdjson::dom::element row : doc["rows"].get_array()) {
    const std::vector<std::string_view> keys = KeysOf(row["key"].get_object());
    if (keys.size() == kRowKeyFields.size()) {
      saw_full_key = true;
      EXPECT_EQ(keys, NamesIn(kRowKeyFields, now));
    }
  }
  EXPECT_TRUE(saw_full_key);
}

TEST(SummaryFormatTest, EveryVersionReadsWithExactlyItsFields) {
  const std::string plain = PlainJson();
  for (int64_t v = 1; v <= kSummarySchemaVersion; ++v) {
    absl::StatusOr<Summary> read =
        ParseSummary(SummaryAsVersion(plain, v), kSource);
    ASSERT_TRUE(read.ok()) << "version " << v << ": " << read.status();
    EXPECT_EQ(read->schema_version, v);
    EXPECT_FALSE(read->rows.empty());
  }
  for (int64_t v = 4; v <= kSummarySchemaVersion; ++v) {
    absl::StatusOr<Summary> read =
        ParseSummary(SummaryAsVersion(KeyedJson(), v), kSource);
    ASSERT_TRUE(read.ok()) << "version " << v << ": " << read.status();
  }
}

// Each field that version N lacks, in a document of version N: refused, with
// the object and the field named.
TEST(SummaryFormatTest, AFieldOfAnotherVersionIsRefusedByName) {
  const std::string plain = PlainJson();
  const std::string keyed = KeyedJson();
  int refused = 0;
  for (int64_t v = 1; v <= kSummarySchemaVersion; ++v) {
    for (const ObjectKind& kind : kKinds) {
      if (kind.holder != nullptr && !kind.holder->In(v)) continue;
      for (const VersionedField& field : kind.fields) {
        if (field.In(v)) continue;
        SCOPED_TRACE(::testing::Message()
                     << "version " << v << ", " << kind.what << " field "
                     << field.name);
        std::string at;
        const std::string json = SummaryAsVersion(
            kind.fields.data() == kRowKeyFields.data() ? keyed : plain, v,
            {.keep = field.name}, &at);
        EXPECT_THAT(ParseError(json),
                    HasSubstr(at + ": unknown field \"" +
                              std::string(field.name) + "\""));
        ++refused;
      }
    }
  }
  // Versions 1 to 4 each lack some field of version 5.
  EXPECT_GE(refused, 4);
}

// Each required field of version N, left out of a document of version N:
// refused, with the object and the field named.
TEST(SummaryFormatTest, AMissingFieldOfTheVersionIsRefusedByName) {
  const std::string plain = PlainJson();
  for (int64_t v = 1; v <= kSummarySchemaVersion; ++v) {
    for (const ObjectKind& kind : kKinds) {
      if (kind.holder != nullptr && !kind.holder->In(v)) continue;
      for (const VersionedField& field : kind.fields) {
        if (!field.In(v) || !field.required) continue;
        SCOPED_TRACE(::testing::Message()
                     << "version " << v << ", " << kind.what << " field "
                     << field.name);
        std::string at;
        const std::string json =
            SummaryAsVersion(plain, v, {.drop = field.name}, &at);
        if (field.name == "schema_version" && v != kSummarySchemaVersion) {
          // Without a version the document is read as the current one,
          // and refused for the first of its fields it lacks.
          EXPECT_THAT(ParseError(json), HasSubstr("missing field"));
          continue;
        }
        EXPECT_THAT(ParseError(json),
                    HasSubstr(at + ": missing field \"" +
                              std::string(field.name) + "\""));
      }
    }
  }
}

TEST(SummaryFormatTest, AVersion3SummaryWithAVersion5FieldIsRefused) {
  const std::string v3 =
      SummaryAsVersion(PlainJson(), 3, {.keep = "open_at_exit_events"});
  EXPECT_THAT(ParseError(v3),
              HasSubstr("v.json: $: unknown field \"open_at_exit_events\""));
  // The same document without it reads.
  EXPECT_EQ(ParseError(SummaryAsVersion(PlainJson(), 3)), "accepted");
}

// The summaries recorded with earlier releases (tests/data, and the
// version-1 files of this folder's testdata) read with today's tables.
TEST(SummaryFormatTest, RecordedSummariesStillRead) {
  namespace fs = std::filesystem;
  const fs::path root(SPANPROF_TEST_SOURCE_DIR);
  std::vector<fs::path> files;
  for (const fs::path& dir :
       {root / "tests/data", root / "tests/analysis/summary/testdata"}) {
    for (const fs::directory_entry& entry :
         fs::recursive_directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name.ends_with(".summary.json") || name.ends_with("-summary.json")) {
        files.push_back(entry.path());
      }
    }
  }
  std::set<int64_t> versions;
  for (const fs::path& file : files) {
    absl::StatusOr<Summary> read = ReadSummary(file.string());
    ASSERT_TRUE(read.ok()) << read.status();
    versions.insert(read->schema_version);
  }
  EXPECT_GE(files.size(), 40u);
  EXPECT_TRUE(versions.contains(1));
  EXPECT_TRUE(versions.contains(2));
}

}  // namespace
}  // namespace spanprof::analysis
