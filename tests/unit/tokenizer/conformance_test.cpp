// Conformance against HF tokenizers 0.23.2 goldens and llama.cpp .inp/.out pairs
// (../shared/data/tokenizers/conformance, README.md there), plus hand-checked facts of
// SEMANTICS.md.

#include "llmbench/tokenizer/tokenizer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "shared_data.hpp"
#include "test_data.hpp"
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::tokenizer {
namespace {

namespace fs = std::filesystem;
using testing::data_file;
using testing::shared_tokenizer;
using testing::slurp;

struct Case {
  const char* name;    // golden file stem
  const char* folder;  // data folder
  const char* file;    // tokenizer JSON in it
  const char* inp;     // llama.cpp .inp (without the extension), or nullptr
};

const Case kCases[] = {
    {"deepseek-v3", "deepseek-v3", "tokenizer.json", nullptr},
    {"deepseek-r1", "deepseek-r1", "tokenizer.derived.json", nullptr},
    {"deepseek-v3.1", "deepseek-v3.1", "tokenizer.derived.json", nullptr},
    {"deepseek-llm", "deepseek-llm", "tokenizer.reconstructed.json",
     "ggml-vocab-deepseek-llm.gguf"},
    {"deepseek-coder", "deepseek-coder", "tokenizer.reconstructed.json",
     "ggml-vocab-deepseek-coder.gguf"},
    {"deepseek-r1-distill-qwen", "deepseek-r1-distill-qwen", "tokenizer.reconstructed.json",
     nullptr},
    {"llama3", "llama3", "tokenizer.json", "ggml-vocab-llama-bpe.gguf"},
    {"qwen3", "qwen3", "tokenizer.json", "ggml-vocab-qwen2.gguf"},
    {"qwen2.5", "qwen2.5", "tokenizer.derived.json", nullptr},
};

class Conformance : public ::testing::TestWithParam<Case> {};

// A check that cannot run for this tokenizer (data absent): said, not failed.
void note(const std::string& message) {
  std::printf("[ note     ] %s\n", message.c_str());
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string s = info.param.name;
  for (char& c : s) {
    if (c == '-' || c == '.') {
      c = '_';
    }
  }
  return s;
}

void check_golden(const Case& c, const Tokenizer* t) {
  const auto golden = data_file(std::string("conformance/golden/") + c.name + ".jsonl");
  if (t == nullptr || golden.empty()) {
    note(std::string(c.name) + ": tokenizer or golden file not found under the shared data");
    return;
  }
  std::istringstream lines(slurp(golden));
  std::string line;
  Scratch scratch;
  EncodeOptions opt;
  opt.want_tokens = true;
  int compared = 0;
  int id_matches = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) {
      continue;
    }
    const auto j = nlohmann::json::parse(line);
    const std::string text = j.at("text");
    const auto want_ids = j.at("ids").get<std::vector<TokenId>>();
    const auto want_tokens = j.at("tokens").get<std::vector<std::string>>();
    auto got = t->encode(text, opt, scratch);
    ASSERT_TRUE(got.has_value()) << got.error().what();
    ++compared;
    EXPECT_EQ(got->ids, want_ids) << c.name << " text: " << text;
    EXPECT_EQ(got->tokens, want_tokens) << c.name << " text: " << text;
    id_matches += got->ids == want_ids ? 1 : 0;
  }
  std::printf("[ golden   ] %s: %d/%d strings match HF tokenizers 0.23.2\n", c.name, id_matches,
              compared);
  EXPECT_GE(compared, 90);
}

void check_llamacpp(const Case& c, const Tokenizer* t) {
  if (c.inp == nullptr) {
    note(std::string(c.name) + ": no llama.cpp .inp/.out pair for this tokenizer");
    return;
  }
  const auto inp = data_file(std::string(c.folder) + "/" + c.inp + ".inp");
  const auto out = data_file(std::string(c.folder) + "/" + c.inp + ".out");
  if (t == nullptr || inp.empty() || out.empty()) {
    note(std::string(c.name) + ": tokenizer or .inp/.out not found under the shared data");
    return;
  }
  const std::string sep = "\n__ggml_vocab_test__\n";
  const std::string all = slurp(inp);
  std::vector<std::string> texts;
  for (std::size_t pos = 0; pos < all.size();) {
    const auto next = all.find(sep, pos);
    if (next == std::string::npos) {
      break;
    }
    texts.push_back(all.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::istringstream lines(slurp(out));
  std::string line;
  std::size_t k = 0;
  int matches = 0;
  while (std::getline(lines, line) && k < texts.size()) {
    std::vector<TokenId> want;
    std::istringstream ids(line);
    TokenId id = 0;
    while (ids >> id) {
      want.push_back(id);
    }
    auto got = t->encode(texts[k], false);
    ASSERT_TRUE(got.has_value()) << got.error().what();
    EXPECT_EQ(*got, want) << c.name << " case " << k << ": " << texts[k];
    matches += *got == want ? 1 : 0;
    ++k;
  }
  std::printf("[ llama.cpp] %s: %d/%zu .inp/.out cases match\n", c.name, matches, k);
  EXPECT_EQ(k, texts.size());
  EXPECT_GE(k, 40u);
}

void check_round_trip(const Case& c, const Tokenizer* t) {
  const auto strings = data_file("conformance/golden_strings.json");
  if (t == nullptr || strings.empty()) {
    note(std::string(c.name) + ": tokenizer or golden_strings.json not found");
    return;
  }
  const auto j = nlohmann::json::parse(slurp(strings));
  const bool normalizes = std::string(c.name).find("qwen") != std::string::npos;
  int checked = 0;
  for (const auto& item : j) {
    const std::string text =
        item.is_string() ? item.get<std::string>() : item.at("text").get<std::string>();
    auto ids = t->encode(text, false);
    ASSERT_TRUE(ids.has_value());
    auto back = t->decode(*ids);
    ASSERT_TRUE(back.has_value());
    if (!normalizes) {  // an NFC normalizer legitimately changes NFD input
      EXPECT_EQ(*back, text) << c.name;
      ++checked;
    }
  }
  if (normalizes) {
    EXPECT_EQ(*t->decode(*t->encode("Hello world\n\tdef x(): 人工智能", false)),
              "Hello world\n\tdef x(): 人工智能");
  }
}

void check_offsets(const Case& /*c*/, const Tokenizer* t) {
  if (t == nullptr) {
    note("tokenizer files not found");
    return;
  }
  const std::string text = "Hello, 世界! 12345 <｜User｜>x  \n";
  Scratch scratch;
  EncodeOptions opt;
  opt.want_offsets = true;
  auto enc = t->encode(text, opt, scratch);
  ASSERT_TRUE(enc.has_value());
  ASSERT_EQ(enc->offsets.size(), enc->ids.size());
  std::uint32_t at = 0;
  for (const auto& [b, e] : enc->offsets) {
    EXPECT_EQ(b, at);
    EXPECT_GT(e, b);
    at = e;
  }
  EXPECT_EQ(at, text.size());
  // The cached (no offsets) path must give the same ids.
  EXPECT_EQ(enc->ids, *t->encode(text, false));
}

// Random mixed-script strings with ids from HF tokenizers 0.23.2 (tests/unit/tokenizer/data).
void check_random_fixture(const Case& c, const Tokenizer* t) {
  const fs::path fixture = testing::source_dir() / "tests" / "unit" / "tokenizer" / "data" /
                           (std::string("hf_random_") + c.name + ".jsonl");
  std::error_code ec;
  if (!fs::exists(fixture, ec)) {
    note(std::string(c.name) + ": no HF random-text fixture for this tokenizer");
    return;
  }
  if (t == nullptr) {
    note(std::string(c.name) + ": tokenizer files not found under the shared data");
    return;
  }
  std::istringstream lines(slurp(fixture));
  std::string line;
  Scratch scratch;
  int compared = 0;
  int matches = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    const auto want = j.at("ids").get<std::vector<TokenId>>();
    auto got = t->count(j.at("text").get<std::string>(), false, scratch);
    auto ids = t->encode(j.at("text").get<std::string>(), false);
    ASSERT_TRUE(got.has_value() && ids.has_value());
    EXPECT_EQ(*ids, want) << c.name << " text: " << j.at("text").get<std::string>();
    EXPECT_EQ(*got, want.size());
    matches += *ids == want ? 1 : 0;
    ++compared;
  }
  std::printf("[ random   ] %s: %d/%d random strings match HF tokenizers 0.23.2\n", c.name, matches,
              compared);
  EXPECT_GE(compared, 100);
}

TEST_P(Conformance, MatchesReference) {
  const Case& c = GetParam();
  const Tokenizer* t = shared_tokenizer(c.folder, c.file);
  if (t == nullptr) {
    LLMBENCH_SHARED_DATA_MISSING() << c.name << ": tokenizer files not found under the shared data";
  }
  {
    SCOPED_TRACE("HF golden strings");
    check_golden(c, t);
  }
  {
    SCOPED_TRACE("llama.cpp .inp/.out");
    check_llamacpp(c, t);
  }
  {
    SCOPED_TRACE("HF random-text fixture");
    check_random_fixture(c, t);
  }
  {
    SCOPED_TRACE("decode(encode(x))");
    check_round_trip(c, t);
  }
  {
    SCOPED_TRACE("offsets");
    check_offsets(c, t);
  }
}

INSTANTIATE_TEST_SUITE_P(SharedData, Conformance, ::testing::ValuesIn(kCases), case_name);

// --- Facts from SEMANTICS.md, hand-checked against the published files. ---

const Tokenizer* v3() {
  return shared_tokenizer("deepseek-v3", "tokenizer.json");
}
const Tokenizer* r1() {
  return shared_tokenizer("deepseek-r1", "tokenizer.derived.json");
}
const Tokenizer* qwen3() {
  return shared_tokenizer("qwen3", "tokenizer.json");
}

TEST(Semantics, DeepSeekV3DigitsAndSpaces) {
  const Tokenizer* t = v3();
  if (t == nullptr) {
    LLMBENCH_SHARED_DATA_MISSING() << "deepseek-v3 not found";
  }
  Scratch scratch;
  EncodeOptions opt;
  opt.want_tokens = true;
  auto enc = t->encode("a 123", opt, scratch);
  ASSERT_TRUE(enc.has_value());
  EXPECT_EQ(enc->tokens, (std::vector<std::string>{"a", "Ġ", "123"}));
  EXPECT_EQ(enc->ids[1], 223u);
  EXPECT_EQ(t->encode("12345678901234567890", false)->size(), 7u);
  // NFC "Cửa Việt" is 5 tokens, its NFD form 10 (no normalizer).
  EXPECT_EQ(t->encode("C\xe1\xbb\xad"
                      "a Vi\xe1\xbb\x87t",
                      false)
                ->size(),
            5u);
  EXPECT_EQ(t->encode("Cu\xcc\x9b\xcc\x89"
                      "a Vie\xcc\xa3\xcc\x82t",
                      false)
                ->size(),
            10u);
}

TEST(Semantics, ThinkIsOneTokenInR1AndThreeInV3) {
  const Tokenizer* a = v3();
  const Tokenizer* b = r1();
  if (a == nullptr || b == nullptr) {
    LLMBENCH_SHARED_DATA_MISSING() << "deepseek-v3 / deepseek-r1 not found";
  }
  EXPECT_EQ(a->encode("<think>", false)->size(), 3u);
  EXPECT_EQ(*b->encode("<think>", false), (std::vector<TokenId>{128798}));
  EXPECT_EQ(a->encode("<think>\nreasoning</think>answer", false)->size(), 9u);
  EXPECT_EQ(b->encode("<think>\nreasoning</think>answer", false)->size(), 6u);
}

TEST(Semantics, BosFollowsTransformers) {
  const Tokenizer* a = v3();
  if (a == nullptr) {
    LLMBENCH_SHARED_DATA_MISSING() << "deepseek-v3 not found";
  }
  // tokenizer_config.json: LlamaTokenizerFast, add_bos_token true -> BOS id 0 first.
  auto with = a->encode("Hi", true);
  auto without = a->encode("Hi", false);
  ASSERT_TRUE(with.has_value() && without.has_value());
  ASSERT_EQ(with->size(), without->size() + 1);
  EXPECT_EQ(with->front(), 0u);
  EXPECT_EQ(a->special_prefix().size(), 1u);
  EXPECT_TRUE(a->special_suffix().empty());
  const Tokenizer* q = qwen3();
  if (q != nullptr) {
    EXPECT_EQ(*q->encode("Hi", true), *q->encode("Hi", false));  // Qwen: no BOS
  }
  const Tokenizer* d = shared_tokenizer("deepseek-r1-distill-qwen", "tokenizer.reconstructed.json");
  if (d != nullptr) {
    EXPECT_EQ(d->encode("Hi", true)->front(), 151646u);  // TemplateProcessing BOS
  }
}

TEST(Semantics, AddedTokensAndSkipSpecial) {
  const Tokenizer* t = v3();
  if (t == nullptr) {
    LLMBENCH_SHARED_DATA_MISSING() << "deepseek-v3 not found";
  }
  const std::string text = "<｜begin▁of▁sentence｜>hi<｜User｜>x";
  auto ids = t->encode(text, false);
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(ids->front(), 0u);
  EXPECT_EQ(t->token_to_id("<｜User｜>"), 128803);
  EXPECT_NE(std::find(ids->begin(), ids->end(), 128803u), ids->end());
  // Only special:true tokens are dropped; <｜User｜> (special:false) stays.
  EXPECT_EQ(*t->decode(*ids, true), "hi<｜User｜>x");
  EXPECT_EQ(*t->decode(*ids, false), text);
  // The ASCII look-alike is ordinary text.
  EXPECT_EQ(t->encode("<|User|>", false)->size(), 5u);
}

TEST(Semantics, QwenNormalizesNfc) {
  const Tokenizer* q = qwen3();
  if (q == nullptr) {
    LLMBENCH_SHARED_DATA_MISSING() << "qwen3 not found";
  }
  EXPECT_EQ(q->encode("C\xe1\xbb\xad"
                      "a Vi\xe1\xbb\x87t",
                      false)
                ->size(),
            3u);
  EXPECT_EQ(*q->encode("Cu\xcc\x9b\xcc\x89"
                       "a Vie\xcc\xa3\xcc\x82t",
                       false),
            *q->encode("C\xe1\xbb\xad"
                       "a Vi\xe1\xbb\x87t",
                       false));
  EXPECT_EQ(q->encode("12345678901234567890", false)->size(), 20u);
}

}  // namespace
}  // namespace llmbench::tokenizer
