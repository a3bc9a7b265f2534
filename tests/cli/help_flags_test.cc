// Every command's help lists exactly the flags it accepts: each flag (and
// its short alias) of the command's flag table appears in the "Options:"
// section of its help, and every flag the "Options:" section names is in the
// table. The help text and the flag table are two declarations of one thing;
// this keeps them from drifting. Also `--version` and the "did you mean"
// suggestions, through the real binary.
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/src/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof::cli::internal {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// The flags an "Options:" section names: on each line indented at most four
// spaces that starts with '-', every -x / --word before the description
// (which starts after two spaces). Deeper lines continue a description.
std::set<std::string> DocumentedFlags(std::string_view help) {
  std::set<std::string> flags;
  const size_t options = help.find("\nOptions:\n");
  if (options == std::string_view::npos) return flags;
  size_t begin = options + 10;
  while (begin < help.size()) {
    size_t end = help.find('\n', begin);
    if (end == std::string_view::npos) end = help.size();
    const std::string_view line = help.substr(begin, end - begin);
    begin = end + 1;
    if (line.rfind("Exit:", 0) == 0) break;
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos || indent > 4 || line[indent] != '-') {
      continue;
    }
    std::string_view head = line.substr(indent);
    head = head.substr(0, head.find("  "));
    for (size_t i = 0; i < head.size(); ++i) {
      if (head[i] != '-' || (i > 0 && head[i - 1] != ' ')) continue;
      size_t j = i;
      while (j < head.size() && head[j] == '-') ++j;
      while (j < head.size() &&
             (std::islower(static_cast<unsigned char>(head[j])) != 0 ||
              std::isdigit(static_cast<unsigned char>(head[j])) != 0 ||
              head[j] == '-')) {
        ++j;
      }
      flags.emplace(head.substr(i, j - i));
      i = j;
    }
  }
  return flags;
}

TEST(HelpFlagsTest, TheParserReadsAnOptionsSection) {
  const std::set<std::string> flags = DocumentedFlags(
      "text --not-this\n\nOptions:\n  -o, --output OUT  where\n"
      "                    -ftime-trace --nor-this\n  --from NS, --to NS  x\n"
      "  plot:\n  --rows N  y\n\nExit: 0 --never\n");
  EXPECT_EQ(flags, (std::set<std::string>{"-o", "--output", "--from", "--to",
                                          "--rows"}));
}

TEST(HelpFlagsTest, EveryAcceptedFlagIsDocumented) {
  for (const Command& command : Commands()) {
    const std::set<std::string> documented = DocumentedFlags(command.help);
    for (const FlagSpec& spec : command.flags()) {
      EXPECT_TRUE(documented.contains(std::string(spec.name)))
          << command.name << " accepts " << spec.name
          << " but its help's Options: do not list it";
      if (!spec.alias.empty()) {
        EXPECT_TRUE(documented.contains(std::string(spec.alias)))
            << command.name << " accepts " << spec.alias
            << " but its help's Options: do not list it";
      }
    }
  }
}

TEST(HelpFlagsTest, EveryDocumentedFlagIsAccepted) {
  for (const Command& command : Commands()) {
    std::set<std::string> accepted;
    for (const FlagSpec& spec : command.flags()) {
      accepted.emplace(spec.name);
      if (!spec.alias.empty()) accepted.emplace(spec.alias);
    }
    for (const std::string& flag : DocumentedFlags(command.help)) {
      EXPECT_TRUE(accepted.contains(flag))
          << command.name << "'s help lists " << flag
          << " but the command does not accept it";
    }
  }
}

// The VERSION of the top-level CMakeLists.txt's project() call.
std::string ProjectVersion() {
  const std::string cmake =
      testing::ReadText(SPANPROF_TEST_SOURCE_DIR "/CMakeLists.txt");
  const std::string marker = "project(spanprof VERSION ";
  const size_t at = cmake.find(marker);
  if (at == std::string::npos) return "(no project VERSION)";
  const size_t begin = at + marker.size();
  return cmake.substr(begin, cmake.find(' ', begin) - begin);
}

TEST(VersionTest, VersionFlagAndCommandPrintTheProjectVersion) {
  const std::string version = ProjectVersion();
  ASSERT_THAT(version, ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  for (const char* word : {"--version", "version"}) {
    const ProcessResult r = Spanprof({word});
    EXPECT_EQ(r.exit_code, 0) << word;
    EXPECT_EQ(r.out, "spanprof " + version + "\n") << word;
    EXPECT_THAT(r.err, IsEmpty()) << word;
  }
}

TEST(DidYouMeanTest, ACloseCommandIsSuggested) {
  const ProcessResult r = Spanprof({"reprot", "x.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'reprot'; did you mean "
                               "'report'?"));
  const ProcessResult version = Spanprof({"verison"});
  EXPECT_THAT(version.err, HasSubstr("did you mean 'version'?"));
}

TEST(DidYouMeanTest, AFarCommandIsNotGuessed) {
  const ProcessResult r = Spanprof({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'frobnicate'"));
  EXPECT_THAT(r.err, Not(HasSubstr("did you mean")));
}

TEST(DidYouMeanTest, ACloseFlagIsSuggested) {
  const ProcessResult r =
      Spanprof({"compare", "a.json", "b.json", "--metrc", "p95_ns"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --metrc (did you mean "
                               "--metric?)"));
  const ProcessResult far = Spanprof({"report", "a.json", "--colour"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_THAT(far.err, HasSubstr("unknown flag --colour"));
  EXPECT_THAT(far.err, Not(HasSubstr("did you mean")));
}

}  // namespace
}  // namespace spanprof::cli::internal
