// The native pre-tokenizer fast paths (fast_split.hpp and the class-run matcher) against
// Oniguruma: each tokenizer file (DeepSeek-V3, Qwen3, Llama-3) as published (fast paths taken) and
// the same file with every Split regex wrapped in a non-capturing group `(?:...)` (same language,
// not recognised, so Oniguruma runs) must give identical ids on the golden strings and on random
// mixed-script text.

#include "llmbench/tokenizer/tokenizer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "shared_data.hpp"
#include "test_data.hpp"
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace llmbench::tokenizer {
namespace {

// Random strings over pools of characters chosen to hit every branch of the regexes: ASCII
// punctuation before letters, the optional leading character, marks, CR/LF inside whitespace
// runs, Unicode spaces (NBSP, NEL, U+2028, U+3000, U+180E, ZWSP), CJK/kana ranges, digits of
// several scripts, symbols, emoji, and added-token fragments.
std::vector<std::string> random_strings(std::size_t count) {
  const std::vector<std::string> pools = {
      "abcXYZ",
      "0123456789",
      " ",
      "  ",
      "\n",
      "\r\n",
      "\r",
      "\t",
      "\x0b\x0c",
      "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
      "'s",
      "'T",
      "\xe7\x9a\x84\xe4\xb8\x80\xe6\x98\xaf",              // 的一是
      "\xe3\x81\x82\xe3\x82\xa2\xe3\x83\xbc",              // あアー
      "\xed\x95\x9c\xea\xb5\xad",                          // 한국
      "\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7",          // مرحبا
      "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d",  // नमस्
      "\xcc\x81\xcc\x88",                                  // combining marks
      "\xc2\xa0",
      "\xc2\x85",
      "\xe2\x80\xa8",
      "\xe3\x80\x80",
      "\xe1\xa0\x8e",
      "\xe2\x80\x8b",
      "\xef\xbb\xbf",
      "\xc2\xad",
      "\xe2\x82\xac\xc2\xa5\xc2\xa9\xe2\x86\x92\xe2\x88\x91",  // €¥©→∑
      "\xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",      // 😀👍🏽
      "\xe2\x91\xa0\xe2\x85\xab\xc2\xb2\xd9\xa1\xd9\xa2",      // ①Ⅻ²١٢
      "\xef\xbc\xa1\xef\xbc\x91\xef\xbc\x8c\xe3\x80\x82",      // Ａ１，。
      "\xef\xbd\x9c",
      "<\xef\xbd\x9cUser\xef\xbd\x9c>",
      "<think>",
  };
  std::mt19937_64 rng(20241129);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i) {
    const auto n = std::uniform_int_distribution<int>(1, 30)(rng);
    std::string s;
    for (int k = 0; k < n; ++k) {
      const std::string& pool = pools[rng() % pools.size()];
      s += pool;
    }
    out.push_back(std::move(s));
  }
  return out;
}

struct FastCase {
  const char* folder;
  int splits;  // Split steps in the file (all wrapped for the Oniguruma twin)
};

class FastPath : public ::testing::TestWithParam<FastCase> {};

TEST_P(FastPath, MatchesOniguruma) {
  const FastCase& c = GetParam();
  const auto json_path = testing::data_file(std::string(c.folder) + "/tokenizer.json");
  if (json_path.empty()) {
    LLMBENCH_SHARED_DATA_MISSING() << c.folder << "/tokenizer.json not found under the shared data";
  }
  const std::string text = testing::slurp(json_path);
  auto fast = Tokenizer::from_json(text, "", "fast paths");
  ASSERT_TRUE(fast.has_value()) << fast.error().what();
  auto j = nlohmann::json::parse(text);
  int wrapped = 0;
  for (auto& step : j["pre_tokenizer"]["pretokenizers"]) {
    if (step["type"] == "Split") {
      step["pattern"]["Regex"] = "(?:" + step["pattern"]["Regex"].get<std::string>() + ")";
      ++wrapped;
    }
  }
  ASSERT_EQ(wrapped, c.splits);
  auto slow = Tokenizer::from_json(j.dump(), "", "Oniguruma");
  ASSERT_TRUE(slow.has_value()) << slow.error().what();

  std::vector<std::string> inputs = random_strings(3000);
  const auto strings = testing::data_file("conformance/golden_strings.json");
  if (!strings.empty()) {
    for (const auto& s : nlohmann::json::parse(testing::slurp(strings))) {
      inputs.push_back(s.get<std::string>());
    }
  }
  Scratch a;
  Scratch b;
  EncodeOptions opt;
  opt.want_offsets = true;  // bypasses the word cache
  int same = 0;
  for (const auto& s : inputs) {
    auto x = fast->encode(s, opt, a);
    auto y = slow->encode(s, opt, b);
    ASSERT_TRUE(x.has_value() && y.has_value());
    EXPECT_EQ(x->ids, y->ids) << "input: " << s;
    same += x->ids == y->ids ? 1 : 0;
  }
  std::printf("[ fastpath ] %s: %d/%zu inputs identical to the Oniguruma path\n", c.folder, same,
              inputs.size());
}

INSTANTIATE_TEST_SUITE_P(SharedData, FastPath,
                         ::testing::Values(FastCase{"deepseek-v3", 3}, FastCase{"qwen3", 1},
                                           FastCase{"llama3", 1}),
                         [](const ::testing::TestParamInfo<FastCase>& p) {
                           std::string s = p.param.folder;
                           for (char& ch : s) {
                             ch = ch == '-' || ch == '.' ? '_' : ch;
                           }
                           return s;
                         });

}  // namespace
}  // namespace llmbench::tokenizer
