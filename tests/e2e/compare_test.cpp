// End to end: `llmbench compare` on runs against `llmbench serve` configurations (its
// acceptance test): a 10% TPOT change is detected with an interval that excludes 0; 20 seeded pairs
// of identical simulated configurations give at most one significant difference; `--gate`
// passes, fails on the error rate (serve's fault injection, docs/faults.md) and on latency;
// a vLLM `bench serve --save-detailed` file made here with vLLM's key names is read.

#include "llmbench/metrics/record_file.hpp"
#include "llmbench/metrics/summary.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A finished `llmbench` command: its exit code and its output (stdout and stderr together).
struct Finished {
  int code = -1;
  std::string output;
};

class CompareTest : public ScratchDirTest {
 protected:
  CompareTest() : ScratchDirTest("compare") {}

  Finished llmbench(const std::vector<std::string>& args, const std::string& name) {
    std::vector<std::string> argv{binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string log = (dir_ / (name + ".log")).string();
    Process p(argv, log);
    const int code = p.wait(std::chrono::seconds(120));
    return {.code = code, .output = read_file(log)};
  }

  /// `llmbench run` of 100 requests (32 output tokens, concurrency 8) against a fixed-timing
  /// `llmbench serve` with `server_args`; returns the results JSON path.
  std::string run_against(const std::vector<std::string>& server_args, const std::string& name) {
    std::vector<std::string> args{"--timing",           "fixed", "--max-num-seqs", "64",
                                  "--tokens-per-chunk", "1"};
    args.insert(args.end(), server_args.begin(), server_args.end());
    const fs::path serve_dir = dir_ / ("serve-" + name);
    fs::create_directories(serve_dir);
    ServeProcess server(serve_dir, args);
    EXPECT_GT(server.port(), 0) << server.log();
    const Finished run =
        llmbench({"run", "--base-url", server.base_url(), "--backend", "vllm", "--num-prompts",
                  "100", "--output-len", "32", "--max-concurrency", "8", "--seed", "7",
                  "--save-result", "--result-dir", (dir_ / "results").string(), "--result-filename",
                  name + ".json", "--quiet"},
                 "run-" + name);
    EXPECT_TRUE(run.code == 0 || run.code == 1) << run.output;
    return (dir_ / "results" / (name + ".json")).string();
  }

  /// `llmbench simulate` of `prompts` requests at 20 req/s with `seed`; the results path.
  std::string simulate(int seed, int prompts, const std::string& name) {
    const Finished sim =
        llmbench({"simulate", "--num-prompts", std::to_string(prompts), "--request-rate", "20",
                  "--seed", std::to_string(seed), "--random-input-len", "256",
                  "--random-output-len", "64", "--random-range-ratio", "0.5", "--save-result",
                  "--result-dir", (dir_ / "sim").string(), "--result-filename", name + ".json"},
                 "sim-" + name);
    EXPECT_EQ(sim.code, 0) << sim.output;
    return (dir_ / "sim" / (name + ".json")).string();
  }

  /// `simulate` of the KV-bound what-if: DeepSeek-R1 on 8 x H200 with 9,406 KV blocks of 64
  /// tokens (602k KV tokens), 2,000-token prompts and 500-token outputs at 20 req/s (far above
  /// what that KV cache serves), with `max_num_seqs`; the results path.
  std::string kv_bound_simulation(int max_num_seqs) {
    const std::string name = fmt::format("seqs{}", max_num_seqs);
    const Finished sim =
        llmbench({"simulate", "--num-prompts", "1500", "--request-rate", "20", "--random-input-len",
                  "2000", "--random-output-len", "500", "--num-gpu-blocks-override", "9406",
                  "--no-enable-prefix-caching", "--max-num-seqs", std::to_string(max_num_seqs),
                  "--save-result", "--result-dir", (dir_ / "whatif").string(), "--result-filename",
                  name + ".json"},
                 "sim-" + name);
    EXPECT_EQ(sim.code, 0) << sim.output;
    return (dir_ / "whatif" / (name + ".json")).string();
  }
};

/// The metric `name` of the first comparison of a `compare --format json` document.
const json& metric(const json& doc, const std::string& name) {
  for (const auto& m : doc.at("comparisons").at(0).at("metrics")) {
    if (m.at("metric") == name)
      return m;
  }
  throw std::runtime_error("metric " + name + " missing");
}

/// The JSON document in `output` (the log also holds stderr lines before or after it).
json document_of(const std::string& output) {
  const auto start = output.find('{');
  const auto end = output.rfind('}');
  return json::parse(output.substr(start, end - start + 1));
}

TEST_F(CompareTest, TenPercentSlowerTpotIsWorseWithAnIntervalExcludingZero) {
  const std::string a = run_against({"--ttft-ms", "40", "--itl-ms", "4"}, "a");
  const std::string b = run_against({"--ttft-ms", "40", "--itl-ms", "4.4"}, "b");
  const Finished cmp = llmbench({"compare", a, b, "--format", "json"}, "compare");
  ASSERT_EQ(cmp.code, 0) << cmp.output;
  const json doc = document_of(cmp.output);
  const json& tpot = metric(doc, "tpot");
  const json& mean = tpot.at("statistics").at(0);
  std::printf("TPOT A %.3f ms, B %.3f ms, B-A %+.3f ms (%+.1f%%), 95%% CI [%+.3f, %+.3f], p %.3g\n",
              mean.at("a").get<double>(), mean.at("b").get<double>(),
              mean.at("difference").get<double>(), mean.at("relative").get<double>() * 100,
              mean.at("ci_low").get<double>(), mean.at("ci_high").get<double>(),
              tpot.at("p_adjusted").get<double>());
  EXPECT_EQ(tpot.at("verdict"), "worse");
  EXPECT_GT(mean.at("ci_low").get<double>(), 0.0);
  EXPECT_NEAR(mean.at("relative").get<double>(), 0.10, 0.04);
  EXPECT_LT(tpot.at("p_adjusted").get<double>(), 0.05);
  EXPECT_EQ(metric(doc, "itl").at("verdict"), "worse");
  // The text form names the verdict too.
  const Finished text = llmbench({"compare", a, b}, "compare-text");
  EXPECT_NE(text.output.find("worse"), std::string::npos) << text.output;
}

TEST_F(CompareTest, TwentyIdenticalPairsGiveAtMostOneSignificantDifference) {
  int flagged = 0;
  for (int pair = 0; pair < 20; ++pair) {
    const std::string a = simulate(1 + pair, 1000, fmt::format("a{}", pair));
    const std::string b = simulate(101 + pair, 1000, fmt::format("b{}", pair));
    const Finished cmp =
        llmbench({"compare", a, b, "--format", "json", "--seed", std::to_string(pair)},
                 fmt::format("compare{}", pair));
    ASSERT_EQ(cmp.code, 0) << cmp.output;
    std::string which;
    for (const auto& m : document_of(cmp.output).at("comparisons").at(0).at("metrics")) {
      if (m.at("verdict") == "better" || m.at("verdict") == "worse")
        which += fmt::format(" {} {}", m.at("metric").get<std::string>(),
                             m.at("verdict").get<std::string>());
    }
    if (!which.empty()) {
      ++flagged;
      std::printf("pair %d (seeds %d, %d):%s\n", pair, 1 + pair, 101 + pair, which.c_str());
    }
  }
  std::printf(
      "false-positive rate: %d of 20 identical pairs (%.0f%%) had a significant "
      "difference\n",
      flagged, flagged * 5.0);
  EXPECT_LE(flagged, 1);
}

TEST_F(CompareTest, GatePassesOnIdenticalRuns) {
  const std::string a = simulate(5, 300, "a");
  const std::string b = simulate(5, 300, "b");
  const Finished cmp = llmbench({"compare", a, b, "--gate"}, "gate");
  EXPECT_EQ(cmp.code, 0) << cmp.output;
  EXPECT_NE(cmp.output.find("Gate: PASS"), std::string::npos) << cmp.output;
  EXPECT_NE(cmp.output.find("error_rate:<0.1%: B = 0%, limit < 0.1%: pass"), std::string::npos);
  EXPECT_NE(cmp.output.find("p99_e2el_ms:+20%: B − A = +0.00 ms"), std::string::npos) << cmp.output;
  EXPECT_NE(cmp.output.find("output_throughput:-10%: B − A = +0.00 tok/s"), std::string::npos)
      << cmp.output;
}

TEST_F(CompareTest, GateFailsOnTheErrorRate) {
  const std::string a = run_against({"--ttft-ms", "20", "--itl-ms", "2"}, "a");
  const std::string b = run_against(
      {"--ttft-ms", "20", "--itl-ms", "2", "--fault", "http-503:0.05", "--fault-seed", "3"}, "b");
  const Finished cmp = llmbench({"compare", a, b, "--gate", "error_rate:<0.1%"}, "gate");
  EXPECT_EQ(cmp.code, 1) << cmp.output;
  EXPECT_NE(cmp.output.find("Gate: FAIL (1 of 1 failed)"), std::string::npos) << cmp.output;
  EXPECT_NE(cmp.output.find("llmbench: gate failed for " + b + ": error_rate:<0.1%: B = "),
            std::string::npos)
      << cmp.output;
  EXPECT_NE(cmp.output.find("%, limit < 0.1%: FAIL"), std::string::npos);
}

TEST_F(CompareTest, GateFailsOnLatencyAndBadGrammarIsAnInputError) {
  const std::string a = run_against({"--ttft-ms", "40", "--itl-ms", "2"}, "a");
  const std::string b = run_against({"--ttft-ms", "70", "--itl-ms", "2"}, "b");
  const Finished cmp = llmbench({"compare", a, b, "--gate"}, "gate");
  EXPECT_EQ(cmp.code, 1) << cmp.output;
  // The canary gate: mean TTFT moved by about +30 ms (+75%), past +10% of A (about 4 ms).
  const auto line = cmp.output.find("gate failed for " + b + ": mean_ttft_ms:+10%: B − A = +");
  ASSERT_NE(line, std::string::npos) << cmp.output;
  const std::string rest = cmp.output.substr(line, cmp.output.find('\n', line) - line);
  EXPECT_NE(rest.find("(10% of A): FAIL"), std::string::npos) << rest;
  const auto plus = rest.find("= +") + 3;
  EXPECT_NEAR(std::stod(rest.substr(plus)), 30.0, 5.0) << rest;
  // One-sided: the same pair the other way round (B 30 ms faster) passes.
  const Finished faster = llmbench({"compare", b, a, "--gate"}, "gate-faster");
  EXPECT_EQ(faster.code, 0) << faster.output;
  EXPECT_NE(cmp.output.find("error_rate:<0.1%: B = 0%, limit < 0.1%: pass"), std::string::npos);
  const Finished user = llmbench({"compare", a, b, "--gate", "mean_ttft_ms:+50ms"}, "gate-user");
  EXPECT_EQ(user.code, 0) << user.output;
  const Finished bad = llmbench({"compare", a, b, "--gate", "p99_ttft_ms:+5x"}, "gate-bad");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--gate: unknown unit 'x' (valid: ms, %) (at byte 14)"),
            std::string::npos)
      << bad.output;
  const Finished missing = llmbench({"compare", a, (dir_ / "nope.json").string()}, "missing");
  EXPECT_EQ(missing.code, 2) << missing.output;
  EXPECT_NE(missing.output.find("nope.json"), std::string::npos) << missing.output;
}

TEST_F(CompareTest, VllmResultFileIsReadAndCompared) {
  const std::string a = run_against({"--ttft-ms", "40", "--itl-ms", "4"}, "a");
  // The same run written as `vllm bench serve --save-result --save-detailed` writes it
  // (vllm/benchmarks/serve.py: seconds, per-chunk gaps in `itls`, "" for no error).
  const auto records = metrics::read_record_file(
      (dir_ / "results" / json::parse(read_file(a)).at("records_file").get<std::string>())
          .string());
  const auto summary = metrics::summarize(records.records, {});
  json ttfts = json::array();
  json itls = json::array();
  json latencies = json::array();
  json output_lens = json::array();
  json errors = json::array();
  for (const auto& r : records.records) {
    ASSERT_TRUE(r.ok());
    const auto sent = static_cast<double>(r.sent_ns);
    ttfts.push_back((static_cast<double>(r.chunks.front().time_ns) - sent) / 1e9);
    json gaps = json::array();
    for (std::size_t i = 1; i < r.chunks.size(); ++i)
      gaps.push_back(static_cast<double>(r.chunks[i].time_ns - r.chunks[i - 1].time_ns) / 1e9);
    itls.push_back(gaps);
    latencies.push_back((static_cast<double>(r.chunks.back().time_ns) - sent) / 1e9);
    output_lens.push_back(metrics::output_token_count(r));
    errors.push_back("");
  }
  const json vllm{{"date", "20250101-000000"},
                  {"backend", "vllm"},
                  {"model_id", "m"},
                  {"num_prompts", records.records.size()},
                  {"duration", summary.duration_s},
                  {"completed", summary.completed},
                  {"failed", 0},
                  {"request_throughput", summary.request_throughput},
                  {"output_throughput", summary.output_throughput},
                  {"mean_ttft_ms", summary.ttft_ms.mean},
                  {"median_tpot_ms", summary.tpot_ms.median},
                  {"p99_itl_ms", 0.0},
                  {"input_lens", json::array()},
                  {"output_lens", output_lens},
                  {"ttfts", ttfts},
                  {"itls", itls},
                  {"latencies", latencies},
                  {"errors", errors}};
  const std::string v = (dir_ / "vllm-result.json").string();
  std::ofstream(v) << vllm.dump();
  const Finished cmp = llmbench({"compare", a, v, "--format", "json"}, "compare");
  ASSERT_EQ(cmp.code, 0) << cmp.output;
  const json doc = document_of(cmp.output);
  EXPECT_EQ(doc.at("comparisons").at(0).at("format"), "vllm bench serve");
  EXPECT_EQ(doc.at("baseline").at("format"), "llmbench records");
  // One token per chunk: every latency is the same run read two ways.
  for (const std::string name : {"ttft", "tpot", "itl", "e2el"}) {
    const json& m = metric(doc, name);
    EXPECT_EQ(m.at("verdict"), "no significant difference") << name;
    for (const auto& s : m.at("statistics")) {
      EXPECT_NEAR(s.at("difference").get<double>(), 0.0, 1e-6) << name << " " << s.at("statistic");
    }
  }
  EXPECT_NEAR(
      metric(doc, "output_throughput").at("statistics").at(0).at("difference").get<double>(), 0.0,
      1e-6);
  // A file that is neither names what is missing.
  const std::string other = (dir_ / "other.json").string();
  std::ofstream(other) << R"({"duration": 1.0})";
  const Finished bad = llmbench({"compare", a, other}, "bad");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find(other + ": neither an llmbench result"), std::string::npos)
      << bad.output;
}

// Why, for a what-if (docs/compare.md "What-if: the bottleneck"): doubling max_num_seqs on a
// KV-bound engine adds preemptions and TPOT tail and no capacity, and compare says the KV cache
// held both runs.
TEST_F(CompareTest, WhatIfDoublingMaxNumSeqsOnAKvBoundEngineNamesTheKvCache) {
  const std::string a = kv_bound_simulation(256);
  const std::string b = kv_bound_simulation(512);
  const json results = json::parse(read_file(b));
  EXPECT_EQ(results.at("bottleneck").at("which"), "KV cache");
  EXPECT_EQ(results.at("engine_facts").at("kv_capacity_tokens"), 601984);
  const Finished cmp = llmbench({"compare", a, b, "--format", "json"}, "whatif-json");
  ASSERT_EQ(cmp.code, 0) << cmp.output;
  const json w = document_of(cmp.output).at("comparisons").at(0).at("what_if");
  std::printf("%s\n", w.at("statement").get<std::string>().c_str());
  EXPECT_FALSE(w.at("moved").get<bool>());
  EXPECT_EQ(w.at("a").at("setting"), "max_num_seqs 256");
  EXPECT_EQ(w.at("b").at("setting"), "max_num_seqs 512");
  EXPECT_EQ(w.at("a").at("bottleneck"), "KV cache");
  EXPECT_EQ(w.at("b").at("bottleneck"), "KV cache");
  const std::string statement = w.at("statement");
  EXPECT_NE(statement.find("the bottleneck did not move (KV cache in both)"), std::string::npos);
  EXPECT_NE(statement.find("KV cache bound: 602k KV tokens hold ~"), std::string::npos);
  EXPECT_NE(statement.find("requests of 2.5k tokens; max_num_seqs 512 is not reached"),
            std::string::npos);
  // The text and Markdown forms print the same statement under the table.
  const Finished text = llmbench({"compare", a, b}, "whatif-text");
  EXPECT_NE(text.output.find("Bottleneck: " + statement), std::string::npos) << text.output;
  const Finished md = llmbench({"compare", a, b, "--format", "markdown"}, "whatif-md");
  EXPECT_NE(md.output.find("**Bottleneck**: " + statement), std::string::npos) << md.output;
}

// The same engine with max_num_seqs 32: the cap holds the batch; at 512 the KV cache does.
TEST_F(CompareTest, WhatIfSaysWhenTheBottleneckMoves) {
  const std::string a = kv_bound_simulation(32);
  const std::string b = kv_bound_simulation(512);
  const Finished cmp = llmbench({"compare", a, b, "--format", "json"}, "moved");
  ASSERT_EQ(cmp.code, 0) << cmp.output;
  const json w = document_of(cmp.output).at("comparisons").at(0).at("what_if");
  std::printf("%s\n", w.at("statement").get<std::string>().c_str());
  EXPECT_TRUE(w.at("moved").get<bool>());
  EXPECT_EQ(w.at("a").at("bottleneck"), "max_num_seqs");
  EXPECT_EQ(w.at("b").at("bottleneck"), "KV cache");
  EXPECT_NE(
      w.at("statement").get<std::string>().find("the bottleneck moved: max_num_seqs → KV cache"),
      std::string::npos);
  // Results without engine facts (a `run`) give no what-if, and say nothing of one.
  const std::string r = simulate(3, 50, "plain");
  json plain = json::parse(read_file(r));
  plain.erase("engine_facts");
  std::ofstream((dir_ / "sim" / "plain.json").string()) << plain.dump();
  const Finished none = llmbench({"compare", r, b, "--format", "json"}, "none");
  ASSERT_EQ(none.code, 0) << none.output;
  EXPECT_TRUE(document_of(none.output).at("comparisons").at(0).at("what_if").is_null());
}

}  // namespace
}  // namespace llmbench::e2e
