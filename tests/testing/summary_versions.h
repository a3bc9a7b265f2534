// summary_versions.h — summaries of earlier schema versions made from the
// writer's output, for tests of the summary reader's version handling.
//
// The writer writes only the current version; `SummaryAsVersion()` rewrites
// its JSON the way version N has it, leaving out every field that
// summary_format.h's tables do not give version N, so a test can read each
// version, and each version with one field too many or one too few.
//
// Example:
//   std::string at;
//   const std::string v3 = SummaryAsVersion(
//       SummaryToJson(summary), 3, {.keep = "end_reason"}, &at);
//   // v3 has a version-5 field; `at` is "$", the object that has it.
#ifndef SPANPROF_TESTS_TESTING_SUMMARY_VERSIONS_H_
#define SPANPROF_TESTS_TESTING_SUMMARY_VERSIONS_H_

#include <simdjson.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "analysis/src/summary/summary_format.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::testing {

// `SummaryEdit` is one change besides the version, made in the first object
// (in document order) where it applies.
struct SummaryEdit {
  // A field the version does not have, kept where the writer wrote it.
  std::string_view keep;
  // A field the version has, left out.
  std::string_view drop;
};

namespace summary_versions_internal {

using ::spanprof::analysis::internal::VersionedField;

// The kinds of object and array in a summary, as far as the tables go.
enum class Kind {
  kRoot,
  kRows,
  kRow,
  kKey,
  kCounters,
  kCounter,
  kIssues,
  kIssue,
  kOther
};

class Rewriter {
 public:
  Rewriter(int64_t version, const SummaryEdit& edit)
      : version_(version), edit_(edit) {}

  void Emit(simdjson::dom::element e, Kind kind, const std::string& path) {
    if (e.type() == simdjson::dom::element_type::OBJECT) {
      EmitObject(e.get_object(), kind, path);
    } else if (e.type() == simdjson::dom::element_type::ARRAY) {
      out_ += '[';
      size_t i = 0;
      for (simdjson::dom::element x : e.get_array()) {
        if (i > 0) out_ += ',';
        Emit(x,
             kind == Kind::kRows     ? Kind::kRow
             : kind == Kind::kIssues ? Kind::kIssue
                                     : Kind::kOther,
             path + "[" + std::to_string(i) + "]");
        ++i;
      }
      out_ += ']';
    } else {
      out_ += simdjson::minify(e);
    }
  }

  std::string& out() { return out_; }
  const std::string& edited_at() const { return edited_at_; }
  bool edited() const { return edited_; }

 private:
  template <size_t N>
  static const VersionedField* Find(const std::array<VersionedField, N>& table,
                                    std::string_view name) {
    for (const VersionedField& field : table) {
      if (field.name == name) return &field;
    }
    return nullptr;
  }

  static const VersionedField* FieldOf(Kind kind, std::string_view name) {
    namespace format = ::spanprof::analysis::internal;
    switch (kind) {
      case Kind::kRoot:
        return Find(format::kSummaryFields, name);
      case Kind::kRow:
        return Find(format::kRowFields, name);
      case Kind::kKey:
        return Find(format::kRowKeyFields, name);
      case Kind::kCounter:
        return Find(format::kRowCounterFields, name);
      case Kind::kIssue:
        return Find(format::kIssueFields, name);
      default:
        return nullptr;
    }
  }

  static Kind ChildKind(Kind kind, std::string_view name) {
    if (kind == Kind::kRoot && name == "rows") return Kind::kRows;
    if (kind == Kind::kRoot && name == "validation_issues") {
      return Kind::kIssues;
    }
    if (kind == Kind::kRow && name == "key") return Kind::kKey;
    if (kind == Kind::kRow && name == "counters") return Kind::kCounters;
    if (kind == Kind::kCounters) return Kind::kCounter;
    return Kind::kOther;
  }

  void EmitObject(simdjson::dom::object o, Kind kind, const std::string& path) {
    out_ += '{';
    bool first = true;
    for (simdjson::dom::key_value_pair field : o) {
      const VersionedField* spec = FieldOf(kind, field.key);
      bool keep = spec == nullptr || spec->In(version_);
      if (!edited_ && spec != nullptr && !keep && field.key == edit_.keep) {
        keep = true;
        Edited(path);
      } else if (!edited_ && spec != nullptr && keep &&
                 field.key == edit_.drop) {
        keep = false;
        Edited(path);
      }
      if (!keep) continue;
      if (!first) out_ += ',';
      first = false;
      // Names in the writer's output (counter names included) need no
      // escaping in these tests.
      out_ += "\"" + std::string(field.key) + "\":";
      if (kind == Kind::kRoot && field.key == "schema_version") {
        out_ += std::to_string(version_);
      } else {
        Emit(field.value, ChildKind(kind, field.key),
             path + "." + std::string(field.key));
      }
    }
    out_ += '}';
  }

  void Edited(const std::string& path) {
    edited_ = true;
    edited_at_ = path;
  }

  int64_t version_;
  SummaryEdit edit_;
  std::string out_;
  std::string edited_at_;
  bool edited_ = false;
};

}  // namespace summary_versions_internal

// `SummaryAsVersion()` is the writer's `json` as version `version` has it,
// with `edit` made (it fails the test when `edit` names a field it cannot
// apply to). `edited_at`, when not null, receives the JSON path of the
// object that `edit` changed, as the reader's errors render it ("$",
// "$.rows[0].key").
inline std::string SummaryAsVersion(std::string_view json, int64_t version,
                                    const SummaryEdit& edit = {},
                                    std::string* edited_at = nullptr) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const simdjson::padded_string padded(json);
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not JSON:\n" << json;
    return "";
  }
  summary_versions_internal::Rewriter rewriter(version, edit);
  rewriter.Emit(doc, summary_versions_internal::Kind::kRoot, "$");
  const bool wanted = !edit.keep.empty() || !edit.drop.empty();
  EXPECT_EQ(rewriter.edited(), wanted)
      << "test bug: no object to keep \"" << edit.keep << "\" in or drop \""
      << edit.drop << "\" from at version " << version;
  if (edited_at != nullptr) *edited_at = rewriter.edited_at();
  return std::move(rewriter.out());
}

// The strict reader's error for `json`, read as `source` (the error names
// it), or "accepted": what the summary reader's tests compare.
inline std::string SummaryParseError(std::string_view json,
                                     std::string_view source) {
  absl::StatusOr<analysis::Summary> parsed =
      analysis::ParseSummary(json, source);
  if (parsed.ok()) return "accepted";
  return std::string(parsed.status().message());
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_SUMMARY_VERSIONS_H_
