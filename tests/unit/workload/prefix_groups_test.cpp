// Shared-prefix datasets (workload/prefix_groups.hpp): exact token counts and exact sharing.

#include "llmbench/workload/prefix_groups.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/workload/dataset.hpp"

#include <gtest/gtest.h>

#include "../tokenizer/test_data.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace llmbench::workload {
namespace {

using tokenizer::TokenId;

/// Length of the common prefix of two id lists.
std::size_t common(const std::vector<TokenId>& a, const std::vector<TokenId>& b) {
  return static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first -
                                  a.begin());
}

/// The group of a "gsp:G:Q" or "prefix_repetition:P:I" source id.
std::string group_of(const std::string& id) {
  const auto a = id.find(':');
  return id.substr(a + 1, id.find(':', a + 1) - a - 1);
}

class PrefixGroups : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = tokenizer::testing::shared_tokenizer("deepseek-v3", "tokenizer.json");
    if (tok_ == nullptr) {
      LLMBENCH_SHARED_DATA_MISSING() << "../shared/data/tokenizers/deepseek-v3 not found";
    }
  }
  DatasetOptions options(DatasetKind kind, std::int64_t n) const {
    DatasetOptions o;
    o.kind = kind;
    o.num_prompts = n;
    o.seed = 11;
    o.tokenizer = tok_;
    o.data_dir = testing::bundled_data_dir();
    return o;
  }
  /// Checks that every prompt counts `len` tokens and that prompts share exactly `shared`
  /// leading ids within a group and fewer across groups.
  void check_sharing(const std::vector<Sample>& samples, std::int64_t len, std::size_t shared) {
    std::vector<std::vector<TokenId>> ids;
    for (const auto& s : samples) {
      ids.push_back(*tok_->encode(s.prompt, true));
      EXPECT_EQ(static_cast<std::int64_t>(ids.back().size()), len) << s.source_id;
      EXPECT_EQ(s.prompt_len, len);
      EXPECT_TRUE(s.prompt_len_exact);
    }
    for (std::size_t i = 0; i < samples.size(); ++i) {
      for (std::size_t j = i + 1; j < samples.size(); ++j) {
        const bool same = group_of(samples[i].source_id) == group_of(samples[j].source_id);
        const std::size_t n = common(ids[i], ids[j]);
        if (same) {
          EXPECT_GE(n, shared) << samples[i].source_id << " " << samples[j].source_id;
          EXPECT_LT(n, shared + 3) << samples[i].source_id << " " << samples[j].source_id;
        } else {
          EXPECT_LT(n, shared) << samples[i].source_id << " " << samples[j].source_id;
        }
      }
    }
  }
  const tokenizer::Tokenizer* tok_ = nullptr;
};

TEST_F(PrefixGroups, GeneratedSharedPrefixHasExactLengthsAndSharesTheSystemPrompt) {
  auto o = options(DatasetKind::SharedPrefix, 12);
  o.shared_prefix = {.num_groups = 3,
                     .prompts_per_group = 4,
                     .system_prompt_len = 100,
                     .question_len = 20,
                     .output_len = 7};
  const auto samples = load_samples(o);
  ASSERT_EQ(samples.size(), 12U);
  std::map<std::string, int> per_group;
  for (const auto& s : samples) {
    ++per_group[group_of(s.source_id)];
    EXPECT_EQ(s.output_len, 7);
  }
  EXPECT_EQ(per_group, (std::map<std::string, int>{{"0", 4}, {"1", 4}, {"2", 4}}));
  // BOS + 100 system tokens are common to a group; the questions differ right after.
  check_sharing(samples, 121, 101);
}

TEST_F(PrefixGroups, RangeRatioKeepsLengthsInItsRangeAndExact) {
  auto o = options(DatasetKind::SharedPrefix, 8);
  o.shared_prefix = {.num_groups = 2,
                     .prompts_per_group = 4,
                     .system_prompt_len = 60,
                     .question_len = 40,
                     .output_len = 3,
                     .range_ratio = 0.5};
  for (const auto& s : load_samples(o)) {
    EXPECT_GE(s.prompt_len, 1 + 30 + 20);
    EXPECT_LE(s.prompt_len, 1 + 60 + 40);
    EXPECT_EQ(static_cast<std::int64_t>(tok_->encode(s.prompt, true)->size()), s.prompt_len);
  }
}

TEST_F(PrefixGroups, PrefixRepetitionSharesEachPrefixExactly) {
  auto o = options(DatasetKind::PrefixRepetition, 9);
  o.prefix_repetition = {.prefix_len = 50, .suffix_len = 30, .num_prefixes = 3, .output_len = 5};
  const auto samples = load_samples(o);
  ASSERT_EQ(samples.size(), 9U);
  check_sharing(samples, 81, 51);
}

TEST(PrefixGroupsNoTokenizer, ZipfPopularityFollowsTheWeights) {
  DatasetOptions o;
  o.kind = DatasetKind::SharedPrefix;
  o.num_prompts = 2000;
  o.seed = 5;
  o.data_dir = testing::bundled_data_dir();
  o.shared_prefix = {.num_groups = 4,
                     .prompts_per_group = 3,
                     .system_prompt_len = 40,
                     .question_len = 8,
                     .output_len = 4,
                     .popularity = GroupPopularity::Zipf,
                     .zipf_s = 1.0};
  const auto samples = load_samples(o);
  ASSERT_EQ(samples.size(), 2000U);
  std::map<std::string, double> count;
  std::map<std::string, std::string> text_of;
  for (const auto& s : samples) {
    ++count[group_of(s.source_id)];
    // The same (group, question) is the same prompt each time it is drawn.
    auto [it, fresh] = text_of.emplace(s.source_id, s.prompt);
    EXPECT_TRUE(fresh || it->second == s.prompt) << s.source_id;
  }
  const double h = 1 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4;  // weights 1/k
  for (int k = 1; k <= 4; ++k) {
    const double want = 2000 / (h * k);
    EXPECT_NEAR(count[std::to_string(k - 1)], want, 4 * std::sqrt(want)) << "group " << k - 1;
  }
  o.shared_prefix.zipf_s = 0;
  EXPECT_THROW(load_samples(o), Exception);
  o.shared_prefix.zipf_s = 1;
  o.shared_prefix.range_ratio = 0;
  try {
    load_samples(o);
    FAIL() << "range ratio 0 accepted";
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find("--gsp-range-ratio"), std::string::npos);
  }
  EXPECT_THROW((void)parse_group_popularity("pareto"), Exception);
  EXPECT_EQ(parse_group_popularity("zipf"), GroupPopularity::Zipf);
}

}  // namespace
}  // namespace llmbench::workload
