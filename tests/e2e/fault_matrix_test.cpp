// End to end under faults: for every fault kind of `llmbench serve --fault`,
// `llmbench run --base-url` sends 200 requests at concurrency 8 to a server that injects it
// into a seeded share of them. The run must end by itself, account for every request (sent =
// completed + failed by kind), give every failure the kind a correct client records
// (`FaultKindInfo::client_kind`) in exactly the number the seed assigns (`pick_fault`), keep
// failures out of every latency figure, and summarize the good requests as a clean run does.

#include "llmbench/metrics/record_io.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/server/fault.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using server::FaultKind;

constexpr int kRequests = 200;
constexpr double kRate = 0.25;
constexpr std::uint64_t kSeed = 11;

/// What one run left behind.
struct RunResult {
  int exit_code = -1;
  json results;
  std::vector<metrics::RequestRecord> records;
  std::string log;
};

double median(std::vector<double> v) {
  if (v.empty())
    return std::nan("");
  std::sort(v.begin(), v.end());
  return metrics::percentile_sorted(v, 50);
}

class FaultMatrix : public ScratchDirTest {
 protected:
  FaultMatrix() : ScratchDirTest("faults") {}

  /// `serve` with fixed timing (TTFT 10 ms, ITL 1 ms) and `fault` (none when empty), then
  /// `run` against it; the server is stopped afterwards.
  RunResult run_against(const std::string& name, const std::string& fault) {
    const fs::path d = dir_ / name;
    fs::create_directories(d);
    std::vector<std::string> serve{"--timing",
                                   "fixed",
                                   "--ttft-ms",
                                   "10",
                                   "--itl-ms",
                                   "1",
                                   "--max-num-seqs",
                                   "64",
                                   "--fault-seed",
                                   std::to_string(kSeed),
                                   "--fault-stall-s",
                                   "20",
                                   "--fault-huge-event-bytes",
                                   "262144",
                                   "--fault-drip-bytes",
                                   "32",
                                   "--fault-drip-ms",
                                   "0.2"};
    if (!fault.empty()) {
      serve.push_back("--fault");
      serve.push_back(fault);
    }
    ServeProcess server(d, serve);
    RunResult r;
    if (server.port() <= 0) {
      ADD_FAILURE() << name << ": server did not start\n" << server.log();
      return r;
    }
    Process client({binary(),
                    "run",
                    "--base-url",
                    server.base_url(),
                    "--backend",
                    "vllm",
                    "--num-prompts",
                    std::to_string(kRequests),
                    "--max-concurrency",
                    "8",
                    "--output-len",
                    "8",
                    "--seed",
                    "7",
                    "--idle-timeout",
                    "0.3",
                    "--timeout",
                    "10",
                    "--save-result",
                    "--result-dir",
                    d.string(),
                    "--result-filename",
                    "run.json",
                    "--quiet"},
                   (d / "client.log").string());
    r.exit_code = client.wait(std::chrono::seconds(120));  // -1: the run did not end by itself
    r.log = read_file((d / "client.log").string());
    server.process().signal(SIGTERM);
    server.process().wait(std::chrono::seconds(10));
    const std::string results = read_file((d / "run.json").string());
    if (!results.empty())
      r.results = json::parse(results);
    std::istringstream in(read_file((d / "run.records.jsonl").string()));
    for (std::string line; std::getline(in, line);) {
      auto rec = metrics::record_from_json_line(line);
      if (rec)
        r.records.push_back(std::move(*rec));
    }
    return r;
  }
};

/// Requests 1..kRequests that the seed gives `kind` (the server numbers them in arrival order;
/// the count does not depend on which request arrives when).
int assigned(FaultKind kind) {
  server::FaultSettings s;
  s.seed = kSeed;
  s.rules = {{.kind = kind, .rate = kRate}};
  int n = 0;
  for (int i = 1; i <= kRequests; ++i) n += server::pick_fault(s, i) == kind ? 1 : 0;
  return n;
}

/// Median TTFT and ITL (ms) of the requests that completed.
std::pair<double, double> good_medians(const RunResult& r) {
  std::vector<double> ttft;
  std::vector<double> itl;
  for (const auto& rec : r.records) {
    if (!rec.ok())
      continue;
    const auto lat = metrics::request_latency(rec);
    ttft.push_back(lat.ttft_ms);
    if (!std::isnan(lat.tpot_ms))
      itl.push_back(lat.tpot_ms);
  }
  return {median(ttft), median(itl)};
}

TEST_F(FaultMatrix, EveryKindIsAccountedClassifiedAndKeptOutOfTheLatencies) {
  const RunResult clean = run_against("clean", "");
  ASSERT_EQ(clean.exit_code, 0) << clean.log;
  ASSERT_EQ(clean.results.value("completed", -1), kRequests) << clean.log;
  const auto [clean_ttft, clean_tpot] = good_medians(clean);
  ASSERT_FALSE(std::isnan(clean_ttft));

  for (const auto& info : server::kFaultKinds) {
    SCOPED_TRACE(std::string(info.name));
    const RunResult r = run_against(std::string(info.name), fmt::format("{}:{}", info.name, kRate));
    // The run ends by itself and exits 1 exactly when requests failed.
    ASSERT_NE(r.exit_code, -1) << "the run did not end within 120 s\n" << r.log;
    ASSERT_TRUE(r.results.is_object()) << r.log;
    const int expected_failures = info.client_kind.empty() ? 0 : assigned(info.kind);
    ASSERT_GT(assigned(info.kind), 0);
    EXPECT_EQ(r.exit_code, expected_failures > 0 ? 1 : 0) << r.log;
    // Every request is accounted: sent = completed + failed, failed = the sum by kind.
    const int completed = r.results.value("completed", -1);
    const int failed = r.results.value("failed", -1);
    EXPECT_EQ(r.results.value("total_requests", -1), kRequests);
    EXPECT_EQ(completed + failed, kRequests);
    int by_kind = 0;
    for (const auto& [kind, count] : r.results.at("failures_by_kind").items())
      by_kind += count.get<int>();
    EXPECT_EQ(by_kind, failed);
    ASSERT_EQ(static_cast<int>(r.records.size()), kRequests);
    // Every failure has the right kind, in the number the seed assigned.
    EXPECT_EQ(failed, expected_failures) << r.results.at("failures_by_kind").dump();
    if (expected_failures > 0) {
      EXPECT_EQ(r.results.at("failures_by_kind").value(std::string(info.client_kind), 0),
                expected_failures)
          << r.results.at("failures_by_kind").dump();
    }
    // No failure enters a latency figure: the summary's TTFT is that of the good requests.
    std::vector<double> good_ttft;
    for (const auto& rec : r.records) {
      if (rec.ok()) {
        good_ttft.push_back(metrics::request_latency(rec).ttft_ms);
        EXPECT_EQ(metrics::output_token_count(rec), 8) << "request " << rec.id;
      }
    }
    ASSERT_EQ(static_cast<int>(good_ttft.size()), completed);
    double mean = 0;
    for (const double t : good_ttft) mean += t / static_cast<double>(good_ttft.size());
    EXPECT_NEAR(r.results.value("mean_ttft_ms", -1.0), mean, 1e-6 + 1e-9 * mean);
    // The good requests look like a clean run's, within the noise of a shared machine.
    const auto [ttft, tpot] = good_medians(r);
    EXPECT_NEAR(ttft, clean_ttft, 10 + 0.5 * clean_ttft);
    EXPECT_NEAR(tpot, clean_tpot, 5 + 0.5 * clean_tpot);
  }
}

TEST(ServeFlags, MaxModelLenZeroIsRefused) {
  const fs::path log = fs::temp_directory_path() / fmt::format("llmbench-mml0-{}.log", ::getpid());
  Process serve({binary(), "serve", "--timing", "fixed", "--port", "0", "--max-model-len", "0"},
                log.string());
  const int code = serve.wait(std::chrono::seconds(20));
  EXPECT_EQ(code, 2) << read_file(log.string());
  EXPECT_NE(read_file(log.string()).find("--max-model-len"), std::string::npos);
  fs::remove(log);
}

}  // namespace
}  // namespace llmbench::e2e
