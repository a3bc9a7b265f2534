// The embeddable router, run in-process with string streams: dispatch,
// help, usage errors and the program name in messages.
#include "spanprof/cli/router.h"

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace spanprof::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

Result RunWith(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::ostringstream out;
  std::ostringstream err;
  Result result;
  result.code = Run(static_cast<int>(words.size()), argv.data(), out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

const char* const kCommands[] = {"compare",   "report", "validate",
                                 "summarize", "folded", "plot",
                                 "scaling",   "run",    "ab"};

TEST(RouterTest, NoCommandIsAUsageError) {
  const Result r = RunWith({"spanprof"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, HasSubstr("usage: spanprof <command>"));
  for (const char* command : kCommands) EXPECT_THAT(r.err, HasSubstr(command));
}

TEST(RouterTest, UnknownCommandIsAUsageError) {
  const Result r = RunWith({"/usr/bin/spanprof", "comapre", "a", "b"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, StartsWith("spanprof: unknown command 'comapre'"));
  EXPECT_THAT(r.err, HasSubstr("usage: spanprof <command>"));
}

TEST(RouterTest, HelpOnStdout) {
  for (const char* flag : {"--help", "-h", "help"}) {
    const Result r = RunWith({"spanprof", flag});
    EXPECT_EQ(r.code, kExitPass) << flag;
    EXPECT_THAT(r.out, HasSubstr("usage: spanprof <command>"));
    EXPECT_THAT(r.err, IsEmpty());
  }
}

TEST(RouterTest, EveryCommandHasHelp) {
  for (const char* command : kCommands) {
    for (const char* flag : {"--help", "-h"}) {
      const Result r = RunWith({"spanprof", command, flag});
      EXPECT_EQ(r.code, kExitPass) << command;
      EXPECT_THAT(r.out, StartsWith(std::string("usage: spanprof ") + command));
      EXPECT_THAT(r.err, IsEmpty());
    }
    const Result via_help = RunWith({"spanprof", "help", command});
    EXPECT_EQ(via_help.code, kExitPass);
    EXPECT_THAT(via_help.out,
                StartsWith(std::string("usage: spanprof ") + command));
  }
  // Help wins over an otherwise bad command line.
  EXPECT_EQ(RunWith({"spanprof", "compare", "--bogus", "--help"}).code,
            kExitPass);
  EXPECT_EQ(RunWith({"spanprof", "help", "nope"}).code, kExitUsage);
}

TEST(RouterTest, CompareHelpDocumentsTheRule) {
  const Result r = RunWith({"spanprof", "compare", "--help"});
  EXPECT_THAT(r.out, HasSubstr("Δ > ABS   and   Δ × 10000 > BPS × BASE"));
  EXPECT_THAT(r.out, HasSubstr("--allow-incomplete"));
  EXPECT_THAT(r.out, HasSubstr("--allow-missing"));
  EXPECT_THAT(r.out, HasSubstr("--relative-tolerance REL"));
  EXPECT_THAT(r.out, HasSubstr("more than 10% of BASE's recorded thread time"));
  EXPECT_THAT(r.out, HasSubstr("Example:"));
}

TEST(RouterTest, UnknownFlagsAndMissingArgumentsAreUsageErrors) {
  struct Case {
    std::vector<std::string> words;
    std::string message;
  };
  const Case cases[] = {
      {{"spanprof", "compare", "a.json"},
       "spanprof compare: missing argument CAND"},
      {{"spanprof", "compare", "a", "b", "--tolerance=5"},
       "spanprof compare: unknown flag --tolerance"},
      {{"spanprof", "report"}, "spanprof report: missing argument FILE"},
      {{"spanprof", "report", "a", "b"},
       "spanprof report: unexpected argument \"b\""},
      {{"spanprof", "report", "--colour", "a"},
       "spanprof report: unknown flag --colour"},
      {{"spanprof", "validate"}, "spanprof validate: missing argument FILE"},
      {{"spanprof", "summarize"}, "spanprof summarize: missing argument TRACE"},
      {{"spanprof", "summarize", "t.json", "-o"},
       "spanprof summarize: flag --output needs a value"},
      {{"spanprof", "folded", "t.json", "--format", "x"},
       "spanprof folded: unknown flag --format"},
  };
  for (const Case& c : cases) {
    const Result r = RunWith(c.words);
    EXPECT_EQ(r.code, kExitUsage) << c.message;
    EXPECT_THAT(r.err, StartsWith(c.message));
    EXPECT_THAT(r.err, HasSubstr("usage: spanprof " + c.words[1]));
    EXPECT_THAT(r.out, IsEmpty());
  }
}

TEST(RouterTest, UsesTheEmbeddingProgramsName) {
  const Result r = RunWith({"/opt/bin/myapp", "report"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, StartsWith("myapp report: missing argument FILE"));
  EXPECT_THAT(r.err, HasSubstr("usage: myapp report FILE"));
}

TEST(RouterTest, UnreadableFileIsExitTwo) {
  const Result r = RunWith({"spanprof", "report", "/nonexistent/x.json"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, StartsWith("spanprof report: "));
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/x.json"));
}

}  // namespace
}  // namespace spanprof::cli
