// `run --save-detailed` end to end (every number honest): the per-request TPOT, ITL
// and E2EL arrays against the built-in server with fixed timing, null where TPOT is undefined
// (all output in one chunk), and the warning for a flag the backend cannot honour.

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kRequests = 3;
constexpr int kOutputLen = 4;

/// How often `needle` occurs in `text`.
int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class DetailedOutput : public ScratchDirTest {
 protected:
  DetailedOutput() : ScratchDirTest("detailed") {}

  /// A run against the built-in server streaming `tokens_per_chunk` tokens per chunk, with
  /// `extra` flags; returns the results JSON and leaves the console in `console_`.
  json run(const std::string& name, int tokens_per_chunk, const std::vector<std::string>& extra) {
    std::vector<std::string> argv{binary(),
                                  "run",
                                  "--server-timing",
                                  "fixed",
                                  "--server-ttft-ms",
                                  "5",
                                  "--server-itl-ms",
                                  "2",
                                  "--server-tokens-per-chunk",
                                  std::to_string(tokens_per_chunk),
                                  "--dataset-name",
                                  "random",
                                  "--random-input-len",
                                  "8",
                                  "--random-output-len",
                                  std::to_string(kOutputLen),
                                  "--num-prompts",
                                  std::to_string(kRequests),
                                  "--max-concurrency",
                                  "1",
                                  "--save-result",
                                  "--save-detailed",
                                  "--result-dir",
                                  dir_.string(),
                                  "--result-filename",
                                  name + ".json",
                                  "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const fs::path log = dir_ / (name + ".log");
    Process client(argv, log.string());
    const int code = client.wait(std::chrono::seconds(60));
    console_ = read_file(log.string());
    EXPECT_EQ(code, 0) << console_;
    const std::string results = read_file((dir_ / (name + ".json")).string());
    return results.empty() ? json() : json::parse(results);
  }

  std::string console_;
};

TEST_F(DetailedOutput, OneChunkOutputHasNoTpotAndNoItl) {
  const json r = run("one-chunk", kOutputLen, {});
  ASSERT_TRUE(r.is_object()) << console_;
  ASSERT_EQ(r.at("tpots").size(), static_cast<std::size_t>(kRequests)) << r.dump();
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_TRUE(r.at("tpots").at(i).is_null()) << r.at("tpots");
    EXPECT_EQ(r.at("itls").at(i), json::array());
    EXPECT_GT(r.at("ttfts").at(i).get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(r.at("e2els").at(i).get<double>(), r.at("ttfts").at(i).get<double>());
    EXPECT_EQ(r.at("output_lens").at(i), kOutputLen);
  }
  EXPECT_TRUE(r.at("mean_tpot_ms").is_null());
  EXPECT_EQ(r.value("single_chunk_outputs", -1), kRequests);
}

TEST_F(DetailedOutput, StreamedOutputGivesEveryTokensGap) {
  const json r = run("streamed", 1, {});
  ASSERT_TRUE(r.is_object()) << console_;
  double sum_ms = 0;
  int samples = 0;
  for (int i = 0; i < kRequests; ++i) {
    const auto& itls = r.at("itls").at(i);
    ASSERT_EQ(itls.size(), static_cast<std::size_t>(kOutputLen - 1)) << itls;
    double request_sum = 0;
    for (const auto& gap : itls) request_sum += gap.get<double>();
    // TPOT is the mean of the request's ITLs, E2EL is TTFT plus their sum.
    EXPECT_NEAR(r.at("tpots").at(i).get<double>(), request_sum / (kOutputLen - 1), 1e-9);
    EXPECT_NEAR(r.at("e2els").at(i).get<double>(), r.at("ttfts").at(i).get<double>() + request_sum,
                1e-9);
    sum_ms += 1000 * request_sum;
    samples += static_cast<int>(itls.size());
  }
  // The arrays are the samples the summary is made of.
  EXPECT_NEAR(r.at("mean_itl_ms").get<double>(), sum_ms / samples, 1e-6);
}

TEST_F(DetailedOutput, FlagTheBackendCannotSendIsWarnedOnce) {
  const json r = run("unhonoured", 1, {"--backend", "openai", "--min-tokens", "2"});
  ASSERT_TRUE(r.is_object()) << console_;
  EXPECT_EQ(count(console_, "--min-tokens is not honoured: the openai backend"), 1) << console_;
  EXPECT_EQ(count(console_, "is not honoured"), 1) << console_;
  const json quiet = run("honoured", 1, {"--backend", "vllm", "--min-tokens", "2"});
  EXPECT_EQ(count(console_, "is not honoured"), 0) << console_;
}

}  // namespace
}  // namespace llmbench::e2e
