// End to end: the other loads spread over MPI ranks (docs/distributed.md) against `llmbench
// serve --timing fixed`: a trace replay has the single process's planned arrival times, every
// conversation's turns stay on one rank, and `sweep` runs each point as one spread benchmark.

#include "llmbench/metrics/record_file.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "mpi_support.hpp"
#include "process.hpp"
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class MpiSpreadTest : public MpiTest {
 protected:
  MpiSpreadTest() : MpiTest("mpi-spread") {}

  /// `llmbench run` against the server with `args`, writing `<dir>/<name>/run.json`.
  std::vector<std::string> run_args(const std::string& name, std::vector<std::string> args) {
    std::vector<std::string> argv{binary(), "run", "--base-url", server_->base_url()};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::vector<std::string> outputs{
        "--save-result",     "--result-dir", (dir_ / name).string(),
        "--result-filename", "run.json",     "--quiet"};
    argv.insert(argv.end(), outputs.begin(), outputs.end());
    return argv;
  }

  std::vector<metrics::RequestRecord> records(const std::string& name) const {
    return metrics::read_record_file((dir_ / name / "run.records.jsonl").string()).records;
  }
};

TEST_F(MpiSpreadTest, ATraceReplayKeepsTheSingleProcessPlannedTimes) {
  // 24 rows, 20 to 30 ms apart (uneven, as a trace is).
  const fs::path trace = dir_ / "trace.jsonl";
  std::vector<std::int64_t> stamps_ms;
  {
    std::ofstream out(trace);
    std::int64_t t = 0;
    for (int i = 0; i < 24; ++i) {
      stamps_ms.push_back(t);
      out << fmt::format(R"({{"timestamp": {}, "input_length": 32, "output_length": 8, )"
                         R"("hash_ids": [{}]}})",
                         t, i)
          << "\n";
      t += 20 + (i * 7) % 11;
    }
  }
  const std::vector<std::string> args{"--dataset-name", "trace", "--dataset-path", trace.string()};
  ASSERT_EQ(launch(run_args("single", args), "single.log"), 0) << log("single.log");
  ASSERT_EQ(launch(mpirun(run_args("spread", args)), "spread.log"), 0) << log("spread.log");
  const auto single = planned_times(records("single"));
  const auto spread_records = records("spread");
  const auto spread = planned_times(spread_records);
  ASSERT_EQ(single.size(), stamps_ms.size());
  ASSERT_EQ(spread.size(), stamps_ms.size());
  std::size_t i = 0;
  for (const auto& [id, t] : single) {
    // The trace's own times, in one process and merged from three.
    EXPECT_LE(std::abs(t - stamps_ms[i++] * 1'000'000), 1000) << "request " << id;
    ASSERT_TRUE(spread.count(id)) << "request " << id;
    EXPECT_LE(std::abs(spread.at(id) - t), 1000) << "request " << id;
  }
  // Dealt as any plan: row i on rank i mod 3.
  std::map<std::int64_t, int> per_rank;
  for (const auto& r : spread_records) {
    EXPECT_EQ(r.id % 3, r.rank) << "request " << r.id;
    ++per_rank[r.rank];
  }
  EXPECT_EQ(per_rank, (std::map<std::int64_t, int>{{0, 8}, {1, 8}, {2, 8}}));
  EXPECT_EQ(results("spread").at("completed"), 24);
}

TEST_F(MpiSpreadTest, EveryConversationStaysOnOneRank) {
  // Nine conversations of three turns each (ShareGPT form), started at 30 a second.
  json all = json::array();
  for (int c = 0; c < 9; ++c) {
    json turns = json::array();
    for (int t = 1; t <= 3; ++t) {
      turns.push_back({{"from", "human"}, {"value", fmt::format("conversation {} turn {}", c, t)}});
      turns.push_back({{"from", "gpt"}, {"value", "an answer of a few words"}});
    }
    all.push_back({{"id", fmt::format("c{}", c)}, {"conversations", turns}});
  }
  const fs::path data = dir_ / "conversations.json";
  std::ofstream(data) << all.dump();
  ASSERT_EQ(
      launch(mpirun(run_args("spread",
                             {"--backend", "openai-chat", "--dataset-name", "sharegpt",
                              "--dataset-path", data.string(), "--multi-turn", "--num-prompts", "9",
                              "--think-time-ms", "10", "--request-rate", "30", "--seed", "4"})),
             "spread.log"),
      0)
      << log("spread.log");
  const auto rs = records("spread");
  ASSERT_EQ(rs.size(), 27U);
  std::map<std::int64_t, std::set<std::int64_t>> ranks_of;
  std::map<std::int64_t, std::set<std::int64_t>> turns_of;
  for (const auto& r : rs) {
    ASSERT_GE(r.conversation_id, 0);
    ranks_of[r.conversation_id].insert(r.rank);
    turns_of[r.conversation_id].insert(r.turn);
    EXPECT_TRUE(r.ok()) << "request " << r.id;
  }
  ASSERT_EQ(ranks_of.size(), 9U);
  std::map<std::int64_t, int> conversations_per_rank;
  for (const auto& [conversation, ranks] : ranks_of) {
    ASSERT_EQ(ranks.size(), 1U) << "conversation " << conversation << " on several ranks";
    ++conversations_per_rank[*ranks.begin()];
    // Its id is the plan index of its first turn, which is dealt as any request is.
    EXPECT_EQ(*ranks.begin(), conversation % 3) << "conversation " << conversation;
    EXPECT_EQ(turns_of[conversation], (std::set<std::int64_t>{1, 2, 3}));
  }
  // Conversation starts are dealt as requests are: three to each rank.
  EXPECT_EQ(conversations_per_rank, (std::map<std::int64_t, int>{{0, 3}, {1, 3}, {2, 3}}));
  const json out = results("spread");
  EXPECT_EQ(out.at("completed"), 27);
  EXPECT_EQ(out.at("distributed").at("ranks"), 3);
}

TEST_F(MpiSpreadTest, ASweepRunsEachPointAsOneSpreadBenchmark) {
  const fs::path out = dir_ / "sweep";
  ASSERT_EQ(launch(mpirun({binary(),
                           "sweep",
                           "--base-url",
                           server_->base_url(),
                           "--dataset-name",
                           "random",
                           "--random-input-len",
                           "32",
                           "--random-output-len",
                           "8",
                           "--num-prompts",
                           "16",
                           "--seed",
                           "5",
                           "--sweep",
                           "max-concurrency=2,4",
                           "--result-dir",
                           out.string(),
                           "--result-filename",
                           "sw.json"},
                          2),
                   "sweep.log"),
            0)
      << log("sweep.log");
  // Rank 0 alone wrote the sweep: one sweep file.
  std::vector<std::string> sweeps;
  for (const auto& e : fs::directory_iterator(out))
    if (e.path().string().ends_with(".sweep.json"))
      sweeps.push_back(e.path().filename().string());
  ASSERT_EQ(sweeps, std::vector<std::string>{"sw.sweep.json"});
  const json sweep = json::parse(read_file((out / "sw.sweep.json").string()));
  ASSERT_EQ(sweep.at("points").size(), 2U);
  for (const auto& point : sweep.at("points")) {
    SCOPED_TRACE(point.dump());
    EXPECT_EQ(point.at("status"), "ok");
    // Each point's results: both ranks' requests merged, the cap split between them.
    const json results =
        json::parse(read_file((out / point.at("results_file").get<std::string>()).string()));
    EXPECT_EQ(results.at("completed"), 16);
    const auto& dist = results.at("distributed");
    EXPECT_EQ(dist.at("ranks"), 2);
    for (const auto& rank : dist.at("per_rank")) EXPECT_EQ(rank.at("requests"), 8);
  }
}

}  // namespace
}  // namespace llmbench::e2e
