// Data safety of the per-request JSONL, end to end: a `kill -9` of `run` loses
// only the records finished in the last flush interval (100 ms promised, 50 ms in the code) and
// tears at most the last line; a records file that cannot be written (a full disk: /dev/full)
// makes the run exit non-zero saying how many records were lost, with the summary still
// complete; SIGHUP stops a run as SIGTERM does.

#include "llmbench/metrics/record_file.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::size_t count_lines(const fs::path& path) {
  const std::string text = read_file(path.string());
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

class RecordsSafetyTest : public ScratchDirTest {
 protected:
  RecordsSafetyTest() : ScratchDirTest("records") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    fs::create_directories(dir_ / "results");
  }

  /// `serve --timing fixed` with TTFT 20 ms, ITL 5 ms and an emission log; returns its port.
  int start_server() {
    server_ = std::make_unique<ServeProcess>(
        dir_, std::vector<std::string>{"--timing", "fixed", "--ttft-ms", "20", "--itl-ms", "5",
                                       "--max-num-seqs", "64", "--emission-log",
                                       (dir_ / "emission.jsonl").string()});
    EXPECT_GT(server_->port(), 0) << server_->log();
    return server_->port();
  }

  /// `run` against `port`: `prompts` requests of 16 output tokens at concurrency 4.
  std::unique_ptr<Process> start_client(int port, int prompts) {
    return std::make_unique<Process>(
        std::vector<std::string>{binary(),
                                 "run",
                                 "--base-url",
                                 fmt::format("http://127.0.0.1:{}", port),
                                 "--backend",
                                 "vllm",
                                 "--num-prompts",
                                 std::to_string(prompts),
                                 "--output-len",
                                 "16",
                                 "--max-concurrency",
                                 "4",
                                 "--seed",
                                 "5",
                                 "--save-result",
                                 "--result-dir",
                                 (dir_ / "results").string(),
                                 "--result-filename",
                                 "run.json",
                                 "--quiet"},
        (dir_ / "client.log").string());
  }

  std::unique_ptr<ServeProcess> server_;
};

TEST_F(RecordsSafetyTest, KillNineKeepsEveryRecordFinishedBeforeTheLastFlushInterval) {
  const int port = start_server();
  ASSERT_GT(port, 0);
  auto client = start_client(port, 5000);  // ~100 ms per request at 4 in flight: ~2 min planned
  const fs::path records = dir_ / "results" / "run.records.jsonl";
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (count_lines(records) < 40 && std::chrono::steady_clock::now() < give_up) {
    ASSERT_TRUE(client->running()) << read_file((dir_ / "client.log").string());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(count_lines(records), 40u) << read_file((dir_ / "client.log").string());
  std::this_thread::sleep_for(std::chrono::milliseconds(333));  // kill between two flushes
  const std::int64_t killed_ns = steady_ns();
  client->signal(SIGKILL);
  EXPECT_EQ(client->wait(std::chrono::seconds(10)), 128 + SIGKILL);
  server_->process().signal(SIGTERM);
  ASSERT_EQ(server_->process().wait(std::chrono::seconds(10)), 0) << server_->log();

  // No torn line except possibly the last (parse_record_file throws on any other).
  const metrics::RecordFile file = metrics::parse_record_file(read_file(records.string()), "jsonl");
  std::set<std::string> written;
  for (const auto& r : file.records) written.insert(fmt::format("llmbench-{}", r.id));
  // Every request the server finished (all 16 tokens sent) more than the promised 100 ms before
  // the kill is in the file, plus 100 ms of slack for a loaded machine's scheduler.
  constexpr std::int64_t kPromiseNs = 100'000'000;
  constexpr std::int64_t kSlackNs = 100'000'000;
  std::istringstream log(read_file((dir_ / "emission.jsonl").string()));
  std::size_t finished_early = 0;
  for (std::string line; std::getline(log, line);) {
    if (line.empty())
      continue;
    const auto entry = json::parse(line);
    const auto& chunks = entry.at("chunks");
    std::int64_t tokens = 0;
    for (const auto& c : chunks) tokens += c.at(1).get<std::int64_t>();
    if (chunks.empty() || tokens < 16)
      continue;  // cut off by the kill
    const auto last_ns = chunks.back().at(0).get<std::int64_t>();
    if (last_ns < killed_ns - kPromiseNs - kSlackNs) {
      ++finished_early;
      const auto id = entry.at("request_id").get<std::string>();
      EXPECT_TRUE(written.count(id) == 1)
          << id << " finished " << (killed_ns - last_ns) / 1'000'000 << " ms before the kill";
    }
  }
  EXPECT_GE(finished_early, 40u);
  EXPECT_LE(written.size(), finished_early + 40);  // nothing invented: at most the in-flight tail
}

TEST_F(RecordsSafetyTest, AnUnwritableRecordsFileFailsTheRunAndSaysHowManyWereLost) {
  if (!fs::exists("/dev/full")) {
    GTEST_SKIP() << "no /dev/full";
  }
  const int port = start_server();
  ASSERT_GT(port, 0);
  // Every write to the records file fails with ENOSPC, as on a full disk.
  fs::create_symlink("/dev/full", dir_ / "results" / "run.records.jsonl");
  auto client = start_client(port, 12);
  const int rc = client->wait(std::chrono::seconds(60));
  const std::string log = read_file((dir_ / "client.log").string());
  EXPECT_EQ(rc, 1) << log;
  EXPECT_NE(log.find("No space left on device"), std::string::npos) << log;
  EXPECT_NE(log.find("12 of 12 per-request records were lost"), std::string::npos) << log;
  EXPECT_EQ(log.find("per-request records written"), std::string::npos) << log;
  // The summary is whole: it came from memory.
  const auto results = json::parse(read_file((dir_ / "results" / "run.json").string()));
  EXPECT_EQ(results.at("completed").get<int>(), 12);
}

TEST_F(RecordsSafetyTest, SighupStopsTheRunLikeSigterm) {
  const int port = start_server();
  ASSERT_GT(port, 0);
  auto client = start_client(port, 5000);
  const fs::path records = dir_ / "results" / "run.records.jsonl";
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (count_lines(records) < 8 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  client->signal(SIGHUP);
  EXPECT_EQ(client->wait(std::chrono::seconds(30)), 1) << read_file((dir_ / "client.log").string());
  const auto results = json::parse(read_file((dir_ / "results" / "run.json").string()));
  EXPECT_TRUE(results.at("interrupted").get<bool>());
  EXPECT_GE(results.at("completed").get<int>(), 8);
  EXPECT_EQ(metrics::read_record_file(records.string()).records.size(),
            results.at("total_requests").get<std::size_t>());
}

TEST_F(RecordsSafetyTest, DurationBoundsTheWholeRunNotOnlyTheSending) {
  // Each request takes 60 s (100 tokens, 600 ms apart); `--duration 1` used to stop
  // sending at 1 s and then wait for them. Now they get the stated 10 s grace and are cancelled.
  server_ = std::make_unique<ServeProcess>(
      dir_, std::vector<std::string>{"--timing", "fixed", "--ttft-ms", "20", "--itl-ms", "600"});
  const int port = server_->port();
  ASSERT_GT(port, 0) << server_->log();
  const auto start = std::chrono::steady_clock::now();
  Process client(
      {binary(), "run", "--base-url", fmt::format("http://127.0.0.1:{}", port), "--backend", "vllm",
       "--duration", "1", "--output-len", "100", "--max-concurrency", "2", "--save-result",
       "--result-dir", (dir_ / "results").string(), "--result-filename", "run.json", "--quiet"},
      (dir_ / "client.log").string());
  const int rc = client.wait(std::chrono::seconds(50));
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string log = read_file((dir_ / "client.log").string());
  ASSERT_NE(rc, -1) << "the run outlived its duration and grace\n" << log;
  EXPECT_EQ(rc, 1) << log;         // a run that had to cancel requests did not finish its work
  EXPECT_LT(took_s, 40.0) << log;  // 1 s + 10 s grace, far below the requests' 60 s
  EXPECT_NE(log.find("were cancelled"), std::string::npos) << log;
  const auto results = json::parse(read_file((dir_ / "results" / "run.json").string()));
  // Cancelled requests are counted apart from failures (they were the client's doing).
  EXPECT_EQ(results.at("cancelled").get<int>(), 2);
  EXPECT_EQ(results.at("failed").get<int>(), 0);
  EXPECT_EQ(results.at("completed").get<int>(), 0);
}

}  // namespace
}  // namespace llmbench::e2e
