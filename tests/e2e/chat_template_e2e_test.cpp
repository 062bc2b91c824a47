// End to end: chat prompt lengths include the chat template on both sides. `llmbench serve
// --tokenizer` (DeepSeek-R1's tokenizer and its tokenizer_config.json chat template) counts chat
// `usage.prompt_tokens` of the rendered prompt; `llmbench run --tokenizer` against it counts the
// same; both equal the token count of the prompt rendered by hand from the template's text; and
// `llmbench tokenize --chat` shows that prompt.

#include "llmbench/metrics/record_io.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include "shared_data.hpp"
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The conversation every request sends, and the prompt DeepSeek-R1's template renders from it
/// with a generation prompt: BOS, the system prompt, `<｜User｜>` turns, the assistant's answer
/// with its `<think>` part cut off and `<｜end▁of▁sentence｜>`, then `<｜Assistant｜><think>\n`.
const json kMessages = json::array({{{"role", "system"}, {"content", "You are terse."}},
                                    {{"role", "user"}, {"content", "Hi there"}},
                                    {{"role", "assistant"}, {"content", "<think>x</think>Hello!"}},
                                    {{"role", "user"}, {"content", "Bye"}}});
constexpr const char* kRendered =
    "<｜begin▁of▁sentence｜>You are terse.<｜User｜>Hi there<｜Assistant｜>Hello!"
    "<｜end▁of▁sentence｜><｜User｜>Bye<｜Assistant｜><think>\n";

class ChatTemplateE2eTest : public ScratchDirTest {
 protected:
  ChatTemplateE2eTest() : ScratchDirTest("e2e-chat") {}

  /// DeepSeek-R1's tokenizer (unpacked) and tokenizer_config.json in `dir_/tok`; false when the
  /// shared data is not there.
  bool make_tokenizer_folder() {
    const char* env = std::getenv("LLMBENCH_SOURCE_DIR");
    const fs::path root = fs::path(env != nullptr ? env : LLMBENCH_TEST_SOURCE_DIR) / ".." /
                          "shared" / "data" / "tokenizers" / "deepseek-r1";
    std::error_code ec;
    if (!fs::exists(root / "tokenizer.derived.json.zst", ec))
      return false;
    fs::create_directories(dir_ / "tok");
    fs::copy_file(root / "tokenizer_config.json", dir_ / "tok" / "tokenizer_config.json");
    const std::string cmd =
        fmt::format("zstd -d -q -f -o '{}' '{}'", (dir_ / "tok" / "tokenizer.json").string(),
                    (root / "tokenizer.derived.json.zst").string());
    return std::system(cmd.c_str()) == 0;
  }

  /// `llmbench tokenize` of `text`'s file: the "count: N" it prints (-1 when absent).
  std::int64_t count_of(const std::vector<std::string>& extra, const fs::path& input) {
    std::vector<std::string> args{"tokenize", "--tokenizer", (dir_ / "tok").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(input.string());
    std::string out;
    EXPECT_EQ(llmbench(args, out), 0) << out;
    last_output_ = out;
    const auto at = out.rfind("count: ");
    return at == std::string::npos ? -1 : std::stoll(out.substr(at + 7));
  }

  std::string last_output_;
};

TEST_F(ChatTemplateE2eTest, ServerAndClientCountTheRenderedPrompt) {
  if (!make_tokenizer_folder()) {
    LLMBENCH_SHARED_DATA_MISSING() << "tokenizers/deepseek-r1 (and zstd) needed";
  }
  // The expected count, from the hand-rendered prompt (independent of the template code).
  std::ofstream(dir_ / "rendered.txt") << kRendered;
  const std::int64_t expected = count_of({}, dir_ / "rendered.txt");
  ASSERT_GT(expected, 10) << last_output_;

  // tokenize --chat renders the same prompt and counts the same tokens.
  std::ofstream(dir_ / "messages.json") << kMessages.dump();
  EXPECT_EQ(count_of({"--chat"}, dir_ / "messages.json"), expected) << last_output_;
  EXPECT_NE(last_output_.find("prompt: " + json(kRendered).dump() + "\n"), std::string::npos)
      << last_output_;

  std::ofstream(dir_ / "conv.jsonl")
      << json{{"messages", kMessages}, {"output_len", 4}}.dump() << "\n";
  ServeProcess server(dir_, {"--timing", "fixed", "--ttft-ms", "1", "--itl-ms", "1", "--tokenizer",
                             (dir_ / "tok").string()});
  ASSERT_GT(server.port(), 0) << server.log();
  std::string out;
  ASSERT_EQ(llmbench({"run",
                      "--base-url",
                      server.base_url(),
                      "--backend",
                      "openai-chat",
                      "--tokenizer",
                      (dir_ / "tok").string(),
                      "--dataset-name",
                      "custom",
                      "--dataset-path",
                      (dir_ / "conv.jsonl").string(),
                      "--num-prompts",
                      "5",
                      "--max-concurrency",
                      "2",
                      "--save-result",
                      "--result-dir",
                      (dir_ / "results").string(),
                      "--result-filename",
                      "run.json",
                      "--quiet"},
                     out),
            0)
      << out << server.log();
  std::istringstream in(read_file((dir_ / "results" / "run.records.jsonl").string()));
  std::string line;
  int records = 0;
  while (std::getline(in, line)) {
    auto rec = metrics::record_from_json_line(line);
    ASSERT_TRUE(rec) << rec.error().what();
    ASSERT_TRUE(rec->ok()) << rec->error_message;
    ++records;
    EXPECT_EQ(rec->input_tokens, expected) << "server usage.prompt_tokens, request " << rec->id;
    EXPECT_EQ(rec->input_tokens_local, expected) << "client count, request " << rec->id;
    EXPECT_EQ(rec->prompt_len, expected) << "request " << rec->id;
  }
  EXPECT_EQ(records, 5);
}

}  // namespace
}  // namespace llmbench::e2e
