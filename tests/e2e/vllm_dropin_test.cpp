// `llmbench run` as a drop-in for `vllm bench serve` (docs/peer-flags.md): command lines pasted
// from vLLM's own documentation (docs/benchmarking/cli.md, "Online Benchmark" and "Custom
// Dataset"; Qwen3-Next's recipe with argparse's abbreviated flags) run against `llmbench serve`
// playing the server; the vLLM flags llmbench does not have are accepted with one warning naming
// them; a wrong --model stops before the load with exit 2 and one line naming the served model.

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class VllmDropInTest : public ScratchDirTest {
 protected:
  VllmDropInTest() : ScratchDirTest("vllm") {}

  /// Runs `llmbench args...` (at most 120 s); returns the exit code, the output in `out_`.
  int llmbench(const std::vector<std::string>& args) {
    return ScratchDirTest::llmbench(args, out_);
  }

  /// A documented `vllm bench serve` command line as words, "vllm bench serve" replaced by
  /// "run", line continuations dropped and each `{key}` placeholder of `fill` substituted.
  static std::vector<std::string> words(
      const std::string& pasted, const std::vector<std::pair<std::string, std::string>>& fill) {
    std::string text = pasted;
    for (const auto& [from, to] : fill) {
      for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    }
    std::istringstream in(text);
    std::vector<std::string> out;
    std::string vllm;
    std::string bench;
    std::string serve;
    in >> vllm >> bench >> serve;  // "vllm bench serve", replaced by "run"
    for (std::string w; in >> w;) {
      if (w == "\\")
        continue;
      if (w.size() > 1 && w.front() == '"' && w.back() == '"')
        w = w.substr(1, w.size() - 2);
      out.push_back(w);
    }
    out.insert(out.begin(), "run");
    return out;
  }

  std::string out_;
};

/// The fixed-timing server a pasted command runs against, serving `model`.
std::vector<std::string> fixed_server(const std::string& model) {
  return {"--timing", "fixed", "--ttft-ms", "1", "--itl-ms", "0.05", "--model", model};
}

// docs/benchmarking/cli.md, "Online Benchmark", as printed there (the dataset path filled in).
TEST_F(VllmDropInTest, TheOnlineBenchmarkOfVllmsDocsRuns) {
  ServeProcess server(dir_, fixed_server("NousResearch/Hermes-3-Llama-3.1-8B"));
  ASSERT_GT(server.port(), 0) << server.log();
  // A ShareGPT file in ShareGPT_V3's shape: every conversation has its reply.
  json conversations = json::array();
  for (int i = 0; i < 12; ++i) {
    conversations.push_back(
        {{"id", fmt::format("c{}", i)},
         {"conversations",
          {{{"from", "human"}, {"value", fmt::format("Question {}: what is a KV cache?", i)}},
           {{"from", "gpt"}, {"value", "A cache of attention keys and values, one per token."}}}}});
  }
  std::ofstream(dir_ / "ShareGPT_V3_unfiltered_cleaned_split.json") << conversations.dump();
  const std::string pasted = R"(vllm bench serve \
  --backend vllm \
  --model NousResearch/Hermes-3-Llama-3.1-8B \
  --endpoint /v1/completions \
  --dataset-name sharegpt \
  --dataset-path <your data path>/ShareGPT_V3_unfiltered_cleaned_split.json \
  --num-prompts 10)";
  auto args = words(pasted, {{"<your data path>", dir_.string()}});
  args.insert(args.end(), {"--base-url", server.base_url(), "--save-result", "--result-dir",
                           (dir_ / "out").string(), "--result-filename", "run.json"});
  ASSERT_EQ(llmbench(args), 0) << out_ << server.log();
  const json r = json::parse(read_file((dir_ / "out" / "run.json").string()));
  EXPECT_EQ(r.at("completed"), 10);
  EXPECT_EQ(r.at("model_id"), "NousResearch/Hermes-3-Llama-3.1-8B");
  EXPECT_NE(out_.find("Serving Benchmark Result"), std::string::npos) << out_;
}

// docs/benchmarking/cli.md, "Custom Dataset": --port alone (vLLM's host 127.0.0.1),
// --save-detailed, --skip-chat-template (accepted, named in the warning), --temperature=0.3.
TEST_F(VllmDropInTest, TheCustomDatasetCommandOfVllmsDocsRuns) {
  ServeProcess server(dir_, fixed_server("meta-llama/Llama-3.1-8B-Instruct"));
  ASSERT_GT(server.port(), 0) << server.log();
  std::ofstream(dir_ / "data.jsonl") << R"({"prompt": "What is the capital of India?"}
{"prompt": "What is the capital of Iran?"}
{"prompt": "What is the capital of China?"}
)";
  const std::string pasted = R"(vllm bench serve --port 9001 --save-result --save-detailed \
  --backend vllm \
  --model meta-llama/Llama-3.1-8B-Instruct \
  --endpoint /v1/completions \
  --dataset-name custom \
  --dataset-path <path-to-your-data-jsonl> \
  --skip-chat-template \
  --num-prompts 80 \
  --max-concurrency 1 \
  --temperature=0.3 \
  --top-p=0.75 \
  --result-dir "./log/")";
  auto args = words(pasted, {{"9001", std::to_string(server.port())},
                             {"<path-to-your-data-jsonl>", (dir_ / "data.jsonl").string()},
                             {"./log/", (dir_ / "log").string()}});
  args.insert(args.end(), {"--output-len", "4", "--quiet"});
  ASSERT_EQ(llmbench(args), 0) << out_ << server.log();
  EXPECT_NE(out_.find("--skip-chat-template"), std::string::npos) << out_;
  std::vector<fs::path> results;
  for (const auto& e : fs::directory_iterator(dir_ / "log")) {
    if (e.path().extension() == ".json")
      results.push_back(e.path());
  }
  ASSERT_EQ(results.size(), 1U);
  const json r = json::parse(read_file(results[0].string()));
  EXPECT_EQ(r.at("completed"), 80);
  EXPECT_EQ(r.at("max_concurrency"), 1);
}

// Qwen3-Next's recipe (vllm-project/recipes) abbreviates --random-input-len and
// --random-output-len, which argparse accepts, and names the tokenizer with --model and the
// served name with --served-model-name.
TEST_F(VllmDropInTest, AbbreviatedFlagsAndTheServedNameOfARecipeRun) {
  ServeProcess server(dir_, fixed_server("qwen3-next"));
  ASSERT_GT(server.port(), 0) << server.log();
  const std::string pasted = R"(vllm bench serve \
  --backend vllm \
  --model Qwen/Qwen3-Next-80B-A3B-Instruct \
  --served-model-name qwen3-next \
  --endpoint /v1/completions \
  --dataset-name random \
  --random-input 2048 \
  --random-output 1024 \
  --max-concurrency 256)";
  auto args = words(pasted, {{"2048", "64"}, {"1024", "4"}, {"256", "4"}});
  args.insert(args.end(), {"--base-url", server.base_url(), "--num-prompts", "8", "--quiet"});
  ASSERT_EQ(llmbench(args), 0) << out_ << server.log();
  EXPECT_NE(out_.find("--random-input read as --random-input-len"), std::string::npos) << out_;
  EXPECT_NE(out_.find("sending model 'qwen3-next'"), std::string::npos) << out_;
}

// Every flag of vllm bench serve that a user pasting a command meets (the list of the report
// that asked for this) is accepted, and one warning names each.
TEST_F(VllmDropInTest, VllmOnlyFlagsAreAcceptedWithOneWarningNamingEach) {
  const std::vector<std::string> flags = {"--trust-remote-code",
                                          "--tokenizer-mode",
                                          "auto",
                                          "--request-id-prefix",
                                          "bench-1-",
                                          "--logprobs",
                                          "1",
                                          "--profile",
                                          "--use-beam-search",
                                          "--endpoint-type",
                                          "openai",
                                          "--hf-split",
                                          "train",
                                          "--no-oversample",
                                          "--skip-chat-template",
                                          "--disable-shuffle",
                                          "--random-batch-size",
                                          "1"};
  std::vector<std::string> args = {"run", "--server-timing", "fixed", "--server-ttft-ms",
                                   "1",   "--server-itl-ms", "0.1",   "--num-prompts",
                                   "4",   "--output-len",    "4",     "--quiet"};
  args.insert(args.end(), flags.begin(), flags.end());
  ASSERT_EQ(llmbench(args), 0) << out_;
  const auto warning = out_.find("vllm bench serve flags accepted without effect here");
  ASSERT_NE(warning, std::string::npos) << out_;
  const std::string line = out_.substr(warning, out_.find('\n', warning) - warning);
  for (const auto& f : flags) {
    if (f.rfind("--", 0) == 0) {
      EXPECT_NE(line.find(f + " ("), std::string::npos) << f << " not in: " << line;
    }
  }
}

// A --model the server does not serve fails before the load: exit 2, one line naming the model
// the server lists, and no request of the load sent (the server counts one probe).
TEST_F(VllmDropInTest, AWrongModelFailsAtOnceNamingTheServedModel) {
  ServeProcess server(dir_, fixed_server("deepseek-ai/DeepSeek-R1"));
  ASSERT_GT(server.port(), 0) << server.log();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(llmbench({"run", "--base-url", server.base_url(), "--model", "deepseek-ai/DeepSeek-V3",
                      "--num-prompts", "200", "--quiet"}),
            2)
      << out_;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int error_lines = 0;
  std::istringstream in(out_);
  for (std::string line; std::getline(in, line);) {
    if (line.find("error") != std::string::npos) {
      ++error_lines;
      EXPECT_NE(line.find("--model"), std::string::npos) << line;
      EXPECT_NE(line.find("'deepseek-ai/DeepSeek-V3' is not served here"), std::string::npos)
          << line;
      EXPECT_NE(line.find("'deepseek-ai/DeepSeek-R1'"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(error_lines, 1) << out_;
  EXPECT_EQ(out_.find("Serving Benchmark Result"), std::string::npos) << out_;
  // A wide bound (a loaded 2-core machine): the point is that 200 requests were not sent.
  EXPECT_LT(seconds, 30) << out_;
}

}  // namespace
}  // namespace llmbench::e2e
