#pragma once
/// @file
/// Child processes for end-to-end tests (the llama.cpp server-test habit: start the binary, poll
/// for readiness, fail if it died, kill it at teardown).

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace llmbench::e2e {

/// A child process started with posix_spawn; killed (SIGTERM, then SIGKILL) on destruction.
class Process {
 public:
  /// Starts `argv[0]` with `argv`; stdout/stderr go to `log_path` (appended). Throws on failure.
  Process(const std::vector<std::string>& argv, const std::string& log_path);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  Process(Process&&) = delete;
  Process& operator=(Process&&) = delete;

  /// Waits up to `timeout` for exit; returns the exit code, or -1 on timeout (child left running),
  /// or 128+signal when killed by a signal.
  int wait(std::chrono::milliseconds timeout);
  /// True while the child has not exited.
  bool running();
  /// Sends `sig`.
  void signal(int sig);

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

/// The `llmbench` binary under test: `<build>/llmbench` (LLMBENCH_TEST_BINARY_DIR, set by
/// `llmbench_add_test`).
std::string binary();

/// Reads a whole file ("" if missing or unreadable), through llmbench's one file reader.
std::string read_file(const std::string& path);

/// Polls until `path` holds a port number or `timeout` passes; returns 0 on timeout.
int wait_for_port_file(const std::string& path, Process& server, std::chrono::milliseconds timeout);

/// `GET path` from 127.0.0.1:port over HTTP/1.0 (connection closed by the server); returns the
/// body, or "" on any failure.
std::string fetch_text(int port, const std::string& path);

/// `llmbench serve` as a child process on a free 127.0.0.1 port: started as `llmbench serve
/// --port 0 --port-file <dir>/port <args...>` with its output in `<dir>/server.log`, then waited
/// for until it has written its port file (at most 20 s) or died. Stopped (SIGTERM, then SIGKILL)
/// on destruction, like any `Process`.
class ServeProcess {
 public:
  ServeProcess(const std::filesystem::path& dir, const std::vector<std::string>& args);

  /// The port it listens on; 0 when it died or did not write the port file in time (`log()`
  /// says why).
  [[nodiscard]] int port() const noexcept { return port_; }
  /// `http://127.0.0.1:<port>`, for `run --base-url`.
  [[nodiscard]] std::string base_url() const;
  /// Its output so far (`<dir>/server.log`).
  [[nodiscard]] std::string log() const;
  /// The child itself (signals, exit code).
  Process& process() noexcept { return process_; }

 private:
  std::filesystem::path dir_;
  Process process_;
  int port_ = 0;
};

/// A test fixture with a fresh scratch folder per test in `dir_`:
/// `<temp>/llmbench-<prefix>-<pid>-<test name>`, removed after a passing test and kept after a
/// failing one (its logs are the evidence).
class ScratchDirTest : public ::testing::Test {
 protected:
  explicit ScratchDirTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override;
  void TearDown() override;

  /// Runs `llmbench args...` to its end (at most 120 s); returns its exit code (-1 on timeout),
  /// with its output in `out` (kept in `dir_` as cmdN.log, N counting the commands of a test).
  int llmbench(const std::vector<std::string>& args, std::string& out);

  std::filesystem::path dir_;

 private:
  std::string prefix_;
  int commands_ = 0;
};

}  // namespace llmbench::e2e
