// End to end: one `llmbench run` spread over three MPI ranks (`mpirun --oversubscribe -np 3`)
// against `llmbench serve --timing fixed`, compared with a single process of the same seed and
// plan; and a rank killed mid-run (docs/distributed.md).

#include "llmbench/metrics/record_file.hpp"
#include "llmbench/metrics/summary.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kPrompts = 60;

class MpiRunTest : public ScratchDirTest {
 protected:
  MpiRunTest() : ScratchDirTest("mpi") {}

  void SetUp() override {
    ScratchDirTest::SetUp();
    // CI runs as root; Open MPI refuses root without both (its documented override). A tag in
    // the ranks' environment finds them in /proc (the killed-rank test).
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("LLMBENCH_MPI_TEST_TAG", dir_.string().c_str(), 1);
    server_ = std::make_unique<ServeProcess>(
        dir_, std::vector<std::string>{"--timing", "fixed", "--ttft-ms", "20", "--itl-ms", "2",
                                       "--max-num-seqs", "64"});
    ASSERT_GT(server_->port(), 0) << server_->log();
  }

  /// `llmbench run` arguments of the plan both runs share, writing `<dir>/<name>/run.json`.
  std::vector<std::string> run_args(const std::string& name, int prompts, double rate) {
    return {binary(),
            "run",
            "--base-url",
            server_->base_url(),
            "--num-prompts",
            std::to_string(prompts),
            "--request-rate",
            fmt::format("{}", rate),
            "--dataset-name",
            "random",
            "--random-input-len",
            "32",
            "--random-output-len",
            "16",
            "--seed",
            "11",
            "--save-result",
            "--result-dir",
            (dir_ / name).string(),
            "--result-filename",
            "run.json",
            "--quiet"};
  }

  /// `mpirun --oversubscribe -np 3` in front of `args` (TCP over the loopback between the ranks:
  /// no shared-memory segment to size in a container, no other interface tried).
  static std::vector<std::string> mpirun(const std::vector<std::string>& args) {
    std::vector<std::string> argv{LLMBENCH_MPIEXEC,
                                  "--oversubscribe",
                                  "-np",
                                  "3",
                                  "--mca",
                                  "btl",
                                  "self,tcp",
                                  "--mca",
                                  "btl_tcp_if_include",
                                  "lo",
                                  "--mca",
                                  "oob_tcp_if_include",
                                  "lo"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  int launch(const std::vector<std::string>& argv, const std::string& log) {
    Process p(argv, (dir_ / log).string());
    return p.wait(std::chrono::seconds(60));
  }

  json results(const std::string& name) {
    return json::parse(read_file((dir_ / name / "run.json").string()));
  }

  std::unique_ptr<ServeProcess> server_;
};

/// Planned arrival times of the measured requests by id, relative to the first.
std::map<std::int64_t, std::int64_t> planned_times(const std::vector<metrics::RequestRecord>& rs) {
  std::map<std::int64_t, std::int64_t> out;
  for (const auto& r : rs)
    if (!r.warmup)
      out[r.id] = r.scheduled_ns;
  const std::int64_t first = out.empty() ? 0 : out.begin()->second;
  for (auto& [id, t] : out) t -= first;
  return out;
}

TEST_F(MpiRunTest, ThreeRanksMergeIntoTheSingleProcessRun) {
  ASSERT_EQ(launch(run_args("single", kPrompts, 40), "single.log"), 0)
      << read_file((dir_ / "single.log").string());
  ASSERT_EQ(launch(mpirun(run_args("spread", kPrompts, 40)), "spread.log"), 0)
      << read_file((dir_ / "spread.log").string());
  const json single = results("single");
  const json spread = results("spread");
  const auto single_records =
      metrics::read_record_file((dir_ / "single/run.records.jsonl").string());
  const auto spread_records =
      metrics::read_record_file((dir_ / "spread/run.records.jsonl").string());

  // One results file: the same requests, planned times and tokens as one process.
  EXPECT_EQ(spread.at("completed").get<int>(), kPrompts);
  EXPECT_EQ(spread.at("completed"), single.at("completed"));
  EXPECT_EQ(spread.at("total_input_tokens"), single.at("total_input_tokens"));
  EXPECT_EQ(spread.at("total_output_tokens"), single.at("total_output_tokens"));
  ASSERT_EQ(spread_records.records.size(), single_records.records.size());
  const auto planned_single = planned_times(single_records.records);
  const auto planned_spread = planned_times(spread_records.records);
  ASSERT_EQ(planned_spread.size(), static_cast<std::size_t>(kPrompts));
  for (const auto& [id, t] : planned_single) {
    ASSERT_TRUE(planned_spread.count(id)) << "request " << id;
    EXPECT_LE(std::abs(planned_spread.at(id) - t), 1000) << "request " << id;
  }

  // Every record carries its rank: request i went to rank i mod 3, 20 each (the quota).
  std::map<std::int64_t, int> per_rank;
  for (const auto& r : spread_records.records) {
    ASSERT_GE(r.rank, 0);
    ++per_rank[r.rank];
    EXPECT_EQ(r.id % 3, r.rank) << "request " << r.id;
  }
  const auto& dist = spread.at("distributed");
  EXPECT_EQ(dist.at("ranks").get<int>(), 3);
  ASSERT_EQ(dist.at("per_rank").size(), 3U);
  for (const auto& rank : dist.at("per_rank")) {
    const int r = rank.at("rank").get<int>();
    EXPECT_EQ(rank.at("quota").get<int>(), kPrompts / 3);
    EXPECT_LE(std::abs(rank.at("requests").get<int>() - rank.at("quota").get<int>()), 1);
    EXPECT_EQ(rank.at("requests").get<int>(), per_rank[r]);
    EXPECT_EQ(rank.at("failed").get<int>(), 0);
    // The offsets' bound is reported: zero for rank 0, a positive half round trip otherwise.
    if (r == 0) {
      EXPECT_EQ(rank.at("clock_bound_ns").get<std::int64_t>(), 0);
    } else {
      EXPECT_GT(rank.at("clock_bound_ns").get<std::int64_t>(), 0);
      EXPECT_LT(rank.at("clock_error_bound_ns").get<std::int64_t>(), 1'000'000'000);
    }
  }
  EXPECT_GE(dist.at("clock_error_bound_ns").get<std::int64_t>(), 0);

  // The percentiles are the merged records' own (not an average of the ranks').
  metrics::SummaryOptions options;
  const auto s = metrics::summarize(spread_records.records, options);
  EXPECT_DOUBLE_EQ(spread.at("median_ttft_ms").get<double>(), s.ttft_ms.median);
  EXPECT_DOUBLE_EQ(spread.at("mean_e2el_ms").get<double>(), s.e2el_ms.mean);
  for (const auto& [q, v] : s.ttft_ms.percentiles)
    EXPECT_DOUBLE_EQ(spread.at(fmt::format("p{:g}_ttft_ms", q)).get<double>(), v);
  // The fixed-timing server answers alike: TTFT within a few ms of the single process's
  // (a loose bound for a shared CI machine; both near 20 ms).
  EXPECT_NEAR(spread.at("median_ttft_ms").get<double>(), single.at("median_ttft_ms").get<double>(),
              15.0);
}

/// The pid of the rank `rank` of this test's job (found by its environment in /proc); -1 if
/// none yet.
pid_t find_rank(const std::string& tag, int rank) {
  const std::string want_tag = "LLMBENCH_MPI_TEST_TAG=" + tag;
  const std::string want_rank = fmt::format("OMPI_COMM_WORLD_RANK={}", rank);
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit))
      continue;
    const std::string env = read_file((entry.path() / "environ").string());
    bool tag_found = false;
    bool rank_found = false;
    for (std::size_t at = 0; at < env.size();) {
      const auto end = env.find('\0', at);
      const std::string var = env.substr(at, end - at);
      tag_found = tag_found || var == want_tag;
      rank_found = rank_found || var == want_rank;
      if (end == std::string::npos)
        break;
      at = end + 1;
    }
    const std::string cmdline = read_file((entry.path() / "cmdline").string());
    if (tag_found && rank_found && cmdline.find("llmbench") != std::string::npos)
      return static_cast<pid_t>(std::stoi(name));
  }
  return -1;
}

TEST_F(MpiRunTest, AKilledRankEndsTheJobAndTheOthersKeepTheirRecords) {
  Process job(mpirun(run_args("killed", 200, 20)), (dir_ / "killed.log").string());
  const auto rank_file = [&](int r) {
    return dir_ / "killed" / fmt::format("run.rank{}.records.jsonl", r);
  };
  // Wait until every rank has finished some requests, then kill rank 1.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  pid_t victim = -1;
  while (std::chrono::steady_clock::now() < deadline) {
    victim = find_rank(dir_.string(), 1);
    bool all = victim > 0;
    for (int r = 0; r < 3 && all; ++r)
      all = fs::exists(rank_file(r)) && fs::file_size(rank_file(r)) > 2000;
    if (all)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(victim, 0) << read_file((dir_ / "killed.log").string());
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  const int code = job.wait(std::chrono::seconds(30));
  const std::string log = read_file((dir_ / "killed.log").string());
  EXPECT_NE(code, 0) << log;
  EXPECT_NE(code, -1) << "mpirun did not end after a rank died\n" << log;
  EXPECT_NE(log.find("rank 1"), std::string::npos) << log;
  // No merged results: the job ended. Each surviving rank's streamed records are whole.
  EXPECT_FALSE(fs::exists(dir_ / "killed" / "run.json"));
  for (const int r : {0, 2}) {
    const auto file = metrics::read_record_file(rank_file(r).string());
    EXPECT_GE(file.records.size(), 3U) << "rank " << r;
    for (const auto& rec : file.records) {
      EXPECT_EQ(rec.rank, r);
      EXPECT_EQ(rec.id % 3, r);
    }
    const auto completed = std::count_if(file.records.begin(), file.records.end(),
                                         [](const auto& rec) { return rec.ok(); });
    EXPECT_GE(completed, 3) << "rank " << r;
  }
}

}  // namespace
}  // namespace llmbench::e2e
