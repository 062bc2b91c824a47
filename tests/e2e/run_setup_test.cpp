// `run`'s setup failures: a target that cannot be used ends
// the run once, before any request, with the reason, instead of a warning and then the same
// failure in every worker (an unreadable --ca-cert) or a misleading "--model: not given".

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <chrono>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;

std::string binary() {
  return std::string(LLMBENCH_TEST_BINARY_DIR) + "/llmbench";
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// A loopback port that nothing listens on (bound, then closed).
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

class RunSetup : public ScratchDirTest {
 protected:
  RunSetup() : ScratchDirTest("setup") {}

  /// Runs `llmbench run` (or `command`) with `args` (and a results folder); returns the exit
  /// code.
  int run(const std::vector<std::string>& args, const std::string& command = "run") {
    fs::create_directories(dir_ / "out");
    std::vector<std::string> argv{binary(), command,        "--num-prompts",
                                  "4",      "--result-dir", (dir_ / "out").string(),
                                  "--quiet"};
    argv.insert(argv.end(), args.begin(), args.end());
    fs::remove(dir_ / "run.log");  // the log of this command alone
    Process client(argv, (dir_ / "run.log").string());
    const int code = client.wait(std::chrono::seconds(60));
    console_ = read_file((dir_ / "run.log").string());
    return code;
  }

  /// Files the run left in its results folder.
  int outputs() const {
    int n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_ / "out")) ++n;
    return n;
  }

  std::string console_;
};

TEST_F(RunSetup, CaCertWithoutCertificatesFailsOnceBeforeAnyRequest) {
  const fs::path bad = dir_ / "bad.pem";
  { std::ofstream(bad) << "not a certificate\n"; }
  EXPECT_EQ(run({"--base-url", "https://127.0.0.1:9", "--model", "m", "--client-threads", "4",
                 "--ca-cert", bad.string()}),
            2)
      << console_;
  EXPECT_EQ(count(console_, "--ca-cert '" + bad.string() + "'"), 1) << console_;
  EXPECT_EQ(count(console_, "cannot load CA certificates"), 1) << console_;
  EXPECT_EQ(outputs(), 0) << console_;
}

// A sweep checks its target's TLS options before its first point, as `run` does: the same
// message, once, exit 2, at once (not after the ready-check timeout of every point).
TEST_F(RunSetup, SweepWithABadCaCertFailsAtOnceWithRunsMessage) {
  const fs::path bad = dir_ / "bad.pem";
  { std::ofstream(bad) << "not a certificate\n"; }
  const std::vector<std::string> args{
      "--base-url", "https://127.0.0.1:9",       "--model", "m", "--ca-cert",
      bad.string(), "--ready-check-timeout-sec", "60"};
  ASSERT_EQ(run(args), 2) << console_;
  const std::string from_run = console_;
  std::vector<std::string> sweep_args = args;
  sweep_args.insert(sweep_args.end(), {"--sweep", "max-concurrency=1,2"});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run(sweep_args, "sweep"), 2) << console_;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(console_, from_run);  // "llmbench: error: --ca-cert '...': cannot load ..."
  EXPECT_EQ(count(console_, "cannot load CA certificates"), 1) << console_;
  EXPECT_EQ(outputs(), 0) << console_;
}

TEST_F(RunSetup, TargetThatDoesNotAnswerStopsTheRunWithTheReason) {
  const int port = closed_port();
  ASSERT_GT(port, 0);
  EXPECT_EQ(run({"--base-url", fmt::format("http://127.0.0.1:{}", port), "--model", "m"}), 2)
      << console_;
  EXPECT_EQ(count(console_, "--base-url: cannot reach the server: GET /v1/models failed"), 1)
      << console_;
  EXPECT_EQ(count(console_, "--model"), 0) << "not blamed on --model\n" << console_;
  EXPECT_EQ(outputs(), 0) << console_;
}

/// `connections_opened` of a run against the built-in server with `load` flags, 40 short
/// requests on `threads` client threads.
std::uint64_t connections_opened(const fs::path& dir, const std::string& name,
                                 const std::vector<std::string>& load, int threads = 1) {
  std::vector<std::string> argv{binary(),
                                "run",
                                "--num-prompts",
                                "40",
                                "--dataset-name",
                                "random",
                                "--random-input-len",
                                "16",
                                "--random-output-len",
                                "4",
                                "--server-timing",
                                "fixed",
                                "--server-ttft-ms",
                                "1",
                                "--server-itl-ms",
                                "1",
                                "--client-threads",
                                std::to_string(threads),
                                "--quiet",
                                "--save-result",
                                "--result-dir",
                                (dir / "out").string(),
                                "--result-filename",
                                name + ".json"};
  argv.insert(argv.end(), load.begin(), load.end());
  Process client(argv, (dir / (name + ".log")).string());
  EXPECT_EQ(client.wait(std::chrono::seconds(60)), 0)
      << read_file((dir / (name + ".log")).string());
  const auto doc = nlohmann::json::parse(read_file((dir / "out" / (name + ".json")).string()));
  EXPECT_EQ(doc.at("completed"), 40);
  return doc.at("connections_opened").get<std::uint64_t>();
}

TEST_F(RunSetup, ConnectionsAreOpenedAheadOnlyForAClosedLoop) {
  // A closed loop needs its cap's connections: they are opened before the run and reused.
  EXPECT_EQ(connections_opened(dir_, "closed", {"--max-concurrency", "8"}), 8U);
  // An open loop's cap bounds what is in flight, not what is needed: 100 req/s of 5 ms requests
  // keep one or two in flight, so a handful of connections, not the cap's 32 (before the fix,
  // min(cap, prompts) were opened ahead, as an open-file cap of 19,872 was at 2,000 req/s).
  EXPECT_LT(connections_opened(dir_, "open", {"--request-rate", "100", "--max-concurrency", "32"}),
            16U);
}

TEST_F(RunSetup, ManyClientThreadsOpenOnlyTheCapsConnectionsAhead) {
  // The cap's connections in all, not one per client thread: idle extras hold the threads of a
  // thread-per-connection server (llama-server's HTTP pool) and make real requests wait. The
  // built-in server keeps connections alive, so every connection opened is one opened ahead.
  EXPECT_EQ(connections_opened(dir_, "threads8-c2", {"--max-concurrency", "2"}, 8), 2U);
  EXPECT_EQ(connections_opened(dir_, "threads4-c6", {"--max-concurrency", "6"}, 4), 6U);
}

}  // namespace
}  // namespace llmbench::e2e
