// Output path templates (many processes, one setting): %p %h %n %t %% expand,
// and anything else after a '%' is refused at session start, naming the
// variable.
#include "runtime/session/path_template.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/session.h"

namespace spanprof {
namespace {

using internal::CheckPathTemplate;
using internal::ExpandPathTemplate;
using internal::PathFields;
using internal::UtcStamp;

TEST(PathTemplateTest, ExpandsEveryField) {
  const PathFields fields{.pid = 4242,
                          .host = "build-7",
                          .process_name = "worker",
                          .start_wall_ns = 1'700'000'000'123'456'789};
  EXPECT_EQ(ExpandPathTemplate("out/%n-%p@%h-%t-100%%.json", fields),
            "out/worker-4242@build-7-20231114T221320.123Z-100%.json");
  EXPECT_EQ(ExpandPathTemplate("plain/trace.json", fields), "plain/trace.json");
  EXPECT_EQ(ExpandPathTemplate("%p%p", fields), "42424242");
}

TEST(PathTemplateTest, ValuesAreMadeSafeForAPath) {
  const PathFields fields{.pid = 1, .host = "", .process_name = "a/b\tc"};
  EXPECT_EQ(ExpandPathTemplate("%n.%h", fields), "a_b_c.unknown");
  // A whole value `.` or `..` would name the directory or its parent.
  EXPECT_EQ(ExpandPathTemplate("out/%n/%h/t.json",
                               {.host = ".", .process_name = ".."}),
            "out/__/_/t.json");
  EXPECT_EQ(ExpandPathTemplate("out/%n.json", {.process_name = "..x"}),
            "out/..x.json");
}

TEST(PathTemplateTest, UtcStampsSortAsTime) {
  EXPECT_EQ(UtcStamp(0), "19700101T000000.000Z");
  EXPECT_EQ(UtcStamp(-1), "19691231T235959.999Z");
  EXPECT_LT(UtcStamp(1'700'000'000'999'000'000),
            UtcStamp(1'700'000'001'000'000'000));
}

TEST(PathTemplateTest, UnknownFieldsAreErrors) {
  EXPECT_TRUE(CheckPathTemplate("out/%n-%p-%h-%t-%%.json").ok());
  for (const char* bad : {"out/%q.json", "out/%P.json", "trace-%", "%%%"}) {
    const absl::Status s = CheckPathTemplate(bad);
    EXPECT_FALSE(s.ok()) << bad;
  }
  EXPECT_NE(CheckPathTemplate("x-%x").message().find("'%x'"),
            std::string::npos);
}

class PathTemplateEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("SPANPROF_OUT");
    unsetenv("SPANPROF_SUMMARY_OUT");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(PathTemplateEnvironmentTest, ABadFieldNamesTheVariable) {
  for (const char* name : {"SPANPROF_OUT", "SPANPROF_SUMMARY_OUT"}) {
    SetUp();
    setenv(name, "out/%x.json", 1);
    const absl::StatusOr<Config> config = ConfigFromEnvironment();
    ASSERT_FALSE(config.ok()) << name;
    EXPECT_NE(
        config.status().message().find(std::string(name) + "='out/%x.json'"),
        std::string::npos)
        << config.status();
  }
  SetUp();
  setenv("SPANPROF_OUT", "out/%n-%p-%t.json", 1);
  const absl::StatusOr<Config> good = ConfigFromEnvironment();
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->trace_path, "out/%n-%p-%t.json");  // expanded at the end
}

TEST(PathTemplateConfigTest, ABadFieldFailsBeforeTheBody) {
  Config config;
  config.quiet = true;
  config.summary_path = "out/%z.json";
  bool ran = false;
  try {
    Profile(config, "root", [&] { ran = true; });
    FAIL() << "expected spanprof::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("summary_path"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace spanprof
