// End to end: `run --history` records five runs in SQLite; `llmbench history` lists them,
// prints a metric's trend, and `regress` flags exactly the one run made against a slower
// `llmbench serve` (the acceptance test), with the records (compare's statistics) and, once the
// records are gone, by the weaker summary-only rule.

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "process.hpp"
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;

class HistoryTest : public ScratchDirTest {
 protected:
  HistoryTest() : ScratchDirTest("history") {}

  /// Runs `llmbench args...`; returns (exit code, output).
  std::pair<int, std::string> llmbench(const std::vector<std::string>& args,
                                       const std::string& name) {
    std::vector<std::string> argv{binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string log = (dir_ / (name + ".log")).string();
    Process p(argv, log);
    const int code = p.wait(std::chrono::seconds(120));
    return {code, read_file(log)};
  }
};

/// The lines of `text` that contain `part`.
std::vector<std::string> lines_with(const std::string& text, const std::string& part) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(part) != std::string::npos)
      out.push_back(line);
  }
  return out;
}

TEST_F(HistoryTest, TrendOverFiveRunsAndTheRegressedRunIsFlagged) {
  const std::string db = (dir_ / "history.sqlite").string();
  for (int run = 1; run <= 5; ++run) {
    // Run 4 is made against a server whose decode is 50% slower. Gaps of 8 and 12 ms (not 4 and
    // 6): a loaded host's scheduling delays add about a millisecond to a gap, which would move a
    // 4-ms run's TPOT by a quarter.
    const fs::path serve_dir = dir_ / fmt::format("serve{}", run);
    fs::create_directories(serve_dir);
    ServeProcess server(serve_dir,
                        {"--timing", "fixed", "--ttft-ms", "40", "--itl-ms", run == 4 ? "12" : "8",
                         "--tokens-per-chunk", "1", "--max-num-seqs", "64"});
    ASSERT_GT(server.port(), 0) << server.log();
    const auto [code, output] = llmbench({"run",
                                          "--base-url",
                                          server.base_url(),
                                          "--backend",
                                          "vllm",
                                          "--num-prompts",
                                          "64",
                                          "--output-len",
                                          "32",
                                          "--max-concurrency",
                                          "8",
                                          "--seed",
                                          "7",
                                          "--save-result",
                                          "--result-dir",
                                          (dir_ / "results").string(),
                                          "--result-filename",
                                          fmt::format("r{}.json", run),
                                          "--history",
                                          db,
                                          "--label",
                                          "nightly",
                                          "--quiet"},
                                         fmt::format("run{}", run));
    ASSERT_EQ(code, 0) << output;
    EXPECT_NE(output.find(fmt::format("recorded as run {} in the history", run)), std::string::npos)
        << output;
  }
  const auto [list_code, listed] = llmbench({"history", "--history", db}, "list");
  ASSERT_EQ(list_code, 0) << listed;
  EXPECT_EQ(lines_with(listed, "nightly").size(), 5U) << listed;
  EXPECT_EQ(lines_with(listed, " yes").size(), 5U) << listed;  // every run's records reachable

  const auto [trend_code, trend] =
      llmbench({"history", "--history", db, "trend", "mean_tpot_ms"}, "trend");
  ASSERT_EQ(trend_code, 0) << trend;
  std::printf("%s", trend.c_str());
  const auto rows = lines_with(trend, "nightly");
  ASSERT_EQ(rows.size(), 5U) << trend;
  for (int run = 1; run <= 5; ++run) {
    std::istringstream row(rows[static_cast<std::size_t>(run - 1)]);
    int id = 0;
    std::string date;
    std::string label;
    double tpot = 0;
    row >> id >> date >> label >> tpot;
    EXPECT_EQ(id, run);
    EXPECT_NEAR(tpot, run == 4 ? 12.0 : 8.0, 1.2) << rows[static_cast<std::size_t>(run - 1)];
  }

  const auto [regress_code, regress] =
      llmbench({"history", "--history", db, "regress", "--baseline", "1"}, "regress");
  EXPECT_EQ(regress_code, 1) << regress;
  std::printf("%s", regress.c_str());
  const auto flagged = lines_with(regress, "REGRESSED");
  ASSERT_EQ(flagged.size(), 1U) << regress;
  EXPECT_EQ(flagged[0].rfind("run 4 ", 0), 0U) << flagged[0];
  EXPECT_NE(flagged[0].find("tpot +"), std::string::npos) << flagged[0];
  // Throughput is one number per run: the summary rule judges it beside compare's statistics
  // (8 streams of 40 + 31 x 12 ms against 40 + 31 x 8 ms: about 30% fewer tok/s).
  EXPECT_NE(flagged[0].find("output_throughput -"), std::string::npos) << flagged[0];
  EXPECT_NE(flagged[0].find("records: compare statistics"), std::string::npos);
  EXPECT_NE(regress.find("1 of 4 runs regressed against baseline run 1"), std::string::npos);

  // Without the records the weaker summary-only rule still flags run 4, and only run 4.
  for (const auto& entry : fs::directory_iterator(dir_ / "results")) {
    if (entry.path().string().ends_with(".records.jsonl"))
      fs::remove(entry.path());
  }
  const auto [summary_code, summary] =
      llmbench({"history", "--history", db, "regress", "--baseline", "1"}, "regress-summary");
  EXPECT_EQ(summary_code, 1) << summary;
  const auto weak = lines_with(summary, "REGRESSED");
  ASSERT_EQ(weak.size(), 1U) << summary;
  EXPECT_EQ(weak[0].rfind("run 4 ", 0), 0U) << weak[0];
  EXPECT_NE(weak[0].find("mean_tpot_ms +"), std::string::npos) << weak[0];
  EXPECT_NE(weak[0].find("output_throughput -"), std::string::npos) << weak[0];
  EXPECT_NE(weak[0].find("summary only: weaker rule"), std::string::npos);

  // A mistyped metric gets a suggestion, not a list of every key.
  const auto [typo_code, typo] =
      llmbench({"history", "--history", db, "trend", "p99_tfft_ms"}, "trend-typo");
  EXPECT_EQ(typo_code, 2) << typo;
  EXPECT_NE(typo.find("no run has 'p99_tfft_ms' (did you mean 'p99_ttft_ms'?)"), std::string::npos)
      << typo;
  EXPECT_LT(typo.size(), 300U) << typo;

  // Filters and a bad baseline.
  const auto [none_code, none] =
      llmbench({"history", "--history", db, "--label", "other"}, "list-none");
  EXPECT_EQ(none_code, 0);
  EXPECT_TRUE(lines_with(none, "nightly").empty()) << none;
  const auto [bad_code, bad] =
      llmbench({"history", "--history", db, "regress", "--baseline", "99"}, "bad");
  EXPECT_EQ(bad_code, 2);
  EXPECT_NE(bad.find("--baseline: no run with id 99"), std::string::npos) << bad;
}

}  // namespace
}  // namespace llmbench::e2e
