// End to end: `llmbench sweep --serve-cmd` restarts the server per engine setting (docs/sweep.md
// "Restarting the server per setting"), with `llmbench serve` as the server: knob and free axes
// fill the command, each setting keeps its command, log, start-up time and exit status; a server
// that exits at once, one that never becomes ready and one killed mid-point each fail their
// setting with the log's tail while the sweep goes on; and no server process outlives the sweep,
// after Ctrl-C too (the process table says so).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sweep_fixture.hpp"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A port that was free a moment ago on 127.0.0.1 (bound to 0, read back, closed).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));  // NOLINT: the sockets API
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);   // NOLINT: the sockets API
  close(fd);
  return ntohs(addr.sin_port);
}

/// Running processes of process group `pgid` (zombies left out), from /proc (proc(5)).
std::vector<int> live_members(long pgid) {
  std::vector<int> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat) || stat.rfind(')') == std::string::npos)
      continue;
    std::istringstream rest(stat.substr(stat.rfind(')') + 1));
    char state = 0;
    long ppid = 0;
    long pgrp = 0;
    if (rest >> state >> ppid >> pgrp && pgrp == pgid && state != 'Z' && state != 'X')
      out.push_back(std::stoi(name));
  }
  return out;
}

class ServeCmdTest : public SweepTest {
 protected:
  void SetUp() override {
    SweepTest::SetUp();
    port_ = free_port();
  }
  std::vector<std::string> target() const {
    return {"--host", "127.0.0.1",          "--port", std::to_string(port_), "--dataset-name",
            "random", "--random-input-len", "16",     "--ignore-eos"};
  }
  /// Every setting's server has no running process left.
  void expect_no_server_left(const json& doc) const {
    for (const auto& s : doc.at("settings")) {
      if (s.at("pid").get<long>() > 0) {
        EXPECT_TRUE(live_members(s.at("pid").get<long>()).empty()) << s.dump();
      }
    }
  }
  int port_ = 0;
};

TEST_F(ServeCmdTest, EachKnobSettingGetsItsOwnServerAndShowsItsEffect) {
  auto args = target();
  for (const char* a :
       {"--serve-cmd", "", "--sweep", "max-concurrency=1,2", "--sweep", "max-num-seqs=1,2",
        "--sweep", "label=a", "--num-prompts", "8", "--random-output-len", "8"})
    args.emplace_back(a);
  args[target().size() + 1] =
      binary() +
      " serve --port {port} --host {host} --timing fixed --ttft-ms 20 "
      "--itl-ms 5 --max-num-seqs {max_num_seqs} --served-model-name m-{label}";
  ASSERT_EQ(sweep(args), 0) << read_file(log().string());
  const json doc = sweep_json();
  expect_point_files(doc, 8);
  const auto& settings = doc.at("settings");
  ASSERT_EQ(settings.size(), 2U) << settings.dump();
  const auto& points = doc.at("points");
  ASSERT_EQ(points.size(), 4U);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& s = settings[i];
    const std::string seqs = i == 0 ? "1" : "2";
    EXPECT_EQ(s.at("knobs").at("max_num_seqs"), seqs);
    EXPECT_EQ(s.at("knobs").at("label"), "a");
    EXPECT_EQ(s.at("command"), binary() + " serve --port " + std::to_string(port_) +
                                   " --host 127.0.0.1 --timing fixed --ttft-ms 20 --itl-ms 5 "
                                   "--max-num-seqs " +
                                   seqs + " --served-model-name m-a");
    EXPECT_EQ(s.at("ready"), "ready");
    EXPECT_GT(s.at("startup_s").get<double>(), 0);
    EXPECT_LT(s.at("startup_s").get<double>(), 20);
    EXPECT_EQ(s.at("exit_status"), "exited with status 0");  // it handles SIGTERM
    EXPECT_TRUE(s.at("error").is_null());
    EXPECT_EQ(s.at("points"), json::array({2 * i, 2 * i + 1}));
    EXPECT_TRUE(fs::exists(dir_ / "out" / s.at("log_file").get<std::string>()));
    // The knob axes run outer, the load inner: settings first in each point's axes.
    EXPECT_EQ(points[2 * i].at("axes").at("max-num-seqs"), i + 1);
    EXPECT_EQ(points[2 * i + 1].at("axes").at("max-concurrency"), 2);
  }
  // One slot queues the second of two concurrent requests behind a whole ~55 ms request: its
  // TTFT about triples; two slots serve both at once (wide margins: a shared machine).
  const auto ttft = [&](std::size_t i) { return points[i].at("mean_ttft_ms").get<double>(); };
  EXPECT_GT(ttft(1), 1.5 * ttft(0));
  EXPECT_LT(ttft(3), 1.5 * ttft(2) + 10);
  // The model the server was told to call itself came back from /v1/models.
  EXPECT_NE(read_file(log().string()).find("with m-a"), std::string::npos);
  expect_no_server_left(doc);
}

TEST_F(ServeCmdTest, BrokenServersFailTheirSettingWithTheLogTailAndTheSweepGoesOn) {
  // One script, four behaviours picked by a free axis: exit at once, never ready, killed in the
  // middle of its point, fine.
  const fs::path script = dir_ / "server.sh";
  std::ofstream(script)
      << "case \"$1\" in\n"
         "exit) echo \"error: unknown flag --bogus\"; exit 2;;\n"
         "hang) echo \"loading weights...\"; sleep 60;;\n"
         "die) \"$3\" serve --port \"$2\" --timing fixed --itl-ms 40 & p=$!\n"
         "  sleep 2; echo \"CUDA error: an illegal memory access\"; kill -9 $p; wait $p;;\n"
         "ok) exec \"$3\" serve --port \"$2\" --timing fixed --ttft-ms 5 --itl-ms 2;;\n"
         "esac\n";
  auto args = target();
  for (const char* a : {"--serve-cmd", "", "--sweep", "mode=exit,hang,die,ok", "--sweep",
                        "max-concurrency=1,2", "--num-prompts", "6", "--random-output-len", "30",
                        "--server-ready-timeout", "3", "--server-stop-grace", "2"})
    args.emplace_back(a);
  args[target().size() + 1] = "/bin/sh " + script.string() + " {mode} {port} " + binary();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(sweep(args), 1) << read_file(log().string());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
  const json doc = sweep_json();
  const auto& settings = doc.at("settings");
  ASSERT_EQ(settings.size(), 4U) << doc.dump(1);
  const auto& points = doc.at("points");
  ASSERT_EQ(points.size(), 8U);
  // exit: failed before ready, with its status and its last line, both points.
  EXPECT_EQ(settings[0].at("ready"), "exited");
  EXPECT_EQ(settings[0].at("exit_status"), "exited with status 2");
  for (int i : {0, 1}) EXPECT_EQ(points[i].at("status"), "failed");
  const std::string e0 = points[0].at("error");
  EXPECT_NE(e0.find("exited with status 2"), std::string::npos) << e0;
  EXPECT_NE(e0.find("error: unknown flag --bogus"), std::string::npos) << e0;
  EXPECT_NE(points[1].at("error").get<std::string>().find("not run"), std::string::npos);
  // hang: not ready within 3 s, stopped.
  EXPECT_EQ(settings[1].at("ready"), "timed_out");
  EXPECT_GE(settings[1].at("startup_s").get<double>(), 2.9);
  const std::string e2 = points[2].at("error");
  EXPECT_NE(e2.find("not ready after"), std::string::npos) << e2;
  EXPECT_NE(e2.find("loading weights..."), std::string::npos) << e2;
  // die: ready, then killed during its first point (6 requests of ~1.2 s each at concurrency 1).
  EXPECT_EQ(settings[2].at("ready"), "ready");
  EXPECT_EQ(points[4].at("status"), "failed");
  const std::string e4 = points[4].at("error");
  EXPECT_NE(e4.find("during point 4"), std::string::npos) << e4;
  EXPECT_NE(e4.find("CUDA error: an illegal memory access"), std::string::npos) << e4;
  EXPECT_TRUE(fs::exists(dir_ / "out" / points[4].at("results_file").get<std::string>()))
      << "the completed requests of the point are kept";
  EXPECT_NE(points[5].at("error").get<std::string>().find("not run"), std::string::npos);
  // ok: the sweep went on and measured both points.
  EXPECT_EQ(settings[3].at("ready"), "ready");
  for (int i : {6, 7}) {
    EXPECT_EQ(points[i].at("status"), "ok") << points[i].dump();
    EXPECT_EQ(points[i].at("completed"), 6);
  }
  expect_no_server_left(doc);
}

TEST_F(ServeCmdTest, CtrlCStopsTheServerAndLeavesNoProcess) {
  const fs::path pid_file = dir_ / "server.pid";
  auto args = target();
  for (const char* a : {"--serve-cmd", "", "--sweep", "max-num-seqs=4", "--sweep",
                        "max-concurrency=1", "--num-prompts", "50", "--random-output-len", "40",
                        "--result-dir", "", "--result-filename", "s.json"})
    args.emplace_back(a);
  // A wrapper shell with the server as its child: the whole group must go, not only the leader.
  args[target().size() + 1] = "/bin/sh -c 'echo $$ > " + pid_file.string() +
                              "; \"$0\" serve --port " +
                              "{port} --timing fixed --itl-ms 20 --max-num-seqs {max_num_seqs}; " +
                              "echo server ended' " + binary();
  args[args.size() - 3] = (dir_ / "out").string();
  std::vector<std::string> argv{binary(), "sweep"};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, log().string());
  long pgid = 0;
  for (int i = 0; i < 400 && pgid == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    std::ifstream(pid_file) >> pgid;
  }
  ASSERT_GT(pgid, 0) << read_file(log().string());
  // Wait until the load runs (the point's first request has answered), then Ctrl-C.
  for (int i = 0; i < 400 && read_file(log().string()).find("benchmarking") == std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_GE(live_members(pgid).size(), 2U) << "the shell and its server";
  p.signal(SIGINT);
  EXPECT_EQ(p.wait(std::chrono::seconds(30)), 1) << read_file(log().string());
  EXPECT_TRUE(live_members(pgid).empty());
  const json doc = sweep_json();
  EXPECT_TRUE(doc.at("stopped_early").get<bool>());
  ASSERT_EQ(doc.at("settings").size(), 1U);
  EXPECT_EQ(doc.at("settings")[0].at("pid"), pgid);
  EXPECT_FALSE(doc.at("settings")[0].at("exit_status").is_null());
  EXPECT_EQ(doc.at("points")[0].at("status"), "interrupted");
}

TEST_F(ServeCmdTest, PointsOfOneSettingAreCleanedAndHowIsRecorded) {
  const auto run = [&](std::vector<std::string> extra) {
    auto args = target();
    for (const char* a :
         {"--serve-cmd", "", "--sweep", "max-num-seqs=2", "--sweep", "max-concurrency=1,2,3",
          "--num-prompts", "2", "--random-output-len", "4"})
      args.emplace_back(a);
    args[target().size() + 1] =
        binary() +
        " serve --port {port} --timing fixed --ttft-ms 5 --itl-ms 2 --max-num-seqs "
        "{max_num_seqs}";
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(sweep(args), 0) << read_file(log().string());
    return sweep_json();
  };
  // The built-in server has neither vLLM's nor SGLang's reset endpoint: both tried, none done.
  json doc = run({});
  ASSERT_EQ(doc.at("settings").size(), 1U);
  const auto& cleaning = doc.at("settings")[0].at("cleaning");
  ASSERT_EQ(cleaning.size(), 2U) << doc.at("settings").dump();
  EXPECT_EQ(cleaning[0].get<std::string>(),
            "before point 1: none: the server reset no prefix cache (POST /reset_prefix_cache -> "
            "404, POST /flush_cache -> 404)");
  // --reset-cmd runs between the points, with the setting's placeholders.
  const fs::path marks = dir_ / "resets.txt";
  doc = run(
      {"--reset-cmd", "/bin/sh -c 'echo reset {max_num_seqs} {port} >> " + marks.string() + "'"});
  const std::string line = "reset 2 " + std::to_string(port_) + "\n";
  EXPECT_EQ(read_file(marks.string()), line + line);
  const auto& c2 = doc.at("settings")[0].at("cleaning");
  ASSERT_EQ(c2.size(), 2U);
  EXPECT_NE(c2[1].get<std::string>().find("before point 2: --reset-cmd /bin/sh -c"),
            std::string::npos)
      << c2.dump();
  EXPECT_NE(c2[1].get<std::string>().find("exited with status 0"), std::string::npos);
  // --restart-per-point: a server per point, each its own record and process.
  doc = run({"--restart-per-point"});
  const auto& settings = doc.at("settings");
  ASSERT_EQ(settings.size(), 3U);
  EXPECT_NE(settings[0].at("pid"), settings[1].at("pid"));
  EXPECT_NE(settings[1].at("pid"), settings[2].at("pid"));
  EXPECT_EQ(settings[1].at("cleaning")[0], "before point 1: restarted (--restart-per-point)");
  for (const auto& p : doc.at("points")) EXPECT_EQ(p.at("status"), "ok");
  expect_no_server_left(doc);
}

TEST_F(ServeCmdTest, TemplateAndAxisMistakesAreRefusedBeforeAnythingStarts) {
  auto args = target();
  for (const char* a : {"--serve-cmd", "srv --port {port} -np {max_num_seqs} -c {ctx}", "--sweep",
                        "max-num-seqs=1,2", "--sweep", "max-concurrency=1", "--num-prompts", "2"})
    args.emplace_back(a);
  EXPECT_EQ(sweep(args), 2);
  const std::string text = read_file(log().string());
  EXPECT_NE(text.find("unknown placeholder {ctx}"), std::string::npos) << text;
  EXPECT_NE(text.find("at byte 40"), std::string::npos) << text;
  args[target().size() + 1] = "srv --port {port}";
  EXPECT_EQ(sweep(args), 2);
  EXPECT_NE(read_file(log().string()).find("has no {max_num_seqs}"), std::string::npos);
  // Without --serve-cmd an unknown axis is still an error, and says what would make it one.
  EXPECT_EQ(sweep({"--sweep", "kv_dtype=f16", "--num-prompts", "2"}), 2);
  EXPECT_NE(read_file(log().string()).find("with --serve-cmd, any other name is a free axis"),
            std::string::npos);
}

/// Predict, then verify: the grid max_num_seqs x max_num_batched_tokens is simulated first, the
/// two settings with the highest predicted output tok/s are measured against `llmbench serve`
/// (the same engine in real time), and the prediction is stated beside each measurement with its
/// error: within 10% on throughput.
TEST_F(ServeCmdTest, PredictThenVerifyTheTopTwoSettingsWithinTenPercentOnThroughput) {
  auto args = target();
  for (const char* a :
       {"--serve-cmd", "", "--sweep", "max-num-seqs=8,32", "--sweep",
        "max-num-batched-tokens=256,2048", "--sweep", "max-concurrency=32", "--predict",
        "--verify-top", "2", "--random-output-len", "32", "--num-prompts", "64"})
    args.emplace_back(a);
  args[7] = "512";  // --random-input-len of target()
  args[target().size() + 1] = binary() +
                              " serve --port {port} --host {host} --max-num-seqs {max_num_seqs} "
                              "--max-num-batched-tokens {max_num_batched_tokens}";
  ASSERT_EQ(sweep(args), 0) << read_file(log().string());
  const json doc = sweep_json();
  const json predicted = json::parse(read_file((dir_ / "out" / "s-predicted.sweep.json").string()));
  EXPECT_EQ(predicted.at("mode"), "simulate");
  ASSERT_EQ(predicted.at("points").size(), 4U);
  const json& p = doc.at("predict");
  EXPECT_EQ(p.at("predicted_sweep"), "s-predicted.sweep.json");
  ASSERT_EQ(p.at("settings").size(), 4U) << p.dump();
  // Ranked by predicted tok/s, best first; the top two measured, and only they.
  double best = 0;
  for (const auto& pt : predicted.at("points"))
    best = std::max(best, pt.at("output_throughput").get<double>());
  EXPECT_EQ(p.at("settings")[0].at("score").get<double>(), best);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(p.at("settings")[i].at("verified").get<bool>(), i < 2);
    if (i > 0) {
      EXPECT_LE(p.at("settings")[i].at("score").get<double>(),
                p.at("settings")[i - 1].at("score").get<double>());
    }
  }
  ASSERT_EQ(doc.at("points").size(), 2U);
  ASSERT_EQ(doc.at("settings").size(), 2U);
  expect_no_server_left(doc);
  std::size_t compared = 0;
  for (const auto& c : p.at("comparisons")) {
    if (c.at("metric") != "output_throughput")
      continue;
    ++compared;
    const double want = c.at("predicted").get<double>();
    const double got = c.at("measured").get<double>();
    EXPECT_NEAR(c.at("error").get<double>(), (want - got) / got, 1e-9);
    EXPECT_LE(std::abs(c.at("error").get<double>()), 0.10) << c.dump();
  }
  EXPECT_EQ(compared, 2U);
  const std::string out = read_file(log().string());
  EXPECT_NE(out.find("Predicted against measured"), std::string::npos) << out;
}

/// `--slo` against real servers: one load search per setting inside that setting's server. With
/// fixed timing (20 ms to the first token, 8 tokens 5 ms apart: about 60 ms a request) a server of
/// N running requests keeps p99 TTFT under 220 ms up to about 4N concurrent requests.
TEST_F(ServeCmdTest, SloSearchPerSettingRunsInsideEachSettingsServer) {
  auto args = target();
  for (const char* a :
       {"--serve-cmd", "", "--sweep", "max-num-seqs=2,4", "--sweep", "max-concurrency=1:24",
        "--slo", "p99_ttft_ms<=220", "--num-prompts", "32", "--random-output-len", "8"})
    args.emplace_back(a);
  args[target().size() + 1] = binary() +
                              " serve --port {port} --host {host} --timing fixed --ttft-ms 20 "
                              "--itl-ms 5 --max-num-seqs {max_num_seqs}";
  ASSERT_EQ(sweep(args), 0) << read_file(log().string());
  const json doc = sweep_json();
  const json& answers = doc.at("slo_settings");
  ASSERT_EQ(answers.size(), 2U) << answers.dump();
  const auto& settings = doc.at("settings");
  ASSERT_EQ(settings.size(), 2U);  // one server start per setting, the search inside it
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(settings[i].at("knobs").at("max_num_seqs"), i == 0 ? "2" : "4");
    std::vector<std::size_t> rows;
    for (const auto& p : answers[i].at("search").at("points"))
      rows.push_back(p.at("row").get<std::size_t>());
    EXPECT_EQ(settings[i].at("points").get<std::vector<std::size_t>>(), rows);
  }
  const double two = answers[0].at("answer").get<double>();
  const double four = answers[1].at("answer").get<double>();
  EXPECT_GE(two, 7);
  EXPECT_LE(two, 9);
  EXPECT_GE(four, 14);
  EXPECT_LE(four, 18);
  EXPECT_EQ(answers[0].at("binding_constraint"), "p99_ttft_ms<=220");
  expect_no_server_left(doc);
}

}  // namespace
}  // namespace llmbench::e2e
