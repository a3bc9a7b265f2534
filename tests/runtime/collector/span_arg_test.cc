// SpanArg's key and text: 8 bytes each, read and compared as strings. A key
// is interned once per process, so equal names share one text; a text is
// held only when there is one, and copies of it are independent. Its
// integer and double values share 8 bytes: equality reads the one
// `is_double` names.
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/capture.h"

namespace spanprof {
namespace {

TEST(SpanArgTest, EqualNamesShareOneInternedText) {
  const std::string name = "bytes_" + std::to_string(7);  // not a literal
  const ArgKey a = name;
  const ArgKey b = std::string_view("bytes_7");
  const ArgKey c = "bytes_8";
  EXPECT_EQ(&a.str(), &b.str());
  EXPECT_NE(&a.str(), &c.str());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_LT(a, c);
  // The key outlives the string it was made from.
  std::string temporary = "made.at.run.time";
  const ArgKey key = temporary;
  temporary.assign(temporary.size(), 'x');
  EXPECT_EQ(key, "made.at.run.time");
}

TEST(SpanArgTest, AKeyReadsAndComparesAsAString) {
  const ArgKey key = "items";
  const std::string& as_string = key;
  const std::string_view as_view = key;
  EXPECT_EQ(as_string, "items");
  EXPECT_EQ(as_view, "items");
  EXPECT_EQ(key, std::string("items"));
  EXPECT_EQ(key, std::string_view("items"));
  EXPECT_EQ("args." + key, "args.items");
  EXPECT_EQ(std::string("args.") + key, "args.items");
  EXPECT_EQ(key + ".sum", "items.sum");
  std::ostringstream out;
  out << key;
  EXPECT_EQ(out.str(), "items");
  std::map<std::string, int> by_name;
  by_name[key] = 1;
  EXPECT_EQ(by_name.count("items"), 1u);
  const ArgKey empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty, "");
}

TEST(SpanArgTest, ThreadsInterningTheSameNamesAgree) {
  // Each thread sees its own recent names first, then the shared table.
  std::vector<const std::string*> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < 1000; ++i) {
        const ArgKey other = "other." + std::to_string(i);
        static_cast<void>(other);
      }
      seen[t] = &ArgKey("shared.by.threads").str();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string* s : seen) EXPECT_EQ(s, seen[0]);
}

TEST(SpanArgTest, ATextIsHeldOnlyWhenThereIsOneAndCopiesAreIndependent) {
  SpanArg numeric;
  numeric.key = "n";
  numeric.int_value = 3;
  EXPECT_TRUE(numeric.text.empty());
  EXPECT_EQ(numeric.text, "");

  SpanArg text;
  text.key = "label";
  text.is_string = true;
  text.text = std::string("item-1");
  SpanArg copy = text;
  EXPECT_EQ(copy, text);
  copy.text = "item-2";
  EXPECT_EQ(text.text, "item-1");
  EXPECT_EQ(copy.text, "item-2");
  EXPECT_NE(copy, text);
  copy.text.assign("item-1", 6);
  EXPECT_EQ(copy, text);
  const std::string_view view = text.text;
  EXPECT_EQ(view, "item-1");
  EXPECT_EQ(text.text.size(), 6u);
}

TEST(SpanArgTest, TheValueIsReadAsTheKindIsDoubleNames) {
  static_assert(sizeof(SpanArg) == 32);
  const SpanArg ratio{.key = "ratio", .double_value = 0.5, .is_double = true};
  const SpanArg same{.key = "ratio", .double_value = 0.5, .is_double = true};
  const SpanArg other{.key = "ratio", .double_value = 0.25, .is_double = true};
  EXPECT_EQ(ratio.double_value, 0.5);
  EXPECT_EQ(ratio, same);
  EXPECT_NE(ratio, other);
  // The same 8 bytes read as an integer are another argument.
  SpanArg bits{.key = "ratio", .int_value = ratio.int_value};
  EXPECT_NE(bits, ratio);
  bits.is_double = true;
  EXPECT_EQ(bits, ratio);
  // A NaN equals nothing, as a double does.
  const SpanArg nan{.key = "x",
                    .double_value = std::numeric_limits<double>::quiet_NaN(),
                    .is_double = true};
  EXPECT_TRUE(std::isnan(nan.double_value));
  EXPECT_NE(nan, nan);
  // An integer argument, a counter and a string argument compare their own
  // fields: the integer, the flag, the text.
  const SpanArg items{.key = "items", .int_value = 7};
  EXPECT_EQ(items, (SpanArg{.key = "items", .int_value = 7}));
  EXPECT_NE(items, (SpanArg{.key = "items", .int_value = 8}));
  EXPECT_NE(items,
            (SpanArg{.key = "items", .int_value = 7, .is_counter = true}));
  EXPECT_NE(items, (SpanArg{.key = "other", .int_value = 7}));
  const SpanArg label{.key = "label", .text = "a", .is_string = true};
  EXPECT_EQ(label.int_value, 0);
  EXPECT_NE(label, (SpanArg{.key = "label", .text = "b", .is_string = true}));
  EXPECT_NE(
      label,
      (SpanArg{
          .key = "label", .text = "a", .is_string = true, .truncated = true}));
}

}  // namespace
}  // namespace spanprof
