// The server a sweep starts per setting (app/server_process.hpp): the command template's
// splitting and placeholder checks, and the process itself with /bin/sh stand-ins (one that exits
// at once, one that never answers, one whose child would outlive a plain kill of the leader), and
// the in-process simulated server as the thing that answers /health and /v1/models.

#include "llmbench/app/server_process.hpp"

#include "llmbench/app/stop_signals.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/server/server.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace llmbench::app {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Exception& e) {
    return std::string(e.what()) + " @" + std::to_string(e.error().offset);
  }
  return "no error";
}

TEST(CommandTemplateTest, SplitsLikeAShellAndFillsValuesAfterTheSplit) {
  const auto t = parse_command_template(
      R"(llama-server -np {max_num_seqs} --alias 'my model' "--x={kv_dtype}" a\ b {{lit}})",
      "--serve-cmd");
  EXPECT_EQ(placeholder_names(t), (std::vector<std::string>{"max_num_seqs", "kv_dtype"}));
  const auto argv = fill_command(t, {{"max_num_seqs", "4"}, {"kv_dtype", "q8 0"}});
  EXPECT_EQ(argv, (std::vector<std::string>{"llama-server", "-np", "4", "--alias", "my model",
                                            "--x=q8 0", "a b", "{lit}"}));
  EXPECT_EQ(command_line(argv), "llama-server -np 4 --alias 'my model' '--x=q8 0' 'a b' '{lit}'");
  EXPECT_EQ(fill_command(parse_command_template("a '' b", "f"), {}),
            (std::vector<std::string>{"a", "", "b"}));
}

TEST(CommandTemplateTest, BadTemplatesNameTheProblemAndItsOffset) {
  EXPECT_EQ(error_of([] { parse_command_template("  ", "--serve-cmd"); }),
            "--serve-cmd: the command is empty (at byte 0) @0");
  EXPECT_NE(error_of([] {
              parse_command_template("a 'b", "--serve-cmd");
            }).find("unclosed ' quote (at byte 2) @2"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_command_template("a {b c}", "--serve-cmd"); }).find("@2"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { parse_command_template("a -np {x", "--serve-cmd"); }).find("unclosed '{' "),
      std::string::npos);
  EXPECT_NE(error_of([] { parse_command_template("a }", "--serve-cmd"); }).find("@2"),
            std::string::npos);
  const auto t =
      parse_command_template("srv --port {port} -np {max_num_seqs} -c {ctx}", "--serve-cmd");
  const std::string e = error_of([&] {
    check_placeholders(t, {"port", "host", "max_num_seqs"}, "--serve-cmd");
  });
  EXPECT_NE(e.find("unknown placeholder {ctx} in 'srv"), std::string::npos) << e;
  EXPECT_NE(e.find("known: port, host, max_num_seqs"), std::string::npos) << e;
  EXPECT_NE(e.find("(at byte 40) @40"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] {
              check_placeholders(t, {"port", "max_num_seqs", "ctx"}, "f");
            }),
            "no error");
}

class ServerProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("llmbench-srvproc-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure())
      fs::remove_all(dir_);
  }
  ServerLaunch launch(std::vector<std::string> argv, std::uint16_t port = 1) const {
    return ServerLaunch{
        .argv = std::move(argv),
        .log_path = dir_ / "logs" / "server.log",
        .url = http::Url{.tls = false, .host = "127.0.0.1", .port = port, .path_prefix = {}},
        .ready_timeout = milliseconds(1500),
        .grace = milliseconds(2000),
        .poll = milliseconds(50)};
  }
  /// The pid a stand-in wrote to `name` (0 when none).
  pid_t pid_in(const std::string& name) const {
    std::ifstream in(dir_ / name);
    pid_t pid = 0;
    in >> pid;
    return pid;
  }
  /// Running (a zombie waiting for init to reap it is not).
  static bool alive(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (pid <= 0 || !std::getline(in, stat))
      return false;
    const char state = stat.at(stat.rfind(')') + 2);
    return state != 'Z' && state != 'X';
  }
  /// Whether `pid` is gone within two seconds: a signal to a group reaches a member that is not
  /// the waited-for leader asynchronously (on a loaded machine, a few scheduler ticks later).
  static bool gone_soon(pid_t pid) {
    for (int i = 0; i < 200 && alive(pid); ++i) usleep(10'000);
    return !alive(pid);
  }
  fs::path dir_;
};

TEST_F(ServerProcessTest, ACommandThatExitsAtOnceIsReportedWithItsStatusAndLog) {
  ServerProcess p(launch({"/bin/sh", "-c", "echo loading model; echo bad flag -np >&2; exit 3"}));
  const ReadyResult r = p.wait_ready(nullptr);
  EXPECT_EQ(r.outcome, ReadyOutcome::Exited);
  EXPECT_NE(r.message.find("exited with status 3"), std::string::npos) << r.message;
  EXPECT_LT(r.seconds, 1.4);
  EXPECT_EQ(p.log_tail(1), "bad flag -np");
  EXPECT_EQ(p.log_tail(5), "loading model\nbad flag -np");
  EXPECT_EQ(p.stop(), "exited with status 3");
  EXPECT_EQ(p.stop(), "exited with status 3");  // idempotent
}

TEST_F(ServerProcessTest, AProgramThatIsNotThereFailsToStartNamingIt) {
  const std::string e = error_of([&] {
    ServerProcess p(launch({"no-such-server-xyz", "-np", "2"}));
  });
  EXPECT_NE(e.find("cannot start 'no-such-server-xyz'"), std::string::npos) << e;
}

TEST_F(ServerProcessTest, AServerThatNeverAnswersTimesOutAndItsWholeGroupIsStopped) {
  // The leader ignores SIGTERM and its background child would outlive a kill of the leader
  // alone: stopping must reach both (SIGTERM to the group, SIGKILL after the grace period).
  const std::string script = "trap '' TERM; sleep 60 & echo $! > " + (dir_ / "child").string() +
                             "; echo $$ > " + (dir_ / "leader").string() + "; wait";
  std::optional<ServerProcess> p;
  p.emplace(launch({"/bin/sh", "-c", script}));
  const ReadyResult r = p->wait_ready(nullptr);
  EXPECT_EQ(r.outcome, ReadyOutcome::TimedOut);
  EXPECT_GE(r.seconds, 1.4);
  EXPECT_NE(r.message.find("not ready after"), std::string::npos) << r.message;
  const pid_t child = pid_in("child");
  ASSERT_TRUE(alive(child));
  EXPECT_EQ(pid_in("leader"), p->pid());
  EXPECT_EQ(getpgid(child), p->pid());  // its own group, not ours
  EXPECT_NE(getpgid(child), getpgid(0));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(p->stop(), "killed by signal 9 (SIGKILL)");
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(1900));  // the grace period
  p.reset();
  EXPECT_TRUE(gone_soon(child));
  EXPECT_TRUE(live_group_members(pid_in("leader")).empty());
}

TEST_F(ServerProcessTest, AStopSignalSendsSigtermToTheWatchedGroup) {
  const StopSignals guard;
  ServerProcess p(
      launch({"/bin/sh", "-c", "sleep 60 & echo $! > " + (dir_ / "child").string() + "; wait"}));
  for (int i = 0; i < 200 && pid_in("child") == 0; ++i) usleep(10'000);
  const pid_t child = pid_in("child");
  ASSERT_TRUE(alive(child));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(raise(SIGINT), 0);  // Ctrl-C: the handler stops the group at once
  EXPECT_TRUE(StopSignals::stop_requested());
  const ReadyResult r = p.wait_ready();
  // Either: the wait saw the stop request first (Stopped) or the group's exit by SIGTERM
  // (Exited); which comes first is a race (under ASan it is mostly the exit).
  EXPECT_TRUE(r.outcome == ReadyOutcome::Exited || r.outcome == ReadyOutcome::Stopped);
  EXPECT_EQ(p.stop(), "killed by signal 15 (SIGTERM)");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(1500));  // no SIGKILL needed
  EXPECT_TRUE(gone_soon(child));
  EXPECT_TRUE(live_group_members(p.pid()).empty());
}

TEST_F(ServerProcessTest, AServerThatAnswersIsReadyAndStopsWithSigterm) {
  server::ServerOptions o;
  o.port = 0;
  server::Server srv(o);
  const std::uint16_t port = srv.start();
  ServerProcess p(launch({"sleep", "60"}, port));
  const ReadyResult r = p.wait_ready(nullptr);
  EXPECT_EQ(r.outcome, ReadyOutcome::Ready) << r.message;
  EXPECT_TRUE(r.message.empty());
  EXPECT_GE(r.seconds, 0.0);
  EXPECT_LT(r.seconds, 1.4);
  EXPECT_FALSE(p.exited().has_value());
  EXPECT_EQ(p.stop(), "killed by signal 15 (SIGTERM)");
  EXPECT_TRUE(p.exited().has_value());
  srv.stop();
}

}  // namespace
}  // namespace llmbench::app
