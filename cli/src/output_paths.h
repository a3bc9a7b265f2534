// output_paths.h — the checks every command makes on its output paths before
// any work (private to the CLI): an output that is one of the command's
// inputs, or another of its outputs, is refused, so that no command
// overwrites what it reads or loses one output under another.
//
// Example:
//
//   const OutputPath outputs[] = {{"-o", *output}};
//   if (absl::Status s = CheckOutputPaths(inputs, outputs); !s.ok()) {
//     return Failure(io, command, s);
//   }
//   std::ostream& text = TextStream(io, outputs);  // stderr when `-o -`
#ifndef SPANPROF_CLI_SRC_OUTPUT_PATHS_H_
#define SPANPROF_CLI_SRC_OUTPUT_PATHS_H_

#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "commands.h"

namespace spanprof::cli::internal {

// `OutputPath` is one output of a command: the flag that names it and its
// path (`-` for standard output).
struct OutputPath {
  const char* flag;  // "-o", "--json", "--summary"
  std::string path;
};

// `CheckOutputPaths()` is an error naming both paths when an output is the
// same file as an input or as another output (analysis::SameOutputTarget:
// links followed, a character device never counts).
absl::Status CheckOutputPaths(std::span<const std::string> inputs,
                              std::span<const OutputPath> outputs);

// `TextStream()` is where a command prints its human text: io.err when one
// of `outputs` is standard output (so that stdout carries only the
// document), else io.out.
std::ostream& TextStream(const CommandIo& io,
                         std::span<const OutputPath> outputs);

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_OUTPUT_PATHS_H_
