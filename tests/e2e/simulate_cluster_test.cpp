// `llmbench simulate --cluster FILE` end to end (docs/simulator.md "Cluster"): the records modes,
// the per-version and per-replica results, conversations through the cluster, a sweep of
// cluster points, and the errors for flags that do not apply.

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kClusters = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data/sim/clusters/";

class SimulateCluster : public ScratchDirTest {
 protected:
  SimulateCluster() : ScratchDirTest("cluster") {}

  /// Runs `llmbench args...` to its end (at most 120 s); returns the exit code, output in `log_`.
  int llmbench(const std::vector<std::string>& args) {
    return ScratchDirTest::llmbench(args, log_);
  }

  /// Lines of `path` (0 when missing).
  static int lines(const fs::path& path) {
    std::istringstream in(read_file(path.string()));
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
    return n;
  }

  /// `simulate --cluster canary-5pct.json` of 400 requests with `--records mode` into `name`.
  int canary(const std::string& name, const std::string& mode) {
    return llmbench({"simulate", "--cluster", kClusters + "canary-5pct.json", "--num-prompts",
                     "400", "--request-rate", "40", "--random-input-len", "256",
                     "--random-output-len", "32", "--records", mode, "--result-dir",
                     (dir_ / name).string(), "--result-filename", "r.json"});
  }

  std::string log_;
};

TEST_F(SimulateCluster, RecordsModesAndResultsPerVersionAndReplica) {
  ASSERT_EQ(canary("all", "all"), 0) << log_;
  EXPECT_NE(log_.find("Versions (fingerprint buckets)"), std::string::npos) << log_;
  EXPECT_NE(log_.find("v1.3.0-canary"), std::string::npos);
  EXPECT_EQ(lines(dir_ / "all" / "r.records.jsonl"), 400);
  const auto doc = json::parse(read_file((dir_ / "all" / "r.json").string()));
  EXPECT_EQ(doc["completed"], 400);
  const auto& cluster = doc["cluster"];
  ASSERT_EQ(cluster["versions"].size(), 3u);
  std::int64_t routed = 0;
  for (const auto& v : cluster["versions"]) routed += v["requests"].get<std::int64_t>();
  EXPECT_EQ(routed, 400);
  EXPECT_EQ(cluster["replicas"].size(), 11u);  // 8 stable, 2 beta, 1 canary
  EXPECT_EQ(doc["records_written"], 400);
  // A sample keeps one request in a hundred; none writes no records file.
  ASSERT_EQ(canary("sample", "sample"), 0) << log_;
  const int sampled = lines(dir_ / "sample" / "r.records.jsonl");
  EXPECT_GT(sampled, 0);
  EXPECT_LT(sampled, 20);
  ASSERT_EQ(canary("none", "none"), 0) << log_;
  EXPECT_FALSE(fs::exists(dir_ / "none" / "r.records.jsonl"));
  const auto none = json::parse(read_file((dir_ / "none" / "r.json").string()));
  EXPECT_EQ(none["completed"], 400);
  EXPECT_DOUBLE_EQ(none["mean_ttft_ms"].get<double>(), doc["mean_ttft_ms"].get<double>());
}

TEST_F(SimulateCluster, ConversationsTakeTheirTurnsInTheCluster) {
  ASSERT_EQ(llmbench({"simulate", "--cluster", kClusters + "deepseek-r1-h200-x4.json",
                      "--dataset-name", "mtbench", "--multi-turn", "--num-prompts", "10",
                      "--request-rate", "5", "--think-time-ms", "200", "--records", "all",
                      "--result-dir", (dir_ / "mt").string(), "--result-filename", "r.json"}),
            0)
      << log_;
  std::istringstream in(read_file((dir_ / "mt" / "r.records.jsonl").string()));
  int second_turns = 0;
  int records = 0;
  for (std::string line; std::getline(in, line);) {
    const auto r = json::parse(line);
    ++records;
    if (r["turn"] == 2)
      ++second_turns;
  }
  EXPECT_EQ(records, 20);  // MT-Bench questions have two turns
  EXPECT_EQ(second_turns, 10);
}

TEST_F(SimulateCluster, SweepsClusterPoints) {
  ASSERT_EQ(llmbench({"sweep", "--simulate", "--cluster", kClusters + "deepseek-r1-h200-x4.json",
                      "--sweep", "request-rate=4,8", "--dataset-name", "random",
                      "--random-input-len", "128", "--random-output-len", "16", "--num-prompts",
                      "40", "--records", "none", "--result-dir", (dir_ / "sweep").string()}),
            0)
      << log_;
  int results = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "sweep"))
    results +=
        e.path().extension() == ".json" && e.path().string().find(".sweep.") == std::string::npos
            ? 1
            : 0;
  EXPECT_EQ(results, 2);
}

TEST_F(SimulateCluster, FlagsThatDoNotApplyAreErrors) {
  EXPECT_EQ(llmbench({"simulate", "--cluster", kClusters + "canary-5pct.json", "--tp", "4"}), 2);
  EXPECT_NE(log_.find("--tp"), std::string::npos) << log_;
  EXPECT_EQ(
      llmbench({"simulate", "--cluster", kClusters + "canary-5pct.json", "--records", "most"}), 2);
  EXPECT_NE(log_.find("--records"), std::string::npos) << log_;
  EXPECT_EQ(llmbench({"simulate", "--records", "all", "--num-prompts", "4"}), 2);
  EXPECT_NE(log_.find("--cluster"), std::string::npos) << log_;
  const fs::path bad = dir_ / "bad.json";
  {
    std::ofstream out(bad);
    out << R"({"groups": [{"engine": {"tp": 8}, "colour": "red"}]})";
  }
  EXPECT_EQ(llmbench({"simulate", "--cluster", bad.string()}), 2);
  EXPECT_NE(log_.find("groups[0].colour"), std::string::npos) << log_;
}

}  // namespace
}  // namespace llmbench::e2e
