// spanprof/cli/router.h — the `spanprof` command as an embeddable library.
//
// An application can offer the same commands under its own name, e.g.
// `myapp profile compare base.json cand.json`, by forwarding its arguments.
// `argv[0]` is the program name used in usage text.
//
// clang-format off
// Example:
//
//   int main(int argc, char** argv) { return spanprof::cli::Run(argc, argv); }
// clang-format on
#ifndef SPANPROF_CLI_ROUTER_H_
#define SPANPROF_CLI_ROUTER_H_

#include <iosfwd>

namespace spanprof::cli {

// Exit codes, for every command.
inline constexpr int kExitPass = 0;        // success / no regression
inline constexpr int kExitRegression = 1;  // regression or policy failure
inline constexpr int kExitUsage =
    2;  // usage error, unreadable or invalid input

// `Run()` dispatches `argv[1]` (compare, report, validate, summarize, folded,
// plot, scaling, run, ab) and returns the exit code. Output goes to stdout,
// errors to stderr.
int Run(int argc, char** argv);

// `Run()` with explicit streams, for embedding and tests.
int Run(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace spanprof::cli

#endif  // SPANPROF_CLI_ROUTER_H_
