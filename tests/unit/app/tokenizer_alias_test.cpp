// `--tokenizer` given as a Hugging Face id (app/tokenizer_alias.hpp): the known DeepSeek, Qwen
// and Llama ids map to bundled tokenizer names; paths and plain names pass through; other ids
// are an error naming the flag and the way out.

#include "llmbench/app/tokenizer_alias.hpp"

#include "llmbench/app/tokenizers.hpp"
#include "llmbench/core/error.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "shared_data.hpp"
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

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

// The chat template is looked up the way the tokenizer is: `--tokenizer deepseek-ai/DeepSeek-R1`
// with a chat backend finds the template of the bundled deepseek-r1 folder (it used to look for
// a folder named "deepseek-ai/DeepSeek-R1" and fail).
TEST(TokenizerAlias, ChatTemplateResolvesTheSameHubId) {
  namespace fs = std::filesystem;
  const fs::path shared =
      fs::path(LLMBENCH_TEST_SOURCE_DIR) / ".." / "shared" / "data" / "tokenizers" / "deepseek-r1";
  if (!fs::exists(shared / "tokenizer.derived.json.zst")) {
    LLMBENCH_SHARED_DATA_MISSING() << "tokenizers/deepseek-r1 not found";
  }
  const fs::path data =
      fs::temp_directory_path() / fmt::format("llmbench-alias-{}", static_cast<long>(getpid()));
  const fs::path tok = data / "tokenizers" / "deepseek-r1";
  fs::create_directories(tok);
  fs::copy_file(shared / "tokenizer_config.json", tok / "tokenizer_config.json",
                fs::copy_options::overwrite_existing);
  const std::string unpack =
      fmt::format("zstd -d -q -f -o '{}' '{}'", (tok / "tokenizer.json").string(),
                  (shared / "tokenizer.derived.json.zst").string());
  ASSERT_EQ(std::system(unpack.c_str()), 0) << unpack;
  ::setenv("LLMBENCH_DATA", data.c_str(), 1);
  const auto from_id = load_chat_template("deepseek-ai/DeepSeek-R1");
  const auto from_name = load_chat_template("deepseek-r1");
  ::unsetenv("LLMBENCH_DATA");
  fs::remove_all(data);
  ASSERT_NE(from_id, nullptr);
  ASSERT_NE(from_name, nullptr);
  EXPECT_EQ(from_id->name(), from_name->name());
}

}  // namespace
}  // namespace llmbench::app
