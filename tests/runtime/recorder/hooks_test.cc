// Span hooks and string arguments: prepare,
// complete (before the end timestamp) and enrich (after it), failures
// recorded on the span, and SPANPROF_ARG_STR's bounded copy.
#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"
#include "tests/testing/lookup.h"

namespace spanprof {
namespace {

using ::spanprof::testing::FindSpan;

std::vector<SpanArg> ArgsOf(const Capture& c, const Span& s) {
  return {c.args.begin() + s.first_arg,
          c.args.begin() + s.first_arg + s.arg_count};
}

const SpanArg* FindArg(const Capture& c, const Span& s,
                       const std::string& key) {
  for (uint32_t a = s.first_arg; a < s.first_arg + s.arg_count; ++a) {
    if (c.args[a].key == key) return &c.args[a];
  }
  return nullptr;
}

TEST(HooksTest, CompleteRunsBeforeTheEndAndEnrichAfter) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::vector<std::string> order;
  std::promise<void> done;
  std::future<void> work = done.get_future();
  std::thread device([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    done.set_value();
  });
  const auto hooks = Hooks{}
                         .WithPrepare([&] { order.push_back("prepare"); })
                         .WithComplete([&] {
                           work.wait();  // the span covers the completion
                           order.push_back("complete");
                         })
                         .WithEnrich([&] {
                           order.push_back("enrich");
                           SPANPROF_ARG("device_bytes", 4096);
                           SPANPROF_COUNT("kernels", 2);
                         });
  {
    SPANPROF_SCOPE("outer");
    spanprof::Run("kernel.launch", {.phase = "compute"}, hooks, [&] {
      order.push_back("body");
      SPANPROF_ARG("grid", 8);
    });
  }
  device.join();
  const Capture c = StopRecording();
  EXPECT_EQ(order, (std::vector<std::string>{"prepare", "body", "complete",
                                             "enrich"}));
  const Span* kernel = FindSpan(c, "kernel.launch");
  const Span* outer = FindSpan(c, "outer");
  ASSERT_NE(kernel, nullptr);
  ASSERT_NE(outer, nullptr);
  // The completion's 20 ms belong to the span (its end is after the wait).
  EXPECT_GE(kernel->end_ns - kernel->start_ns, 15'000'000);
  // Enrich's arguments and counts belong to the kernel span, not the outer.
  const SpanArg* bytes = FindArg(c, *kernel, "device_bytes");
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(bytes->int_value, 4096);
  const SpanArg* kernels = FindArg(c, *kernel, "kernels");
  ASSERT_NE(kernels, nullptr);
  EXPECT_TRUE(kernels->is_counter);
  EXPECT_EQ(kernels->int_value, 2);
  EXPECT_NE(FindArg(c, *kernel, "grid"), nullptr);
  EXPECT_EQ(outer->arg_count, 0u);
  EXPECT_EQ(kernel->flags, 0u);
}

// The designated-initializer form (docs/api.md) deduces the hooks' types
// from the initializers. Clang 14-16 refuse that deduction (Clang 17 and
// GCC 11 accept it), so this case is built where it compiles; the other cases
// use the chained form, which every compiler takes.
#if !defined(__clang__) || __clang_major__ >= 17
TEST(HooksTest, TheDesignatedInitializerFormIsTheChainedForm) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::vector<std::string> order;
  spanprof::Run("designated",
                Hooks{.prepare = [&] { order.push_back("prepare"); },
                      .enrich = [&] { SPANPROF_ARG("enriched", 1); }},
                [&] { order.push_back("body"); });
  const Capture c = StopRecording();
  EXPECT_EQ(order, (std::vector<std::string>{"prepare", "body"}));
  const Span* span = FindSpan(c, "designated");
  ASSERT_NE(span, nullptr);
  EXPECT_NE(FindArg(c, *span, "enriched"), nullptr);
}
#endif

TEST(HooksTest, AThrowingHookIsRecordedOnTheSpanAndNeverThrowsOut) {
  ASSERT_TRUE(StartRecording({}).ok());
  const auto failing_complete =
      Hooks{}.WithComplete([] { throw std::runtime_error("device lost"); });
  const auto failing_enrich =
      Hooks{}.WithEnrich([] { throw std::runtime_error("no counters"); });
  int ran = 0;
  spanprof::Run("completes.badly", failing_complete, [&] { ++ran; });
  spanprof::Run("enriches.badly", failing_enrich, [&] { ++ran; });
  // The body's exception wins over the hook's.
  EXPECT_THROW(spanprof::Run("both.throw", failing_complete,
                             [] { throw std::logic_error("body"); }),
               std::logic_error);
  const Capture c = StopRecording();
  EXPECT_EQ(ran, 2);
  for (const char* name : {"completes.badly", "enriches.badly", "both.throw"}) {
    const Span* s = FindSpan(c, name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_TRUE(s->flags & kSpanHookFailed) << name;
    const SpanArg* error = FindArg(c, *s, "hook_error");
    ASSERT_NE(error, nullptr) << name;
    EXPECT_TRUE(error->is_string);
  }
  EXPECT_EQ(FindArg(c, *FindSpan(c, "completes.badly"), "hook_error")->text,
            "complete: device lost");
  EXPECT_EQ(FindArg(c, *FindSpan(c, "enriches.badly"), "hook_error")->text,
            "enrich: no counters");
  EXPECT_TRUE(FindSpan(c, "both.throw")->flags & kSpanException);
}

TEST(HooksTest, AFailedPrepareRecordsNoSpanButRunsTheBody) {
  ASSERT_TRUE(StartRecording({}).ok());
  int ran = 0;
  int completed = 0;
  spanprof::Run("refused",
                Hooks{}.WithPrepare([] { return false; }).WithComplete([&] {
                  ++completed;
                }),
                [&] { ++ran; });
  spanprof::Run("refused.throwing", Hooks{}.WithPrepare([] {
    throw std::runtime_error("no device");
  }),
                [&] { ++ran; });
  spanprof::Run("accepted", Hooks{}.WithPrepare([] { return true; }),
                [&] { ++ran; });
  const Capture c = StopRecording();
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(completed, 0);  // no span, no complete
  EXPECT_EQ(FindSpan(c, "refused"), nullptr);
  EXPECT_EQ(FindSpan(c, "refused.throwing"), nullptr);
  EXPECT_NE(FindSpan(c, "accepted"), nullptr);
  EXPECT_EQ(c.failed_prepares, 2u);
}

TEST(HooksTest, TheScopeFormAndHooksWithoutASession) {
  int completed = 0;
  const auto hooks = Hooks{}.WithComplete([&] { ++completed; });
  { SPANPROF_SCOPE_WITH_HOOKS(hooks, "no.session"); }
  EXPECT_EQ(completed, 1);  // hooks run whether or not a session records
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE_WITH_HOOKS(hooks, "scoped", {.phase = "io"}); }
  const Capture c = StopRecording();
  EXPECT_EQ(completed, 2);
  const Span* s = FindSpan(c, "scoped");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(c.sites[s->site].phase, "io");
}

TEST(StringArgTest, CopiesBoundedTextAndMarksTruncation) {
  ASSERT_TRUE(StartRecording({}).ok());
  const std::string long_text(100, 'x');
  // 62 ASCII bytes then a 3-byte character across the 64-byte bound.
  const std::string cut = std::string(62, 'a') + "\xE2\x82\xAC" + "tail";
  {
    SPANPROF_SCOPE("file.read");
    SPANPROF_ARG_STR("file", std::string("src/main.cc"));
    SPANPROF_ARG_STR("empty", "");
    SPANPROF_ARG_STR("null", static_cast<const char*>(nullptr));
    SPANPROF_ARG_STR("long", long_text);
    SPANPROF_ARG_STR("cut", cut);
    SPANPROF_ARG_STR("bad", "ok\xFF");
    SPANPROF_ARG("bytes", 42);
  }
  const Capture c = StopRecording();
  const Span* s = FindSpan(c, "file.read");
  ASSERT_NE(s, nullptr);
  const std::vector<SpanArg> args = ArgsOf(c, *s);
  ASSERT_EQ(args.size(), 7u);
  EXPECT_TRUE(args[0].is_string);
  EXPECT_EQ(args[0].text, "src/main.cc");
  EXPECT_FALSE(args[0].truncated);
  EXPECT_EQ(args[1].text, "");
  EXPECT_EQ(args[2].text, "");
  EXPECT_EQ(args[3].text, std::string(kMaxArgTextBytes, 'x'));
  EXPECT_TRUE(args[3].truncated);
  EXPECT_EQ(args[4].text, std::string(62, 'a'));  // never half a character
  EXPECT_TRUE(args[4].truncated);
  EXPECT_EQ(args[5].text, "ok\xEF\xBF\xBD");  // U+FFFD for the bad byte
  EXPECT_FALSE(args[6].is_string);
  EXPECT_EQ(args[6].int_value, 42);
}

TEST(StringArgTest, TheCapBoundsStringArguments) {
  RecordingOptions options;
  options.max_events = 4;  // a side budget of 4 records
  ASSERT_TRUE(StartRecording(options).ok());
  {
    SPANPROF_SCOPE("kept");
    SPANPROF_ARG_STR("first", std::string(40, 'f'));   // 1 + 2 records
    SPANPROF_ARG_STR("second", std::string(40, 's'));  // refused midway
  }
  const Capture c = StopRecording();
  const Span* s = FindSpan(c, "kept");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->arg_count, 1u);
  EXPECT_EQ(c.args[s->first_arg].text, std::string(40, 'f'));
  EXPECT_EQ(c.dropped_args, 1u);
}

}  // namespace
}  // namespace spanprof
