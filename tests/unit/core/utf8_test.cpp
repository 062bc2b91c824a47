#include "llmbench/core/utf8.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace llmbench {
namespace {

using namespace std::string_view_literals;

// Table 3-7 of The Unicode Standard, row by row: the first and last well-formed sequence of each
// row, and the bytes just outside its second-byte range.
TEST(Utf8, SequenceLengthFollowsTable3_7) {
  EXPECT_EQ(utf8_sequence_length("\x7F"sv, 0), 1U);
  EXPECT_EQ(utf8_sequence_length("\xC2\x80"sv, 0), 2U);
  EXPECT_EQ(utf8_sequence_length("\xDF\xBF"sv, 0), 2U);
  EXPECT_EQ(utf8_sequence_length("\xC1\xBF"sv, 0), 0U);  // overlong 2-byte
  EXPECT_EQ(utf8_sequence_length("\xE0\xA0\x80"sv, 0), 3U);
  EXPECT_EQ(utf8_sequence_length("\xE0\x9F\xBF"sv, 0), 0U);  // overlong 3-byte
  EXPECT_EQ(utf8_sequence_length("\xED\x9F\xBF"sv, 0), 3U);  // U+D7FF
  EXPECT_EQ(utf8_sequence_length("\xED\xA0\x80"sv, 0), 0U);  // U+D800, a surrogate
  EXPECT_EQ(utf8_sequence_length("\xF0\x90\x80\x80"sv, 0), 4U);
  EXPECT_EQ(utf8_sequence_length("\xF0\x8F\xBF\xBF"sv, 0), 0U);  // overlong 4-byte
  EXPECT_EQ(utf8_sequence_length("\xF4\x8F\xBF\xBF"sv, 0), 4U);  // U+10FFFF
  EXPECT_EQ(utf8_sequence_length("\xF4\x90\x80\x80"sv, 0), 0U);  // above U+10FFFF
  EXPECT_EQ(utf8_sequence_length("\xF5\x80\x80\x80"sv, 0), 0U);
  EXPECT_EQ(utf8_sequence_length("\x80"sv, 0), 0U);           // lone continuation
  EXPECT_EQ(utf8_sequence_length("\xE4\xBD"sv, 0), 0U);       // cut by the end
  EXPECT_EQ(utf8_sequence_length("a\xE4\xBD\xA0"sv, 1), 3U);  // at an offset
}

TEST(Utf8, FirstInvalidAndValid) {
  EXPECT_EQ(utf8_first_invalid(""sv), 0U);
  EXPECT_TRUE(utf8_valid("h\xC3\xA9llo \xE4\xBD\xA0\xF0\x9F\x98\x80"sv));
  EXPECT_EQ(utf8_first_invalid("ab\xC3"sv), 2U);
  EXPECT_EQ(utf8_first_invalid("ab\xED\xA0\x80z"sv), 2U);
  EXPECT_EQ(utf8_first_invalid("\xE4\xBD\xA0\xFF"sv), 3U);
  EXPECT_FALSE(utf8_valid("\xC0\x80"sv));
}

// Unicode §3.9, Table 3-8 ("U+FFFD for Non-Shortest Form Sequences" and the truncated-sequence
// example): 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 gives a, FFFD, FFFD, FFFD, b, FFFD, c, FFFD,
// FFFD, d.
TEST(Utf8, LossyReplacesMaximalSubparts) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8_lossy("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"sv),
            "a" + r + r + r + "b" + r + "c" + r + r + "d");
  EXPECT_EQ(utf8_lossy("\xC0\xAF"sv), r + r);  // C0 starts nothing: two subparts
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"sv), r + r + r);
  EXPECT_EQ(utf8_lossy("ok \xE4\xBD\xA0"sv), "ok \xE4\xBD\xA0");
  EXPECT_EQ(utf8_maximal_subpart("\xF0\x9F\x98"sv, 0), 3U);
  EXPECT_EQ(utf8_maximal_subpart("\xF0\x9F\x41"sv, 0), 2U);
}

TEST(Utf8, IncompleteTailKeepsOnlyAWellFormedPrefix) {
  EXPECT_EQ(utf8_incomplete_tail(""sv), 0U);
  EXPECT_EQ(utf8_incomplete_tail("abc"sv), 0U);
  EXPECT_EQ(utf8_incomplete_tail("a\xE4"sv), 1U);
  EXPECT_EQ(utf8_incomplete_tail("a\xE4\xBD"sv), 2U);
  EXPECT_EQ(utf8_incomplete_tail("a\xE4\xBD\xA0"sv), 0U);  // complete
  EXPECT_EQ(utf8_incomplete_tail("\xF0\x9F\x98"sv), 3U);
  EXPECT_EQ(utf8_incomplete_tail("\xE0\x80"sv), 0U);  // second byte out of range: invalid
  EXPECT_EQ(utf8_incomplete_tail("\x80\x80"sv), 0U);  // no lead within three bytes
}

TEST(Utf8, FloorAndCount) {
  const std::string_view s = "a\xE4\xBD\xA0z";  // a 你 z
  EXPECT_EQ(utf8_floor(s, 0), 0U);
  EXPECT_EQ(utf8_floor(s, 1), 1U);
  EXPECT_EQ(utf8_floor(s, 2), 1U);
  EXPECT_EQ(utf8_floor(s, 3), 1U);
  EXPECT_EQ(utf8_floor(s, 4), 4U);
  EXPECT_EQ(utf8_floor(s, 99), s.size());
  EXPECT_EQ(utf8_count_code_points(s), 3U);
  EXPECT_EQ(utf8_lead(0xE0).second_lo, 0xA0);
  EXPECT_EQ(utf8_lead(0xF4).second_hi, 0x8F);
  EXPECT_EQ(utf8_lead(0xC1).length, 0U);
}

}  // namespace
}  // namespace llmbench
