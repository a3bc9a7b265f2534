// simdjson_status.h — the one place where a simdjson `error_code` becomes an
// `absl::Status` (private to the analysis library).
//
// Every reader reports errors as `source: $.json.path: message`; this header
// owns that shape and the wording of simdjson's failures, so a user sees
// "truncated" rather than "INCOMPLETE_ARRAY_OR_OBJECT".
#ifndef SPANPROF_ANALYSIS_SRC_JSON_SIMDJSON_STATUS_H_
#define SPANPROF_ANALYSIS_SRC_JSON_SIMDJSON_STATUS_H_

#include <simdjson.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "json/cat.h"

namespace spanprof::analysis::internal {

// `JsonError()` is the error for a document that parsed but is not the schema
// (or breaks an invariant): `source: path: message`.
inline absl::Status JsonError(std::string_view source, std::string_view path,
                              std::string_view message) {
  return absl::InvalidArgumentError(Cat(source, ": ", path, ": ", message));
}

// `SimdjsonErrorText()` words a simdjson failure for a human.
inline std::string_view SimdjsonErrorText(simdjson::error_code code) {
  switch (code) {
    case simdjson::EMPTY:
      return "empty input: no JSON value found";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      return "truncated or malformed JSON: an object or array is not closed "
             "(or there is content after it)";
    case simdjson::UNCLOSED_STRING:
      return "truncated or malformed JSON: unclosed string";
    case simdjson::TAPE_ERROR:
      return "malformed JSON (missing or extra comma, colon, brace or "
             "bracket, or a value that is not JSON such as NaN)";
    case simdjson::DEPTH_ERROR:
      return "JSON nested too deeply";
    case simdjson::STRING_ERROR:
      return "invalid string (bad escape sequence)";
    case simdjson::UNESCAPED_CHARS:
      return "invalid string (unescaped control character)";
    case simdjson::UTF8_ERROR:
      return "input is not valid UTF-8";
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
      return "invalid literal (expected true or false)";
    case simdjson::N_ATOM_ERROR:
      return "invalid literal (expected null)";
    case simdjson::NUMBER_ERROR:
      return "invalid number";
    case simdjson::NUMBER_OUT_OF_RANGE:
      return "number out of range";
    case simdjson::INCORRECT_TYPE:
      return "value has the wrong type";
    case simdjson::CAPACITY:
      return "document too large";
    case simdjson::MEMALLOC:
      return "out of memory while parsing";
    case simdjson::TRAILING_CONTENT:
      return "unexpected content after the document";
    default:
      return simdjson::error_message(code);
  }
}

// `SimdjsonError()` converts a simdjson failure at `path` into a Status.
inline absl::Status SimdjsonError(simdjson::error_code code,
                                  std::string_view source,
                                  std::string_view path) {
  if (code == simdjson::MEMALLOC) {
    // Before the parse takes its first byte: simdjson allocates up front.
    return absl::ResourceExhaustedError(Cat("out of memory reading ", source,
                                            " at byte 0 (", path,
                                            ": parsing it)"));
  }
  return JsonError(source, path, SimdjsonErrorText(code));
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_JSON_SIMDJSON_STATUS_H_
