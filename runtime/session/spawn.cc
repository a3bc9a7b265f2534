// SpawnWithTraceparent(): a child process whose session continues this
// process's trace (SPANPROF_TRACEPARENT in its environment).
#include <spawn.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spanprof/context.h"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace spanprof {

absl::StatusOr<int> SpawnWithTraceparent(const std::vector<std::string>& argv,
                                         const Context& parent) {
  if (argv.empty() || argv[0].empty()) {
    return absl::InvalidArgumentError(
        "SpawnWithTraceparent: argv must name a program");
  }
  constexpr std::string_view kVariable = "SPANPROF_TRACEPARENT=";
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).substr(0, kVariable.size()) != kVariable) {
      env.emplace_back(*e);
    }
  }
  const std::string traceparent = parent.Traceparent();
  if (!traceparent.empty()) env.push_back(std::string(kVariable) + traceparent);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), nullptr, nullptr,
                              args.data(), envp.data());
  if (rc != 0) {
    return absl::InvalidArgumentError(
        "SpawnWithTraceparent: cannot start '" + argv[0] +
        "': " + std::error_code(rc, std::generic_category()).message());
  }
  return static_cast<int>(pid);
}

}  // namespace spanprof
