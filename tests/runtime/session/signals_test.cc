// The session's signal handlers: installed only over the default action,
// never over the program's own, and put back when the session ends.
#include <csignal>
#include <exception>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::QuietConfig;
using spanprof::testing::TempDir;

struct sigaction ActionOf(int sig) {
  struct sigaction action {};
  sigaction(sig, nullptr, &action);
  return action;
}

bool IsDefault(int sig) {
  const struct sigaction action = ActionOf(sig);
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_DFL;
}

void ProgramsOwnHandler(int) {}

// Puts a signal's action back as it was when the guard was made, so a case
// that installs its own handler leaves the next case (in the same process,
// as a plain run of the binary has them) the actions it expects.
class ActionGuard {
 public:
  explicit ActionGuard(int sig) : sig_(sig), saved_(ActionOf(sig)) {}
  ActionGuard(const ActionGuard&) = delete;
  ActionGuard& operator=(const ActionGuard&) = delete;
  ~ActionGuard() { sigaction(sig_, &saved_, nullptr); }

 private:
  int sig_;
  struct sigaction saved_;
};

TEST(SignalsTest, DefaultActionsAreTakenDuringTheSessionAndPutBack) {
  TempDir dir;
  // (A sanitizer's runtime handles SIGSEGV itself: SIGABRT stands for the
  // fatal signals here.)
  ASSERT_TRUE(IsDefault(SIGTERM));
  ASSERT_TRUE(IsDefault(SIGABRT));
  const std::terminate_handler before = std::get_terminate();
  Profile(QuietConfig(dir, ""), "signals.root", [&] {
    EXPECT_FALSE(IsDefault(SIGTERM));
    EXPECT_FALSE(IsDefault(SIGINT));
    EXPECT_FALSE(IsDefault(SIGABRT));
    EXPECT_NE(std::get_terminate(), before);
  });
  EXPECT_TRUE(IsDefault(SIGTERM));
  EXPECT_TRUE(IsDefault(SIGINT));
  EXPECT_TRUE(IsDefault(SIGABRT));
  EXPECT_EQ(std::get_terminate(), before);
}

TEST(SignalsTest, TheProgramsOwnHandlersStay) {
  TempDir dir;
  const ActionGuard term_guard(SIGTERM);
  const ActionGuard hup_guard(SIGHUP);
  struct sigaction own {};
  own.sa_handler = ProgramsOwnHandler;
  sigemptyset(&own.sa_mask);
  ASSERT_EQ(sigaction(SIGTERM, &own, nullptr), 0);
  ASSERT_EQ(signal(SIGHUP, SIG_IGN), SIG_DFL);
  Profile(QuietConfig(dir, ""), "signals.root", [&] {
    EXPECT_EQ(ActionOf(SIGTERM).sa_handler, ProgramsOwnHandler);
    EXPECT_EQ(ActionOf(SIGHUP).sa_handler, SIG_IGN);
    EXPECT_FALSE(IsDefault(SIGINT));  // still the default: spanprof's now
  });
  EXPECT_EQ(ActionOf(SIGTERM).sa_handler, ProgramsOwnHandler);
  EXPECT_EQ(ActionOf(SIGHUP).sa_handler, SIG_IGN);
  EXPECT_TRUE(IsDefault(SIGINT));
}

TEST(SignalsTest, SignalsOffLeavesEveryActionAlone) {
  TempDir dir;
  Config config = QuietConfig(dir, "");
  config.signals = false;
  const std::terminate_handler before = std::get_terminate();
  Profile(config, "signals.root", [&] {
    EXPECT_TRUE(IsDefault(SIGTERM));
    EXPECT_TRUE(IsDefault(SIGABRT));
    EXPECT_EQ(std::get_terminate(), before);
  });
}

}  // namespace
}  // namespace spanprof
