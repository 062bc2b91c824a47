#include "llmbench/app/compare_inputs.hpp"

#include "llmbench/core/error.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

namespace llmbench::app {
namespace {

using nlohmann::json;

/// A `vllm bench serve --save-result --save-detailed` document of three requests, the second
/// failed (vLLM leaves ttft 0, no ITLs and output_len 0 for it), with vLLM's key names.
json vllm_document() {
  return json{{"date", "20250101-000000"},
              {"backend", "vllm"},
              {"duration", 2.0},
              {"completed", 2},
              {"failed", 1},
              {"num_prompts", 3},
              {"request_throughput", 1.0},
              {"output_throughput", 3.5},
              {"mean_ttft_ms", 150.0},
              {"median_tpot_ms", 25.0},
              {"p99_itl_ms", 30.0},
              {"input_lens", {10, 10, 10}},
              {"output_lens", {4, 0, 3}},
              {"ttfts", {0.1, 0.0, 0.2}},
              {"itls", {{0.02, 0.03, 0.025}, json::array(), {0.01, 0.03}}},
              {"latencies", {0.175, 0.0, 0.24}},
              {"errors", {"", "Internal Server Error", ""}},
              {"generated_texts", {"a b c d", "", "x y z"}}};
}

TEST(CompareInputs, VllmArraysMapToSamples) {
  const auto run = samples_from_arrays(vllm_document(), "b.json");
  ASSERT_EQ(run.failed.size(), 3U);
  EXPECT_FALSE(run.failed[0]);
  EXPECT_TRUE(run.failed[1]);
  EXPECT_DOUBLE_EQ(run.duration_s, 2.0);
  EXPECT_DOUBLE_EQ(run.ttft_ms[0], 100.0);
  EXPECT_TRUE(std::isnan(run.ttft_ms[1]));
  // TPOT = (latency − ttft)/(output_len − 1): (175 − 100)/3 = 25 ms, (240 − 200)/2 = 20 ms.
  EXPECT_NEAR(run.tpot_ms[0], 25.0, 1e-9);
  EXPECT_NEAR(run.tpot_ms[2], 20.0, 1e-9);
  EXPECT_NEAR(run.e2el_ms[2], 240.0, 1e-9);
  ASSERT_EQ(run.itl_ms[0].size(), 3U);
  EXPECT_NEAR(run.itl_ms[0][1], 30.0, 1e-9);
  EXPECT_TRUE(run.itl_ms[1].empty());
  EXPECT_EQ(run.output_tokens[2], 3);
}

TEST(CompareInputs, WithoutLatenciesTheLatencyIsTtftPlusTheGaps) {
  json doc = vllm_document();
  doc.erase("latencies");
  const auto run = samples_from_arrays(doc, "b.json");
  EXPECT_NEAR(run.e2el_ms[0], 175.0, 1e-9);
  EXPECT_NEAR(run.tpot_ms[0], 25.0, 1e-9);
}

TEST(CompareInputs, MissingAndMismatchedKeysNameTheFile) {
  const auto message = [](const json& doc) {
    try {
      samples_from_arrays(doc, "runs/b.json");
    } catch (const Exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json doc = vllm_document();
  doc.erase("itls");
  EXPECT_NE(message(doc).find("runs/b.json: key 'itls' missing"), std::string::npos)
      << message(doc);
  doc = vllm_document();
  doc["errors"] = {"", ""};
  EXPECT_NE(message(doc).find("'errors' has 2 entries, 'ttfts' has 3"), std::string::npos);
  doc = vllm_document();
  doc["ttfts"][2] = "x";
  EXPECT_NE(message(doc).find("'ttfts'[2] is not a number"), std::string::npos);
  doc = vllm_document();
  doc.erase("duration");
  EXPECT_NE(message(doc).find("key 'duration' (s) missing"), std::string::npos);
}

}  // namespace
}  // namespace llmbench::app
