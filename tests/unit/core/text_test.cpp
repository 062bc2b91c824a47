#include "llmbench/core/text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace llmbench {
namespace {

TEST(Text, TrimRemovesAsciiSpaceOnBothEnds) {
  EXPECT_EQ(trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(trim("\v\fx"), "x");
  EXPECT_EQ(trim(" \t\r\n"), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("--x--", "-"), "x");
  EXPECT_EQ(trim("\xC2\xA0x"), "\xC2\xA0x");  // no-break space is not ASCII space
}

TEST(Text, IsBlank) {
  EXPECT_TRUE(is_blank(""));
  EXPECT_TRUE(is_blank(" \t\r\n\v\f"));
  EXPECT_FALSE(is_blank(" x "));
  EXPECT_FALSE(is_blank("\n", " \t"));
}

TEST(Text, TokenEstimateCountsAsciiByFourAndCodePointsByOne) {
  EXPECT_EQ(estimate_text_tokens(""), 0);
  EXPECT_EQ(estimate_text_tokens("abcd"), 1);
  EXPECT_EQ(estimate_text_tokens("abcde"), 2);
  EXPECT_EQ(estimate_text_tokens("\xE4\xBD\xA0\xE5\xA5\xBD"), 2);  // 你好
  EXPECT_EQ(estimate_text_tokens("ab\xE4\xBD\xA0"), 2);            // ceil(2/4) + 1
  EXPECT_EQ(estimate_text_tokens("\x80\x80"), 0);  // stray continuation bytes add nothing
}

TEST(Text, TokenEstimateIsAdditiveOverPieces) {
  const std::string a = "The quick brown ";
  const std::string b = "fox \xE4\xBD\xA0 jumps";
  TextTokenEstimate pieces;
  pieces.add(a);
  pieces.add(b);
  EXPECT_EQ(pieces.value(), estimate_text_tokens(a + b));
  EXPECT_EQ(pieces.ascii_bytes, static_cast<std::int64_t>(a.size() + b.size() - 3));
  EXPECT_EQ(pieces.non_ascii_code_points, 1);
}

}  // namespace
}  // namespace llmbench
