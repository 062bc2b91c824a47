// Malformed tokenizer files that must fail with an error naming the field, not load with a
// silently wrong table or allocate without bound (bad input, clear error).

#include "llmbench/tokenizer/tokenizer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace llmbench::tokenizer {
namespace {

using nlohmann::json;

// A minimal plain-text BPE tokenizer.json with the given vocabulary and no merges.
std::string with_vocab(const std::string& vocab_json) {
  return R"({"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,)"
         R"("post_processor":null,"decoder":null,"model":{"type":"BPE","vocab":)" +
         vocab_json + R"(,"merges":[]}})";
}

std::string load_error(const std::string& text) {
  auto tok = Tokenizer::from_json(text, "", "tok.json");
  return tok ? std::string("(loaded)") : tok.error().what();
}

TEST(TokenizerJson, WellFormedVocabularyLoads) {
  auto tok = Tokenizer::from_json(with_vocab(R"({"a":0,"b":1,"ab":2})"), "", "tok.json");
  ASSERT_TRUE(tok) << tok.error().what();
  EXPECT_EQ(tok->encode("ab").value(), (std::vector<TokenId>{0, 1}));
}

TEST(TokenizerJson, DuplicateIdIsAnError) {
  const std::string what = load_error(with_vocab(R"({"a":0,"b":1,"c":1})"));
  EXPECT_NE(what.find("tok.json"), std::string::npos) << what;
  EXPECT_NE(what.find(R"(model.vocab["c"])"), std::string::npos) << what;
  EXPECT_NE(what.find(R"(id 1 is also the id of "b")"), std::string::npos) << what;
}

TEST(TokenizerJson, DuplicateTokenIsAnError) {
  const std::string what = load_error(with_vocab(R"({"a":0,"b":1,"a":2})"));
  EXPECT_NE(what.find(R"(model.vocab["a"])"), std::string::npos) << what;
  EXPECT_NE(what.find("appears twice"), std::string::npos) << what;
}

// Tables are sized by the largest id: one id near 2^28 in a three-entry file would allocate
// gigabytes before anything else was checked.
TEST(TokenizerJson, IdFarPastTheVocabularyIsAnError) {
  const std::string what = load_error(with_vocab(R"({"a":0,"b":268435000})"));
  EXPECT_NE(what.find(R"(model.vocab["b"])"), std::string::npos) << what;
  EXPECT_NE(what.find("far past"), std::string::npos) << what;
  json j = json::parse(with_vocab(R"({"a":0})"));
  j["added_tokens"] = json::array({{{"id", 268435000}, {"content", "<x>"}, {"special", true}}});
  const std::string added = load_error(j.dump());
  EXPECT_NE(added.find("added_tokens[0].id"), std::string::npos) << added;
  EXPECT_NE(added.find("far past"), std::string::npos) << added;
}

TEST(Tiktoken, DuplicateRankIsAnError) {
  auto tok = Tokenizer::from_tiktoken("YQ== 0\nYg== 1\nYw== 1\n", "", "r.tiktoken");
  ASSERT_FALSE(tok);
  const std::string what = tok.error().what();
  EXPECT_NE(what.find("line 3"), std::string::npos) << what;
  EXPECT_NE(what.find("rank 1 is also the rank"), std::string::npos) << what;
  auto far = Tokenizer::from_tiktoken("YQ== 0\nYg== 268435000\n", "", "r.tiktoken");
  ASSERT_FALSE(far);
  EXPECT_NE(std::string(far.error().what()).find("far past"), std::string::npos);
}

// A number nlohmann cannot hold in a file simdjson also rejects: the error path must not throw.
TEST(TokenizerJson, NumberBeyondDoubleRangeIsAnError) {
  const std::string what = load_error(with_vocab(R"({"a":0,"b":1e999})"));
  EXPECT_NE(what.find("tok.json"), std::string::npos) << what;
  EXPECT_NE(what.find("invalid JSON"), std::string::npos) << what;
}

}  // namespace
}  // namespace llmbench::tokenizer
