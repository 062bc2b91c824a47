#include "llmbench/core/suggest.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench {
namespace {

TEST(EditDistance, CountsInsertDeleteSubstituteAndAdjacentSwap) {
  EXPECT_EQ(edit_distance("", ""), 0U);
  EXPECT_EQ(edit_distance("abc", ""), 3U);
  EXPECT_EQ(edit_distance("", "ab"), 2U);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
  EXPECT_EQ(edit_distance("p99_tfft_ms", "p99_ttft_ms"), 1U);  // one adjacent swap
  EXPECT_EQ(edit_distance("ca", "abc"), 3U);                   // optimal alignment, not Damerau
  EXPECT_EQ(edit_distance("Max_Concurrency", "max_concurrency"), 0U);
  EXPECT_EQ(edit_distance("max-concurency", "max-concurrency"), 1U);
}

TEST(ClosestNames, SuggestsNearNamesAndNothingForFarOnes) {
  const std::vector<std::string> keys{"mean_ttft_ms", "p99_ttft_ms",       "p99_tpot_ms",
                                      "p99_itl_ms",   "output_throughput", "request_goodput",
                                      "error_rate"};
  EXPECT_EQ(closest_names("p99_tfft_ms", keys), (std::vector<std::string>{"p99_ttft_ms"}));
  // A prefix of a key is close: "goodput" is in "request_goodput".
  EXPECT_EQ(closest_names("goodput", keys), (std::vector<std::string>{"request_goodput"}));
  EXPECT_TRUE(closest_names("temperature", keys).empty());
  EXPECT_EQ(did_you_mean("p99_tfft_ms", keys), " (did you mean 'p99_ttft_ms'?)");
  // Only the closest: p99_tpot_ms is two edits from "p99_tftt_ms", p99_ttft_ms one (a swap).
  EXPECT_EQ(did_you_mean("p99_tftt_ms", keys), " (did you mean 'p99_ttft_ms'?)");
  EXPECT_EQ(did_you_mean("p99_xxxx_ms", {"p99_ttft_ms", "p99_tpot_ms"}), "");
  EXPECT_EQ(did_you_mean("tpot", {"ttft", "tpot2", "tpt"}), " (did you mean 'tpot2' or 'tpt'?)");
  EXPECT_EQ(did_you_mean("zzz", keys), "");
}

}  // namespace
}  // namespace llmbench
