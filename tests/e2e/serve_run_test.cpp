// End to end: `llmbench serve` with known timing, `llmbench run` against it as separate processes,
// and every client-side chunk time compared with the time the server wrote that chunk (both on
// CLOCK_MONOTONIC, so they are directly comparable on one machine).

#include "llmbench/metrics/record_io.hpp"
#include "llmbench/metrics/summary.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ServerChunks {
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks;  // (abs ns, tokens)
};

/// Server emission log: request_id → chunks.
std::map<std::string, ServerChunks> read_emission_log(const std::string& path) {
  std::map<std::string, ServerChunks> out;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    const auto j = json::parse(line);
    ServerChunks s;
    for (const auto& c : j.at("chunks")) {
      s.chunks.emplace_back(c.at(0).get<std::int64_t>(), c.at(1).get<std::int64_t>());
    }
    out[j.at("request_id").get<std::string>()] = std::move(s);
  }
  return out;
}

double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return metrics::percentile_sorted(v, q);
}

class ServeRunTest : public ScratchDirTest {
 protected:
  ServeRunTest() : ScratchDirTest("e2e") {}

  /// Starts the server with TTFT 40 ms, ITL 4 ms, 3 tokens per chunk; returns its port.
  int start_server() {
    server_ = std::make_unique<ServeProcess>(
        dir_, std::vector<std::string>{"--timing", "fixed", "--ttft-ms", "40", "--itl-ms", "4",
                                       "--tokens-per-chunk", "3", "--max-num-seqs", "64",
                                       "--emission-log", (dir_ / "emission.jsonl").string()});
    EXPECT_GT(server_->port(), 0) << server_->log();
    return server_->port();
  }

  /// Runs the client; returns its exit code.
  int run_client(int port, const std::vector<std::string>& extra) {
    std::vector<std::string> argv{binary(),
                                  "run",
                                  "--base-url",
                                  fmt::format("http://127.0.0.1:{}", port),
                                  "--backend",
                                  "vllm",
                                  "--num-prompts",
                                  "200",
                                  "--output-len",
                                  "32",
                                  "--seed",
                                  "7",
                                  "--save-result",
                                  "--result-dir",
                                  (dir_ / "results").string(),
                                  "--result-filename",
                                  "run.json",
                                  "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Process client(argv, (dir_ / "client.log").string());
    return client.wait(std::chrono::seconds(120));
  }

  /// Compares client records with the server's emission log; `per_token` also checks per-chunk
  /// token counts (known exactly when the server streams usage per chunk).
  void compare(bool per_token) {
    server_->process().signal(SIGTERM);
    ASSERT_EQ(server_->process().wait(std::chrono::seconds(10)), 0) << server_->log();
    const auto results = json::parse(read_file((dir_ / "results" / "run.json").string()));
    const auto run_start = results.at("run_start_steady_ns").get<std::int64_t>();
    EXPECT_EQ(results.at("completed").get<int>(), 200);
    const auto server = read_emission_log((dir_ / "emission.jsonl").string());
    std::istringstream in(read_file((dir_ / "results" / "run.records.jsonl").string()));
    std::string line;
    std::vector<double> first_chunk_err_ms;
    std::vector<double> chunk_err_ms;
    std::vector<double> gap_err_ms;
    std::vector<double> ttft_ms;
    std::vector<double> itl_ms;
    int records = 0;
    while (std::getline(in, line)) {
      auto rec = metrics::record_from_json_line(line);
      ASSERT_TRUE(rec) << rec.error().what();
      ++records;
      ASSERT_TRUE(rec->ok()) << rec->error_message;
      const auto it = server.find(fmt::format("llmbench-{}", rec->id));
      ASSERT_NE(it, server.end()) << "request " << rec->id << " missing from the emission log";
      const auto& s = it->second.chunks;
      ASSERT_EQ(rec->chunks.size(), s.size()) << "request " << rec->id;
      ASSERT_EQ(rec->output_tokens, 32);
      for (std::size_t i = 0; i < s.size(); ++i) {
        const double err =
            static_cast<double>(run_start + rec->chunks[i].time_ns - s[i].first) / 1e6;
        EXPECT_GE(err, 0.0) << "client saw chunk " << i << " of request " << rec->id
                            << " before the server wrote it";
        chunk_err_ms.push_back(err);
        if (i == 0)
          first_chunk_err_ms.push_back(err);
        if (per_token) {
          EXPECT_EQ(rec->chunks[i].tokens, s[i].second);
        }
        if (i > 0) {
          const double client_gap =
              static_cast<double>(rec->chunks[i].time_ns - rec->chunks[i - 1].time_ns) / 1e6;
          const double server_gap = static_cast<double>(s[i].first - s[i - 1].first) / 1e6;
          gap_err_ms.push_back(std::abs(client_gap - server_gap));
        }
      }
      metrics::assign_chunk_tokens(*rec);
      const auto lat = metrics::request_latency(*rec);
      ttft_ms.push_back(lat.ttft_ms);
      metrics::append_itl_ms(*rec, itl_ms);
    }
    EXPECT_EQ(records, 200);
    EXPECT_EQ(server.size(), 200U);
    const double ttft_err_p50 = pct(first_chunk_err_ms, 50);
    const double ttft_err_p99 = pct(first_chunk_err_ms, 99);
    const double gap_err_p50 = pct(gap_err_ms, 50);
    const double gap_err_p99 = pct(gap_err_ms, 99);
    std::printf("client-vs-server first-chunk delay: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
                ttft_err_p50, ttft_err_p99, pct(first_chunk_err_ms, 100));
    std::printf("client-vs-server chunk delay (all chunks): p50 %.3f ms, p99 %.3f ms\n",
                pct(chunk_err_ms, 50), pct(chunk_err_ms, 99));
    std::printf("|client gap - server gap|: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", gap_err_p50,
                gap_err_p99, pct(gap_err_ms, 100));
    std::printf("client TTFT p50 %.2f ms (server TTFT 40 ms); ITL p50 %.3f ms (server 4 ms)\n",
                pct(ttft_ms, 50), pct(itl_ms, 50));
    // Loopback delivery plus scheduling on a shared 2-core machine: generous, but it catches
    // any systematic error (a missed chunk, a timestamp taken at the wrong place, ms/ns mixups).
    EXPECT_LT(ttft_err_p50, 5.0);
    EXPECT_LT(ttft_err_p99, 50.0);
    EXPECT_LT(gap_err_p50, 2.0);
    EXPECT_LT(gap_err_p99, 50.0);
    EXPECT_GE(pct(ttft_ms, 0), 40.0);
    EXPECT_NEAR(pct(itl_ms, 50), 4.0, 1.0);
  }

  std::unique_ptr<ServeProcess> server_;
};

TEST_F(ServeRunTest, Concurrency8PerChunkUsage) {
  const int port = start_server();
  ASSERT_GT(port, 0);
  ASSERT_EQ(run_client(port, {"--max-concurrency", "8", "--continuous-usage"}), 0)
      << read_file((dir_ / "client.log").string());
  compare(true);
}

TEST_F(ServeRunTest, RequestRate20) {
  const int port = start_server();
  ASSERT_GT(port, 0);
  ASSERT_EQ(run_client(port, {"--request-rate", "20"}), 0)
      << read_file((dir_ / "client.log").string());
  compare(false);
}

}  // namespace
}  // namespace llmbench::e2e
