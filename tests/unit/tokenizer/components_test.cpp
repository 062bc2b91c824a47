// Components beyond byte-level BPE, each on a tiny hand-written tokenizer.json: SentencePiece-style
// BPE (Metaspace, byte_fallback, unk, fuse_unk, subword prefix/suffix), normalizers, the
// Whitespace/WhitespaceSplit/Punctuation pre-tokenizers, ByteLevel add_prefix_space, decoders,
// tiktoken rank files, batch encoding and streaming decode. Expected ids were worked out by hand
// from the merge ranks and agree with HF tokenizers 0.23.2 (npm) on the same JSON.

#include "llmbench/tokenizer/tokenizer.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "shared_data.hpp"
#include "test_data.hpp"
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace llmbench::tokenizer {
namespace {

using nlohmann::json;
using Ids = std::vector<TokenId>;
using Strings = std::vector<std::string>;

Tokenizer build(const json& j) {
  auto r = Tokenizer::from_json(j.dump(), "", "test.json");
  if (!r) {
    ADD_FAILURE() << r.error().what();
    throw std::runtime_error(r.error().what());
  }
  return std::move(*r);
}

json added(TokenId id, const char* content, bool normalized, bool special) {
  return {{"id", id},        {"content", content},       {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", normalized}, {"special", special}};
}

// SentencePiece-style BPE: Metaspace "first", byte_fallback, fuse_unk, Llama-2-like decoder.
// Merge ranks: "▁ a"=0, "a b"=1, "▁a b"=2.
json spm() {
  json vocab = {{"<unk>", 0},   {"<s>", 1},     {"</s>", 2},    {"▁", 3},       {"a", 4},
                {"b", 5},       {"c", 6},       {"▁a", 7},      {"ab", 8},      {"▁ab", 9},
                {"<0x0A>", 10}, {"<0xE4>", 11}, {"<0xB8>", 12}, {"<0x80>", 13}, {"<0x41>", 14}};
  json decoder = {{"type", "Sequence"},
                  {"decoders",
                   {{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                    {{"type", "ByteFallback"}},
                    {{"type", "Fuse"}},
                    {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  return {{"version", "1.0"},
          {"added_tokens",
           {added(0, "<unk>", false, true), added(1, "<s>", false, true),
            added(15, "<x>", true, false)}},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "Metaspace"},
            {"replacement", "▁"},
            {"prepend_scheme", "first"},
            {"split", false}}},
          {"post_processor", nullptr},
          {"decoder", decoder},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", "<unk>"},
            {"continuing_subword_prefix", nullptr},
            {"end_of_word_suffix", nullptr},
            {"fuse_unk", true},
            {"byte_fallback", true},
            {"ignore_merges", false},
            {"vocab", vocab},
            {"merges", {"▁ a", "a b", "▁a b"}}}}};
}

TEST(SentencePieceBpe, MetaspaceByteFallbackUnk) {
  json j = spm();
  const Tokenizer t = build(j);
  // "▁ab▁a" + '\n' and 一 by byte fallback; 'x' has no <0x78> token: unk.
  EXPECT_EQ(*t.encode("ab a\n一x"), (Ids{9, 7, 10, 11, 12, 13, 0}));
  // "first": only the segment at the start of the input gets the prefix.
  EXPECT_EQ(*t.encode("abc<s>ab a"), (Ids{9, 6, 1, 8, 7}));
  EXPECT_EQ(*t.encode("xyz"), (Ids{3, 0}));  // fused unk
  j["model"]["fuse_unk"] = false;
  EXPECT_EQ(*build(j).encode("xyz"), (Ids{3, 0, 0, 0}));
  j["model"]["byte_fallback"] = false;
  EXPECT_EQ(*build(j).encode("a\n"), (Ids{7, 0}));
  j = spm();
  j["pre_tokenizer"]["prepend_scheme"] = "always";
  EXPECT_EQ(*build(j).encode("abc<s>ab a"), (Ids{9, 6, 1, 9, 7}));
  j["pre_tokenizer"]["split"] = true;
  EXPECT_EQ(*build(j).encode("ab  a b"), (Ids{9, 3, 7, 3, 5}));
}

TEST(SentencePieceBpe, DecoderChain) {
  json j = spm();
  const Tokenizer t = build(j);
  // Replace ▁ -> ' ', byte runs to text, fuse, strip one leading space.
  EXPECT_EQ(*t.decode(Ids{3, 3, 7, 10, 11, 12, 13, 4}), "  a\n一a");
  // An incomplete byte run gives one U+FFFD per byte.
  EXPECT_EQ(*t.decode(Ids{11, 12, 4, 11, 5}),
            "\xEF\xBF\xBD\xEF\xBF\xBD"
            "a\xEF\xBF\xBD"
            "b");
  j["decoder"] = {
      {"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "always"}, {"split", true}};
  EXPECT_EQ(*build(j).decode(Ids{3, 3, 7, 3, 4}), "  a a");
  EXPECT_EQ(*build(j).decode(Ids{7, 3}), "a ");
  j["decoder"]["prepend_scheme"] = "never";
  EXPECT_EQ(*build(j).decode(Ids{3, 3, 7, 3, 4}), "   a a");
  j["decoder"] = nullptr;  // no decoder: tokens joined with spaces
  EXPECT_EQ(*build(j).decode(Ids{7, 4}), "▁a a");
}

TEST(Normalizers, PrependReplaceAndNormalizedAddedTokens) {
  json j = spm();
  j["pre_tokenizer"] = nullptr;
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers",
                      {{{"type", "Prepend"}, {"prepend", "▁"}},
                       {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}}}};
  const Tokenizer t = build(j);
  // The normalized added token's pattern is normalized too ("▁<x>"), so "<x>" alone is plain
  // text (one fused unk); each segment after "<s>" is normalized on its own.
  EXPECT_EQ(*t.encode("ab a<x>a<s>b"), (Ids{9, 7, 0, 4, 1, 3, 5}));
  EXPECT_EQ(*t.encode("▁<x>"), (Ids{3, 15}));
}

// Character vocabulary: "a".."z" 0-25, ".,!?-'_ XYZ" 26-36, ab=37, xy=38, <unk>=39.
json chars(json normalizer, json pre_tokenizer) {
  json vocab = json::object();
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz.,!?-'_ XYZ";
  for (std::size_t i = 0; i < alphabet.size(); ++i) {
    vocab[std::string(1, alphabet[i])] = i;
  }
  vocab["ab"] = 37;
  vocab["xy"] = 38;
  vocab["<unk>"] = 39;
  return {
      {"version", "1.0"},
      {"added_tokens", json::array()},
      {"normalizer", normalizer},
      {"pre_tokenizer", pre_tokenizer},
      {"post_processor", nullptr},
      {"decoder", nullptr},
      {"model",
       {{"type", "BPE"}, {"unk_token", "<unk>"}, {"vocab", vocab}, {"merges", {"a b", "x y"}}}}};
}

TEST(Normalizers, StripLowercaseRegexReplace) {
  json norm = {{"type", "Sequence"},
               {"normalizers",
                {{{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}},
                 {{"type", "Lowercase"}},
                 {{"type", "Replace"}, {"pattern", {{"Regex", "[0-9]+"}}}, {"content", "-"}}}}};
  // "ab -xi" U+0307 "y": U+0130 lowercases to "i" + U+0307 (unk).
  EXPECT_EQ(*build(chars(norm, nullptr)).encode("  AB 12x\xC4\xB0Y \t"),
            (Ids{37, 33, 30, 23, 8, 39, 24}));
}

TEST(PreTokenizers, WhitespacePunctuation) {
  EXPECT_EQ(*build(chars(nullptr, {{"type", "Whitespace"}})).encode("ab, xy!?  \xC3\xA9_q"),
            (Ids{37, 27, 38, 28, 29, 39, 32, 16}));
  EXPECT_EQ(*build(chars(nullptr, {{"type", "WhitespaceSplit"}})).encode("ab, xy!?  q"),
            (Ids{37, 27, 38, 28, 29, 16}));
  Scratch scratch;
  EncodeOptions opt;
  opt.want_offsets = true;
  auto enc = build(chars(nullptr, {{"type", "Punctuation"}, {"behavior", "Contiguous"}}))
                 .encode("ab,!xy?q", opt, scratch);
  ASSERT_TRUE(enc.has_value());
  EXPECT_EQ(enc->ids, (Ids{37, 27, 28, 38, 29, 16}));
  using Off = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  EXPECT_EQ(enc->offsets, (Off{{0, 2}, {2, 3}, {3, 4}, {4, 6}, {6, 7}, {7, 8}}));
}

TEST(SentencePieceBpe, SubwordPrefixAndSuffix) {
  json j = chars(nullptr, {{"type", "WhitespaceSplit"}});
  j["model"]["vocab"]["##b"] = 40;
  j["model"]["vocab"]["##y"] = 41;
  j["model"]["vocab"]["a##b"] = 42;
  j["model"]["vocab"]["c</w>"] = 43;
  j["model"]["vocab"]["##c</w>"] = 44;
  j["model"]["vocab"]["ab</w>"] = 45;
  j["model"]["vocab"]["##b</w>"] = 46;
  j["model"]["continuing_subword_prefix"] = "##";
  j["model"]["end_of_word_suffix"] = "</w>";
  j["model"]["merges"] = {"a ##b</w>", "a ##b"};  // merged: left + right without "##"
  EXPECT_EQ(*build(j).encode("ab abc c bc"), (Ids{45, 37, 44, 43, 1, 44}));
}

// Byte-level vocabulary: byte b has id b, "Ġa"=256; added "<s>"=257.
json byte_level(bool add_prefix_space) {
  json vocab = json::object();
  for (unsigned b = 0; b < 256; ++b) {
    vocab[detail::bytes_to_byte_level(std::string(1, static_cast<char>(b)))] = b;
  }
  vocab["Ġa"] = 256;
  return {{"version", "1.0"},
          {"added_tokens", {added(257, "<s>", false, true)}},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "ByteLevel"}, {"add_prefix_space", add_prefix_space}, {"use_regex", true}}},
          {"post_processor", nullptr},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"Ġ a"}}}}};
}

TEST(PreTokenizers, ByteLevelAddPrefixSpacePerSegment) {
  const Tokenizer t = build(byte_level(true));
  EXPECT_EQ(*t.encode("a<s>a a"), (Ids{256, 257, 256, 256}));
  EXPECT_EQ(*t.encode(" a"), (Ids{256}));
  EXPECT_EQ(*build(byte_level(false)).encode("a<s>a a"), (Ids{'a', 257, 'a', 256}));
}

// Ranks: a0 b1 c2 d3 ' '4 bc5 ab6 abcd7 cd8 " a"9.
std::string tiny_tiktoken() {
  return "YQ== 0\nYg== 1\nYw== 2\nZA== 3\nIA== 4\nYmM= 5\nYWI= 6\nYWJjZA== 7\nY2Q= 8\nIGE= 9\n";
}

TEST(Tiktoken, RanksOfMergedBytes) {
  auto r = Tokenizer::from_tiktoken(tiny_tiktoken(), "", "tiny.tiktoken");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  const Tokenizer& t = *r;
  EXPECT_EQ(*t.encode("abcd"), (Ids{7}));            // a whole token is taken whole
  EXPECT_EQ(*t.encode("abcdd"), (Ids{0, 5, 3, 3}));  // bc (5) first; "abc", "bcd" are no tokens
  EXPECT_EQ(*t.encode(" ab"), (Ids{4, 6}));          // ab (6) beats " a" (9)
  EXPECT_EQ(*t.encode("ab cd"), (Ids{6, 4, 8}));     // cl100k pieces "ab", " cd"
  EXPECT_EQ(*t.decode(Ids{6, 4, 8}), "ab cd");
  EXPECT_EQ(t.id_to_token(9), "Ġa");
  // Through load(): the .tiktoken extension selects the format.
  const auto path = std::filesystem::temp_directory_path() /
                    ("llmbench_tok_" + std::to_string(::getpid()) + "_cl100k.tiktoken");
  std::ofstream(path) << tiny_tiktoken();
  auto loaded = Tokenizer::load(path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().what();
  EXPECT_EQ(*loaded->encode("abcdd"), (Ids{0, 5, 3, 3}));
  std::ofstream(path) << "YQ== 0\nnot-base64! 1\n";
  auto bad = Tokenizer::load(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().what().find("line 2"), std::string::npos) << bad.error().what();
  EXPECT_EQ(bad.error().offset, 7);
  EXPECT_TRUE(Tokenizer::from_tiktoken(tiny_tiktoken(), "o200k", "x").has_value());
}

TEST(Batch, InputOrderAndFirstError) {
  const Tokenizer t = build(spm());
  std::vector<std::string> owned;
  for (int i = 0; i < 50; ++i) {
    owned.push_back(std::string(static_cast<std::size_t>(i % 7), 'a') + " ab\n" +
                    std::to_string(i));
  }
  std::vector<std::string_view> texts(owned.begin(), owned.end());
  EncodeOptions opt;
  auto batch = t.encode_batch(texts, opt, 4);
  ASSERT_TRUE(batch.has_value());
  ASSERT_EQ(batch->size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ((*batch)[i].ids, *t.encode(texts[i])) << i;
  }
  texts[31] = "ok\xff";
  texts[12] = "a\xc3";
  auto bad = t.encode_batch(texts, opt, 3);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().source, "texts[12]");
  EXPECT_EQ(bad.error().offset, 1);
  EXPECT_TRUE(t.encode_batch({}, opt, 2).has_value());
}

std::string stream_all(const Tokenizer& t, const Ids& ids, bool check_complete) {
  StreamDecoder stream(t);
  std::string all;
  for (const TokenId id : ids) {
    auto piece = stream.step(id);
    EXPECT_TRUE(piece.has_value());
    if (check_complete) {
      EXPECT_TRUE(utf8_valid(*piece));
    }
    all += *piece;
  }
  return all + stream.flush();
}

TEST(Stream, HoldsBackPartialUtf8) {
  const Tokenizer bl = build(byte_level(false));
  StreamDecoder stream(bl);
  EXPECT_EQ(*stream.step(0xE4), "");
  EXPECT_EQ(*stream.step(0xB8), "");
  EXPECT_EQ(*stream.step(0x80), "一");
  EXPECT_EQ(*stream.step(256), " a");
  EXPECT_EQ(*stream.step(0xE4), "");
  EXPECT_EQ(stream.flush(), "\xEF\xBF\xBD");
  const std::string text = "h\xC3\xA9llo \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80!";
  Ids bytes;
  for (const char c : text) {
    bytes.push_back(static_cast<unsigned char>(c));
  }
  EXPECT_EQ(stream_all(bl, bytes, true), text);
  // Invalid bytes in the middle and at the end: same U+FFFDs as decode.
  const Ids odd = {'a', 0xFF, 0xE4, 0xB8, 'b', 0xF0, 0x9F, 0xE4};
  EXPECT_EQ(stream_all(bl, odd, false), *bl.decode(odd));
  EXPECT_FALSE(StreamDecoder(bl).step(999).has_value());

  const Tokenizer sp = build(spm());
  StreamDecoder s2(sp);
  EXPECT_EQ(*s2.step(7), "a");
  EXPECT_EQ(*s2.step(11), "");  // <0xE4>: incomplete
  EXPECT_EQ(*s2.step(12), "");
  EXPECT_EQ(*s2.step(13), "一");
  const Ids ids = {3, 3, 7, 10, 11, 12, 13, 4, 11, 5, 1, 9};
  EXPECT_EQ(stream_all(sp, ids, false), *sp.decode(ids));
}

TEST(Errors, MessagesNameFileFieldAndOffset) {
  const std::string good = spm().dump();
  auto r = Tokenizer::from_json(good.substr(0, 200), "", "cut.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().source, "cut.json");
  EXPECT_EQ(r.error().offset, 200);
  EXPECT_NE(r.error().message.find("line 1, column 201"), std::string::npos) << r.error().what();
  EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().what();
  r = Tokenizer::from_json("{\n \"a\": [1,\n  2,,\n]}", "", "syntax.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("line 3, column 5"), std::string::npos) << r.error().what();
  EXPECT_EQ(r.error().offset, 16);

  json j = spm();
  j["model"]["type"] = "Unigram";
  r = Tokenizer::from_json(j.dump(), "", "uni.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().what(),
            "uni.json: model.type: unsupported model type 'Unigram' (supported: BPE, and tiktoken "
            "rank files)");

  j = spm();
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "(ab"}}}, {"content", ""}};
  r = Tokenizer::from_json(j.dump(), "", "re.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().source, "re.json: normalizer.pattern.Regex");
  EXPECT_NE(r.error().message.find("end pattern with unmatched parenthesis"), std::string::npos)
      << r.error().what();

  j = spm();
  j["model"]["merges"].push_back("▁ zz");
  r = Tokenizer::from_json(j.dump(), "", "m.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().what(), "m.json: model.merges[3]: token 'zz' is not in the vocabulary");

  j = spm();
  j["model"].erase("merges");
  r = Tokenizer::from_json(j.dump(), "", "m.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().what(), "m.json: model.merges: missing or not an array");

  j = spm();
  j["decoder"] = {{"type", "CTC"}};
  r = Tokenizer::from_json(j.dump(), "", "d.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().what(), "d.json: decoder.type: unsupported decoder 'CTC'");

  auto enc = build(spm()).encode("ab\xE4\xB8");
  ASSERT_FALSE(enc.has_value());
  EXPECT_EQ(enc.error().offset, 2);
}

TEST(Memory, ApproximateHeap) {
  const Tokenizer small = build(spm());
  EXPECT_GT(small.memory_bytes(), 1000u);
  EXPECT_LT(small.memory_bytes(), 1000000u);
  const Tokenizer* v3 = testing::shared_tokenizer("deepseek-v3", "tokenizer.json");
  if (v3 == nullptr) {
    LLMBENCH_SHARED_DATA_MISSING() << "DeepSeek-V3 tokenizer not in the shared data";
  }
  // 128k tokens and 128k merges: tens of MB, not hundreds.
  std::printf("[ memory   ] deepseek-v3: %zu bytes\n", v3->memory_bytes());
  EXPECT_GT(v3->memory_bytes(), 8u << 20);
  EXPECT_LT(v3->memory_bytes(), 200u << 20);
}

}  // namespace
}  // namespace llmbench::tokenizer
