// `--tokenizer` given as a Hugging Face id (app/tokenizer_alias.hpp): the known DeepSeek, Qwen
// and Llama ids map to bundled tokenizer names; paths and plain names pass through; other ids
// are an error naming the flag and the way out.

#include "llmbench/app/tokenizer_alias.hpp"

#include "llmbench/core/error.hpp"

#include <gtest/gtest.h>

namespace llmbench::app {
namespace {

TEST(TokenizerAlias, KnownHubIdsMapToBundledTokenizers) {
  EXPECT_EQ(resolve_tokenizer_alias("deepseek-ai/DeepSeek-R1"), "deepseek-r1");
  EXPECT_EQ(resolve_tokenizer_alias("deepseek-ai/DeepSeek-R1-0528"), "deepseek-r1");
  EXPECT_EQ(resolve_tokenizer_alias("deepseek-ai/DeepSeek-V3"), "deepseek-v3");
  EXPECT_EQ(resolve_tokenizer_alias("deepseek-ai/DeepSeek-V3-0324"), "deepseek-v3");
  EXPECT_EQ(resolve_tokenizer_alias("deepseek-ai/DeepSeek-V3.1"), "deepseek-v3.1");
  EXPECT_EQ(resolve_tokenizer_alias("deepseek-ai/deepseek-r1-distill-qwen-7b"),
            "deepseek-r1-distill-qwen");
  EXPECT_EQ(resolve_tokenizer_alias("deepseek-ai/DeepSeek-R1-Distill-Llama-8B"), "llama3");
  EXPECT_EQ(resolve_tokenizer_alias("Qwen/Qwen2.5-7B-Instruct"), "qwen2.5");
  EXPECT_EQ(resolve_tokenizer_alias("Qwen/Qwen3-32B"), "qwen3");
  EXPECT_EQ(resolve_tokenizer_alias("meta-llama/Llama-3.1-8B-Instruct"), "llama3");
  EXPECT_EQ(resolve_tokenizer_alias("deepseek-ai/deepseek-coder-6.7b-instruct"), "deepseek-coder");
}

TEST(TokenizerAlias, PathsAndNamesPassThrough) {
  EXPECT_EQ(resolve_tokenizer_alias("deepseek-v3"), "deepseek-v3");
  EXPECT_EQ(resolve_tokenizer_alias("/tmp"), "/tmp");
  EXPECT_EQ(resolve_tokenizer_alias("./dir/tokenizer.json"), "./dir/tokenizer.json");
  EXPECT_EQ(resolve_tokenizer_alias("a/b/c"), "a/b/c");  // two slashes: a path
}

TEST(TokenizerAlias, UnknownHubIdSaysWhatToDo) {
  try {
    (void)resolve_tokenizer_alias("mistralai/Mistral-7B-v0.1");
    FAIL() << "no error";
  } catch (const Exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--tokenizer"), std::string::npos) << what;
    EXPECT_NE(what.find("mistralai/Mistral-7B-v0.1 tokenizer.json"), std::string::npos) << what;
    EXPECT_NE(what.find("--local-dir DIR"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace llmbench::app
