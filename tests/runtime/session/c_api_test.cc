// The C API (spanprof/spanprof_c.h) from C++: spans nest with C++ spans and
// carry their arguments, tags and heartbeats; sites and keys are interned by
// content; sessions from the environment write the outputs; every failure is
// a status with a message, never an abort. (examples/c is the compiled C
// program; tests/e2e/c_example_test.cc runs it.)
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/spanprof.h"
#include "spanprof/spanprof_c.h"
#include "tests/testing/lookup.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::FindSpan;
using spanprof::testing::QuietConfig;
using spanprof::testing::ReadText;
using spanprof::testing::TempDir;

// Sets the SPANPROF* variables of one test (each test runs in its own
// process, so nothing leaks into another).
void SetEnvironment(const TempDir& dir) {
  setenv("SPANPROF", "1", 1);
  setenv("SPANPROF_OUT", dir.File("out/trace.json").c_str(), 1);
  setenv("SPANPROF_SUMMARY_OUT", dir.File("out/summary.json").c_str(), 1);
  setenv("SPANPROF_QUIET", "1", 1);
}

TEST(CApiTest, StringArgumentsAreCopiedCutAndChecked) {
  spanprof_site* site = spanprof_site_get("c.strings", NULL, NULL, NULL);
  spanprof_key* file = spanprof_key_get("file");
  ASSERT_TRUE(StartRecording(RecordingOptions{}).ok());
  const spanprof_token t = spanprof_begin(site);
  char name[] = "data/part-0001.csv";
  spanprof_arg_str(file, name);
  name[0] = 'X';  // copied at the call: a later change does not show
  const std::string long_text(100, 'a');
  spanprof_arg_str(file, long_text.c_str());
  spanprof_arg_strn(file, "abc\0def", 7);  // a size, not a NUL, ends it
  spanprof_arg_strn(file, "ok\xff", 3);    // invalid UTF-8
  spanprof_arg_str(file, NULL);            // nothing
  spanprof_arg_str(NULL, "x");             // nothing
  spanprof_end(t);
  spanprof_arg_str(file, "after");  // no span open: nothing
  const Capture c = StopRecording();

  const Span* s = FindSpan(c, "c.strings");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->arg_count, 4u);
  const SpanArg* args = &c.args[s->first_arg];
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(args[i].key, "file");
    EXPECT_TRUE(args[i].is_string);
  }
  EXPECT_EQ(args[0].text, "data/part-0001.csv");
  EXPECT_FALSE(args[0].truncated);
  EXPECT_EQ(args[1].text, std::string(kMaxArgTextBytes, 'a'));
  EXPECT_TRUE(args[1].truncated);
  EXPECT_EQ(args[2].text, std::string("abc\0def", 7));
  EXPECT_EQ(args[3].text, "ok\xef\xbf\xbd");  // U+FFFD
}

TEST(CApiTest, SpansNestWithCppSpansAndCarryArgsTagsAndHeartbeats) {
  spanprof_site* outer = spanprof_site_get("c.outer", "phase.c", "mod", NULL);
  spanprof_site* inner = spanprof_site_get("c.inner", NULL, NULL, "act");
  spanprof_key* count = spanprof_key_get("count");
  spanprof_key* ratio = spanprof_key_get("ratio");
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(inner, nullptr);
  ASSERT_TRUE(StartRecording(RecordingOptions{}).ok());
  EXPECT_EQ(spanprof_is_recording(), 1);
  spanprof_set_thread_name("c-thread");
  const spanprof_token a = spanprof_begin(outer);
  EXPECT_NE(a, 0u);
  spanprof_arg_int(count, -42);
  {
    SPANPROF_SCOPE("cpp.middle");
    const spanprof_token b = spanprof_begin(inner);
    spanprof_arg_double(ratio, 0.25);
    spanprof_heartbeat(5);
    spanprof_end(b);
  }
  spanprof_end(a);
  const Capture c = StopRecording();
  EXPECT_EQ(spanprof_is_recording(), 0);

  ASSERT_EQ(c.spans.size(), 3u);
  const Span* o = FindSpan(c, "c.outer");
  const Span* m = FindSpan(c, "cpp.middle");
  const Span* i = FindSpan(c, "c.inner");
  ASSERT_TRUE(o != nullptr && m != nullptr && i != nullptr);
  EXPECT_EQ(o->parent_id, 0u);
  EXPECT_EQ(m->parent_id, o->id);
  EXPECT_EQ(i->parent_id, m->id);
  EXPECT_EQ(i->depth, 2u);
  EXPECT_EQ(i->heartbeats, 5u);
  EXPECT_EQ(c.sites[o->site].phase, "phase.c");
  EXPECT_EQ(c.sites[o->site].module, "mod");
  EXPECT_EQ(c.sites[i->site].activity, "act");
  ASSERT_EQ(o->arg_count, 1u);
  EXPECT_EQ(c.args[o->first_arg].key, "count");
  EXPECT_EQ(c.args[o->first_arg].int_value, -42);
  ASSERT_EQ(i->arg_count, 1u);
  EXPECT_TRUE(c.args[i->first_arg].is_double);
  EXPECT_EQ(c.args[i->first_arg].double_value, 0.25);
  EXPECT_EQ(c.threads[o->thread].name, "c-thread");
}

TEST(CApiTest, SitesAndKeysAreInternedByContent) {
  std::string name = "c.site";
  std::string phase = "p";
  spanprof_site* first = spanprof_site_get(name.c_str(), phase.c_str(), "", "");
  // Other buffers with the same text, and NULL for an empty tag: one site.
  const std::string name_copy = name;
  spanprof_site* second = spanprof_site_get(name_copy.c_str(), "p", NULL, NULL);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, spanprof_site_get("c.site", "q", NULL, NULL));
  EXPECT_EQ(spanprof_key_get("k"), spanprof_key_get(std::string("k").c_str()));

  // The caller's buffer may change after the call: the site kept a copy.
  name.assign("overwritten");
  phase.assign("x");
  ASSERT_TRUE(StartRecording(RecordingOptions{}).ok());
  spanprof_end(spanprof_begin(first));
  const Capture c = StopRecording();
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_EQ(c.sites[c.spans[0].site].name, "c.site");
  EXPECT_EQ(c.sites[c.spans[0].site].phase, "p");
}

TEST(CApiTest, MissingNamesAreErrorsNotCrashes) {
  EXPECT_EQ(spanprof_site_get(NULL, NULL, NULL, NULL), nullptr);
  EXPECT_NE(std::string(spanprof_last_error()).find("non-empty name"),
            std::string::npos);
  EXPECT_EQ(spanprof_site_get("", "p", NULL, NULL), nullptr);
  EXPECT_EQ(spanprof_key_get(NULL), nullptr);
  ASSERT_TRUE(StartRecording(RecordingOptions{}).ok());
  EXPECT_EQ(spanprof_begin(NULL), 0u);
  spanprof_arg_int(NULL, 1);
  spanprof_arg_double(NULL, 1.0);
  spanprof_end(0);
  EXPECT_TRUE(StopRecording().spans.empty());
}

TEST(CApiTest, TaggedSitesCarryBackendDtypeAndDevice) {
  const spanprof_tags all{.phase = "compute",
                          .module = "kernels",
                          .activity = "gemm",
                          .backend = "cuda",
                          .dtype = "f16",
                          .device = "gpu0"};
  spanprof_site* matmul = spanprof_site_get_tagged("c.matmul", &all);
  // Any subset; the others unset.
  const spanprof_tags keys_only{.backend = "cpu", .device = "cpu0"};
  spanprof_site* copy = spanprof_site_get_tagged("c.copy", &keys_only);
  spanprof_site* bare = spanprof_site_get_tagged("c.bare", NULL);
  ASSERT_TRUE(matmul != nullptr && copy != nullptr && bare != nullptr)
      << spanprof_last_error();
  ASSERT_TRUE(StartRecording(RecordingOptions{}).ok());
  spanprof_end(spanprof_begin(matmul));
  spanprof_end(spanprof_begin(copy));
  spanprof_end(spanprof_begin(bare));
  const Capture c = StopRecording();

  ASSERT_EQ(c.spans.size(), 3u);
  const Span* m = FindSpan(c, "c.matmul");
  const Span* k = FindSpan(c, "c.copy");
  const Span* b = FindSpan(c, "c.bare");
  ASSERT_TRUE(m != nullptr && k != nullptr && b != nullptr);
  EXPECT_EQ(c.sites[m->site], (Site{.name = "c.matmul",
                                    .phase = "compute",
                                    .module = "kernels",
                                    .activity = "gemm",
                                    .backend = "cuda",
                                    .dtype = "f16",
                                    .device = "gpu0"}));
  EXPECT_EQ(c.sites[k->site],
            (Site{.name = "c.copy", .backend = "cpu", .device = "cpu0"}));
  EXPECT_EQ(c.sites[b->site], Site{.name = "c.bare"});
}

TEST(CApiTest, TaggedAndUntaggedLookupsShareOneSite) {
  spanprof_site* plain = spanprof_site_get("c.shared", "p", "m", "a");
  const spanprof_tags same{.phase = "p", .module = "m", .activity = "a"};
  EXPECT_EQ(spanprof_site_get_tagged("c.shared", &same), plain);
  // "" is unset, like NULL.
  const spanprof_tags empty_keys{.phase = "p",
                                 .module = "m",
                                 .activity = "a",
                                 .backend = "",
                                 .dtype = "",
                                 .device = ""};
  EXPECT_EQ(spanprof_site_get_tagged("c.shared", &empty_keys), plain);
  EXPECT_EQ(spanprof_site_get_tagged("c.untagged", NULL),
            spanprof_site_get("c.untagged", NULL, NULL, NULL));

  // Each key field is part of the key; equal strings in other buffers are
  // the same site.
  const spanprof_tags cuda{.phase = "p", .backend = "cuda"};
  const spanprof_tags f16{.phase = "p", .dtype = "f16"};
  const spanprof_tags gpu0{.phase = "p", .device = "gpu0"};
  spanprof_site* by_backend = spanprof_site_get_tagged("c.key", &cuda);
  spanprof_site* by_dtype = spanprof_site_get_tagged("c.key", &f16);
  spanprof_site* by_device = spanprof_site_get_tagged("c.key", &gpu0);
  EXPECT_NE(by_backend, by_dtype);
  EXPECT_NE(by_backend, by_device);
  EXPECT_NE(by_dtype, by_device);
  EXPECT_NE(by_backend, spanprof_site_get("c.key", "p", NULL, NULL));
  const std::string backend = "cuda";
  const spanprof_tags cuda_copy{.phase = "p", .backend = backend.c_str()};
  EXPECT_EQ(spanprof_site_get_tagged(std::string("c.key").c_str(), &cuda_copy),
            by_backend);
}

TEST(CApiTest, TaggedSiteWithoutANameIsAnError) {
  const spanprof_tags tags{.backend = "cuda"};
  EXPECT_EQ(spanprof_site_get_tagged(NULL, &tags), nullptr);
  EXPECT_NE(
      std::string(spanprof_last_error())
          .find("spanprof_site_get_tagged: a site needs a non-empty name"),
      std::string::npos)
      << spanprof_last_error();
  EXPECT_EQ(spanprof_site_get_tagged("", NULL), nullptr);
  EXPECT_NE(std::string(spanprof_last_error()).find("non-empty name"),
            std::string::npos);
}

TEST(CApiTest, WithoutASessionSpansAreNoOps) {
  spanprof_site* site = spanprof_site_get("c.idle", NULL, NULL, NULL);
  EXPECT_EQ(spanprof_is_recording(), 0);
  const spanprof_token token = spanprof_begin(site);
  EXPECT_EQ(token, 0u);
  spanprof_arg_int(spanprof_key_get("k"), 1);
  spanprof_end(token);
  // A token handed to a thread that never recorded, and a forged one, are
  // ignored.
  std::thread([] {
    spanprof_end(2);
    spanprof_end(UINT64_MAX);
  }).join();
  EXPECT_STREQ(spanprof_last_error(), "");
}

// A C program that leaves (exit(), or a return from main) with its session
// still open ends it normally: the open spans end then, flagged
// open_at_exit, and the capture is complete.
TEST(CApiTest, ASessionStillOpenAtExitEndsNormally) {
  TempDir dir;
  SetEnvironment(dir);
  EXPECT_EXIT(
      {
        if (spanprof_session_start_from_env("c.root") != SPANPROF_OK) {
          std::exit(2);
        }
        spanprof_site* work = spanprof_site_get("c.work", NULL, NULL, NULL);
        spanprof_end(spanprof_begin(work));
        static_cast<void>(spanprof_begin(work));  // left open
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  const absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->event_count, 3u);
  EXPECT_TRUE(summary->complete);
  EXPECT_EQ(summary->end_reason, "exit");
  EXPECT_EQ(summary->open_at_exit_events, 2u);
  EXPECT_EQ(summary->unfinished_events, 0u);
}

TEST(CApiTest, SessionFromEnvironmentWritesTraceAndSummary) {
  TempDir dir;
  SetEnvironment(dir);
  ASSERT_EQ(spanprof_session_start_from_env("c.root"), SPANPROF_OK)
      << spanprof_last_error();
  EXPECT_EQ(spanprof_is_recording(), 1);
  spanprof_site* work = spanprof_site_get("c.work", "compute", NULL, NULL);
  for (int k = 0; k < 3; ++k) spanprof_end(spanprof_begin(work));
  ASSERT_EQ(spanprof_session_stop(), SPANPROF_OK) << spanprof_last_error();
  EXPECT_EQ(spanprof_is_recording(), 0);

  const absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->event_count, 4u);
  EXPECT_TRUE(summary->complete);
  bool found_work = false;
  for (const analysis::Row& row : summary->rows) {
    if (row.key.name == "c.work") {
      found_work = true;
      EXPECT_EQ(row.calls, 3u);
      EXPECT_EQ(row.key.phase, "compute");
    }
  }
  EXPECT_TRUE(found_work);
  EXPECT_NE(ReadText(dir.File("out/trace.json")).find("\"c.root\""),
            std::string::npos);
  // A second stop finds no session.
  EXPECT_EQ(spanprof_session_stop(), SPANPROF_ERROR_SESSION);
  EXPECT_NE(std::string(spanprof_last_error()).find("no session"),
            std::string::npos);
}

// A C site and a C++ `SPANPROF_SCOPE` with the same name and six tags are
// one summary row, keyed by backend, dtype and device like any C++ row.
TEST(CApiTest, TaggedCSiteAndCppScopeWithOneKeyAreOneSummaryRow) {
  TempDir dir;
  SetEnvironment(dir);
  ASSERT_EQ(spanprof_session_start_from_env("c.root"), SPANPROF_OK)
      << spanprof_last_error();
  const spanprof_tags f16{
      .phase = "compute", .backend = "cuda", .dtype = "f16", .device = "gpu0"};
  const spanprof_tags f32{
      .phase = "compute", .backend = "cuda", .dtype = "f32", .device = "gpu0"};
  spanprof_site* c_f16 = spanprof_site_get_tagged("kernel.matmul", &f16);
  spanprof_site* c_f32 = spanprof_site_get_tagged("kernel.matmul", &f32);
  for (int k = 0; k < 2; ++k) spanprof_end(spanprof_begin(c_f16));
  for (int k = 0; k < 3; ++k) {
    SPANPROF_SCOPE("kernel.matmul", {.phase = "compute",
                                     .backend = "cuda",
                                     .dtype = "f16",
                                     .device = "gpu0"});
  }
  spanprof_end(spanprof_begin(c_f32));
  ASSERT_EQ(spanprof_session_stop(), SPANPROF_OK) << spanprof_last_error();

  const absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  const analysis::RowKey f16_key{.name = "kernel.matmul",
                                 .phase = "compute",
                                 .backend = "cuda",
                                 .dtype = "f16",
                                 .device = "gpu0"};
  analysis::RowKey f32_key = f16_key;
  f32_key.dtype = "f32";
  int found = 0;
  for (const analysis::Row& row : summary->rows) {
    if (row.key == f16_key) {
      ++found;
      EXPECT_EQ(row.calls, 5u);  // 2 from C, 3 from C++
      EXPECT_EQ(row.label,
                "kernel.matmul [phase=compute, backend=cuda, dtype=f16, "
                "device=gpu0]");
    } else if (row.key == f32_key) {
      ++found;
      EXPECT_EQ(row.calls, 1u);
    }
  }
  EXPECT_EQ(found, 2);
  EXPECT_NE(ReadText(dir.File("out/trace.json"))
                .find("\"backend\":\"cuda\",\"dtype\":\"f32\","
                      "\"device\":\"gpu0\""),
            std::string::npos);
}

TEST(CApiTest, StopNeverClosesACppSession) {
  TempDir dir;
  Config config = QuietConfig(dir);
  Profile(config, "cpp.root", [] {
    EXPECT_EQ(spanprof_session_stop(), SPANPROF_ERROR_SESSION);
    EXPECT_EQ(spanprof_is_recording(), 1);
  });
  EXPECT_TRUE(std::filesystem::exists(dir.File("out/summary.json")));
}

TEST(CApiTest, DisabledSessionStartsAndStopsAndWritesNothing) {
  TempDir dir;
  SetEnvironment(dir);
  setenv("SPANPROF", "0", 1);
  ASSERT_EQ(spanprof_session_start_from_env("c.root"), SPANPROF_OK);
  EXPECT_EQ(spanprof_is_recording(), 0);
  EXPECT_EQ(spanprof_begin(spanprof_site_get("c.work", NULL, NULL, NULL)), 0u);
  EXPECT_EQ(spanprof_session_stop(), SPANPROF_OK);
  EXPECT_FALSE(std::filesystem::exists(dir.File("out")));
}

TEST(CApiTest, BadEnvironmentIsAConfigErrorNamingTheVariable) {
  TempDir dir;
  SetEnvironment(dir);
  setenv("SPANPROF_MAX_EVENTS", "many", 1);
  EXPECT_EQ(spanprof_session_start_from_env("c.root"), SPANPROF_ERROR_CONFIG);
  EXPECT_NE(std::string(spanprof_last_error()).find("SPANPROF_MAX_EVENTS"),
            std::string::npos);
  EXPECT_EQ(spanprof_is_recording(), 0);
  EXPECT_EQ(spanprof_session_stop(), SPANPROF_ERROR_SESSION);
}

TEST(CApiTest, SecondSessionIsASessionError) {
  TempDir dir;
  SetEnvironment(dir);
  ASSERT_EQ(spanprof_session_start_from_env("c.root"), SPANPROF_OK);
  EXPECT_EQ(spanprof_session_start_from_env("c.again"), SPANPROF_ERROR_SESSION);
  EXPECT_NE(std::string(spanprof_last_error()).find("already active"),
            std::string::npos);
  // A C++ session meanwhile is refused too.
  EXPECT_THROW(Profile(Config{.quiet = true}, "cpp.root", [] {}), Error);
  EXPECT_EQ(spanprof_session_stop(), SPANPROF_OK) << spanprof_last_error();
}

TEST(CApiTest, StopFromAnotherThreadIsRefusedAndChangesNothing) {
  TempDir dir;
  SetEnvironment(dir);
  ASSERT_EQ(spanprof_session_start_from_env("c.root"), SPANPROF_OK);
  spanprof_status other = SPANPROF_OK;
  std::string message;
  std::thread([&] {
    other = spanprof_session_stop();
    message = spanprof_last_error();
  }).join();
  EXPECT_EQ(other, SPANPROF_ERROR_SESSION);
  EXPECT_NE(message.find("thread that started it"), std::string::npos);
  EXPECT_EQ(spanprof_is_recording(), 1);
  // The error message is per thread.
  EXPECT_STREQ(spanprof_last_error(), "");
  EXPECT_EQ(spanprof_session_stop(), SPANPROF_OK) << spanprof_last_error();
  EXPECT_TRUE(std::filesystem::exists(dir.File("out/summary.json")));
}

TEST(CApiTest, OutputErrorNamesThePathAndEndsTheSession) {
  TempDir dir;
  SetEnvironment(dir);
  setenv("SPANPROF_OUT", dir.File("blocker/trace.json").c_str(), 1);
  ASSERT_EQ(spanprof_session_start_from_env("c.root"), SPANPROF_OK);
  // A directory where the trace must go, made after the start's checks.
  std::filesystem::create_directories(dir.File("blocker/trace.json"));
  EXPECT_EQ(spanprof_session_stop(), SPANPROF_ERROR_OUTPUT);
  EXPECT_NE(std::string(spanprof_last_error()).find("blocker/trace.json"),
            std::string::npos)
      << spanprof_last_error();
  EXPECT_EQ(spanprof_is_recording(), 0);
  // The summary, whose path was fine, is written.
  EXPECT_TRUE(std::filesystem::exists(dir.File("out/summary.json")));
}

}  // namespace
}  // namespace spanprof
