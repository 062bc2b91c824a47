// Behaviour of each component on a tiny hand-made byte-level tokenizer (expected ids worked out
// by hand from the merge ranks), and error reporting.

#include "llmbench/tokenizer/tokenizer.hpp"

#include "llmbench/tokenizer/unicode.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace llmbench::tokenizer {
namespace {

using nlohmann::json;
using Ids = std::vector<TokenId>;

// Vocabulary: byte b has id b (GPT-2 byte alphabet); then ab=256 abc=257 bc=258 -b=259 a-=260
// --=261 xyz=262. Merge ranks: "a b"=0 "ab c"=1 "b c"=2 "- b"=3 "a -"=4 "- -"=5.
json tiny(json pre_steps, json added = json::array(), bool ignore_merges = false) {
  json vocab = json::object();
  for (unsigned b = 0; b < 256; ++b) {
    vocab[detail::bytes_to_byte_level(std::string(1, static_cast<char>(b)))] = b;
  }
  vocab["ab"] = 256;
  vocab["abc"] = 257;
  vocab["bc"] = 258;
  vocab["-b"] = 259;
  vocab["a-"] = 260;
  vocab["--"] = 261;
  vocab["xyz"] = 262;
  pre_steps.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}});
  return json{{"version", "1.0"},
              {"added_tokens", added},
              {"normalizer", nullptr},
              {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", pre_steps}}},
              {"post_processor", nullptr},
              {"decoder", {{"type", "ByteLevel"}}},
              {"model",
               {{"type", "BPE"},
                {"vocab", vocab},
                {"ignore_merges", ignore_merges},
                {"merges", {"a b", json::array({"ab", "c"}), "b c", "- b", "a -", "- -"}}}}};
}

Tokenizer build(const json& j) {
  auto r = Tokenizer::from_json(j.dump(), "", "tiny.json");
  if (!r) {
    ADD_FAILURE() << r.error().what();
    throw std::runtime_error(r.error().what());
  }
  return std::move(*r);
}

json split(const char* literal, const char* behavior, bool invert = false) {
  return {{"type", "Split"},
          {"pattern", {{"String", literal}}},
          {"behavior", behavior},
          {"invert", invert}};
}

TEST(Bpe, LowestRankFirstThenLeftmost) {
  const Tokenizer t = build(tiny(json::array()));
  EXPECT_EQ(*t.encode("abc"), (Ids{257}));            // a b -> ab (rank 0), ab c -> abc (rank 1)
  EXPECT_EQ(*t.encode("bcab"), (Ids{258, 256}));      // ab (0) before bc (2)
  EXPECT_EQ(*t.encode("xyz"), (Ids{'x', 'y', 'z'}));  // no merges for it
  EXPECT_EQ(*t.encode(""), Ids{});
}

TEST(Bpe, IgnoreMergesTakesWholeWord) {
  const Tokenizer t = build(tiny(json::array(), json::array(), true));
  EXPECT_EQ(*t.encode("xyz"), (Ids{262}));
  EXPECT_EQ(*t.encode("xyzz"), (Ids{'x', 'y', 'z', 'z'}));
}

TEST(Split, Behaviours) {
  EXPECT_EQ(*build(tiny({split("-", "Isolated")})).encode("a-b"), (Ids{'a', '-', 'b'}));
  EXPECT_EQ(*build(tiny({split("-", "Removed")})).encode("a-b"), (Ids{'a', 'b'}));
  EXPECT_EQ(*build(tiny({split("-", "MergedWithPrevious")})).encode("a-b"), (Ids{260, 'b'}));
  EXPECT_EQ(*build(tiny({split("-", "MergedWithNext")})).encode("a-b"), (Ids{'a', 259}));
  EXPECT_EQ(*build(tiny({split("-", "Isolated")})).encode("a--b"), (Ids{'a', '-', '-', 'b'}));
  EXPECT_EQ(*build(tiny({split("-", "Contiguous")})).encode("a--b"), (Ids{'a', 261, 'b'}));
  // invert: the matches are the kept content, so Removed drops the gaps.
  json inv = {
      {"type", "Split"}, {"pattern", {{"Regex", "a+"}}}, {"behavior", "Removed"}, {"invert", true}};
  EXPECT_EQ(*build(tiny({inv})).encode("xaxa"), (Ids{'a', 'a'}));
}

TEST(Split, EachPieceIsItsOwnSubject) {
  // `\s+(?!\S)` cannot look past the piece: after splitting off digits, "a " keeps its space
  // apart from "a" only through the regex on "a " alone.
  json digits = {{"type", "Split"},
                 {"pattern", {{"Regex", "\\p{N}{1,3}"}}},
                 {"behavior", "Isolated"},
                 {"invert", false}};
  json ws = {{"type", "Split"},
             {"pattern", {{"Regex", "\\s+(?!\\S)|\\s+|[^\\s]+"}}},
             {"behavior", "Isolated"},
             {"invert", false}};
  Scratch scratch;
  EncodeOptions opt;
  opt.want_tokens = true;
  auto enc = build(tiny({digits, ws})).encode("ab 1234", opt, scratch);
  ASSERT_TRUE(enc.has_value());
  EXPECT_EQ(enc->tokens, (std::vector<std::string>{"ab", "Ġ", "1", "2", "3", "4"}));
}

TEST(Digits, IndividualAndContiguous) {
  json one = {{"type", "Digits"}, {"individual_digits", true}};
  Scratch scratch;
  EncodeOptions opt;
  opt.want_offsets = true;
  auto enc = build(tiny({one})).encode("a12", opt, scratch);
  ASSERT_TRUE(enc.has_value());
  EXPECT_EQ(enc->ids, (Ids{'a', '1', '2'}));
  using Off = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  EXPECT_EQ(enc->offsets, (Off{{0, 1}, {1, 2}, {2, 3}}));
}

json added_token(TokenId id, const char* content, bool normalized, bool special,
                 bool lstrip = false, bool rstrip = false, bool single_word = false) {
  return {{"id", id},          {"content", content}, {"single_word", single_word},
          {"lstrip", lstrip},  {"rstrip", rstrip},   {"normalized", normalized},
          {"special", special}};
}

TEST(AddedTokens, LeftmostLongestStripAndSingleWord) {
  json added = json::array({added_token(300, "<s>", false, true),
                            added_token(301, "[X]", true, false, true, true),
                            added_token(302, "ab!", true, false, false, false, true),
                            added_token(303, "<s>x", false, false)});
  const Tokenizer t = build(tiny(json::array(), added));
  EXPECT_EQ(*t.encode("q<s>q"), (Ids{'q', 300, 'q'}));
  EXPECT_EQ(*t.encode("<s>xy"), (Ids{303, 'y'}));         // longest at the leftmost start
  EXPECT_EQ(*t.encode("a [X] b"), (Ids{'a', 301, 'b'}));  // lstrip + rstrip eat the spaces
  EXPECT_EQ(*t.encode("ab! x"), (Ids{302, ' ', 'x'}));
  EXPECT_EQ(*t.encode("zab!"), (Ids{'z', 256, '!'}));  // not a single word: plain text
  Scratch scratch;
  EncodeOptions opt;
  opt.want_offsets = true;
  opt.want_tokens = true;
  auto enc = t.encode("a [X] b", opt, scratch);
  ASSERT_TRUE(enc.has_value());
  EXPECT_EQ(enc->offsets[1], (std::pair<std::uint32_t, std::uint32_t>{1, 6}));
  EXPECT_EQ(enc->tokens[1], "[X]");
  EXPECT_EQ(*t.decode(Ids{'q', 300, 'q'}, true), "qq");
  EXPECT_EQ(*t.decode(Ids{'q', 300, 'q'}, false), "q<s>q");
}

TEST(Decode, LossyUtf8) {
  const Tokenizer t = build(tiny(json::array()));
  // 0xE4 0xB8 is a truncated 3-byte sequence: one U+FFFD, then 'a'.
  EXPECT_EQ(*t.decode(Ids{0xE4, 0xB8, 'a'}),
            "\xEF\xBF\xBD"
            "a");
  EXPECT_EQ(*t.decode(Ids{0xFF, 0xFE}), "\xEF\xBF\xBD\xEF\xBF\xBD");
  auto bad = t.decode(Ids{'a', 999999});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().offset, 1);
  EXPECT_NE(bad.error().message.find("outside the vocabulary"), std::string::npos);
}

TEST(Errors, InvalidUtf8GivesByteOffset) {
  const Tokenizer t = build(tiny(json::array()));
  auto r = t.encode("ab\xff");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().offset, 2);
  auto s = t.encode("x\xed\xa0\x80");  // UTF-8 encoded surrogate U+D800
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().offset, 1);
}

std::string load_error(const std::string& text) {
  auto r = Tokenizer::from_json(text, "", "bad.json");
  EXPECT_FALSE(r.has_value());
  return r.has_value() ? std::string() : r.error().what();
}

TEST(Errors, LoadMessagesNameFileAndField) {
  const std::string good = tiny(json::array()).dump();
  std::string msg = load_error(good.substr(0, good.size() / 2));
  EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("invalid JSON"), std::string::npos) << msg;

  json j = tiny(json::array());
  j["model"]["type"] = "WordPiece";
  msg = load_error(j.dump());
  EXPECT_NE(msg.find("model.type"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unsupported"), std::string::npos) << msg;

  j = tiny({json{{"type", "Split"}, {"pattern", {{"Regex", "[a-"}}}, {"behavior", "Isolated"}}});
  msg = load_error(j.dump());
  EXPECT_NE(msg.find("bad regex"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pre_tokenizer.pretokenizers[0]"), std::string::npos) << msg;

  j = tiny(json::array());
  j["model"]["merges"].push_back("q zz");
  msg = load_error(j.dump());
  EXPECT_NE(msg.find("model.merges[6]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'zz' is not in the vocabulary"), std::string::npos) << msg;

  j = tiny(json::array());
  j["model"].erase("merges");
  msg = load_error(j.dump());
  EXPECT_NE(msg.find("model.merges: missing"), std::string::npos) << msg;

  j = tiny({json{{"type", "BertPreTokenizer"}}});
  msg = load_error(j.dump());
  EXPECT_NE(msg.find("unsupported pre_tokenizer 'BertPreTokenizer'"), std::string::npos) << msg;

  auto missing = Tokenizer::load("/nonexistent/llmbench/tokenizer");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().what().find("/nonexistent/llmbench/tokenizer"), std::string::npos);
}

}  // namespace
}  // namespace llmbench::tokenizer
