#include "common/pattern.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace repro_audit {
namespace {

TEST(Pattern, MatchesTheWholeTextOnlyAndSearchesAnywhere) {
  const Pattern device("auto|cpu|cuda(:[0-9]+)?");
  EXPECT_TRUE(device.matches("cuda:1"));
  EXPECT_FALSE(device.matches("cuda:1 "));
  EXPECT_FALSE(device.match("xcpu"));
  EXPECT_TRUE(device.found_in("xcpu"));
  EXPECT_FALSE(Pattern("[0-9]+,[0-9]+").found_in("1;2"));
}

TEST(Pattern, GivesEveryGroupWithAnEmptyOneThatTookNoPart) {
  const auto whole = Pattern(R"(([0-9]+(\.[0-9]+)?)(s|m|h)?)").match("90");
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, (MatchGroups{"90", "90", "", ""}));
  const auto first = Pattern(R"((\d+) ([A-Z-]+))").search("Cells: 3 SAME, 2 SLOWER");
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, (MatchGroups{"3 SAME", "3", "SAME"}));
}

TEST(Pattern, FindsEveryMatchInOrderAndReplacesEach) {
  const Pattern count(R"((\d+) ([A-Z-]+))");
  const auto all = count.search_all("3 SAME, 2 SLOWER, 10 FASTER");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1], (MatchGroups{"2 SLOWER", "2", "SLOWER"}));
  EXPECT_EQ(all[2][1], "10");
  EXPECT_TRUE(count.search_all("none here").empty());
  EXPECT_EQ(count.replace("3 SAME, 2 SLOWER", "$2=$1"), "SAME=3, SLOWER=2");
  EXPECT_EQ(Pattern("\"").replace(R"("a" "b")", ""), "a b");
}

TEST(Pattern, AnExpressionThatIsNoneIsRefusedAndAMovedPatternStillMatches) {
  EXPECT_THROW(Pattern("(unclosed"), std::runtime_error);
  Pattern moved("a+");
  const Pattern kept = std::move(moved);
  EXPECT_TRUE(kept.matches("aaa"));
}

}  // namespace
}  // namespace repro_audit
