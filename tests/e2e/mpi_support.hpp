#pragma once
/// @file
/// What the MPI end-to-end tests share (docs/distributed.md): a `llmbench serve --timing fixed`
/// target, `mpirun --oversubscribe -np N` in front of a command (TCP over the loopback between
/// the ranks, Open MPI's run-as-root settings, since CI runs as root), and the results a run
/// wrote.

#include "llmbench/metrics/record.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llmbench::e2e {

/// `mpirun --oversubscribe -np ranks` in front of `args` (TCP over the loopback between the
/// ranks: no shared-memory segment to size in a container, no other interface tried).
inline std::vector<std::string> mpirun_argv(const std::vector<std::string>& args, int ranks) {
  std::vector<std::string> argv{LLMBENCH_MPIEXEC,
                                "--oversubscribe",
                                "-np",
                                std::to_string(ranks),
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

/// Lets `mpirun` run as root, as CI does (Open MPI's documented override: both variables).
inline void allow_mpirun_as_root() {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
}

/// One fixed-timing server per test: TTFT 20 ms, ITL 2 ms, up to 64 requests at once.
class MpiTest : public ScratchDirTest {
 protected:
  explicit MpiTest(std::string prefix) : ScratchDirTest(std::move(prefix)) {}

  void SetUp() override {
    ScratchDirTest::SetUp();
    // CI runs as root; Open MPI refuses root without both (its documented override). A tag in
    // the ranks' environment finds them in /proc (the killed-rank test).
    allow_mpirun_as_root();
    ::setenv("LLMBENCH_MPI_TEST_TAG", dir_.string().c_str(), 1);
    server_ = std::make_unique<ServeProcess>(
        dir_, std::vector<std::string>{"--timing", "fixed", "--ttft-ms", "20", "--itl-ms", "2",
                                       "--max-num-seqs", "64"});
    ASSERT_GT(server_->port(), 0) << server_->log();
  }

  /// `mpirun_argv(args, ranks)`.
  static std::vector<std::string> mpirun(const std::vector<std::string>& args, int ranks = 3) {
    return mpirun_argv(args, ranks);
  }

  /// Runs `argv` to its end (at most 60 s), its output in `<dir>/<log>`; the exit code.
  int launch(const std::vector<std::string>& argv, const std::string& log) {
    Process p(argv, (dir_ / log).string());
    return p.wait(std::chrono::seconds(60));
  }

  /// The output of a `launch`.
  std::string log(const std::string& name) const { return read_file((dir_ / name).string()); }

  /// `<dir>/<name>/run.json`.
  nlohmann::json results(const std::string& name) const {
    return nlohmann::json::parse(read_file((dir_ / name / "run.json").string()));
  }

  std::unique_ptr<ServeProcess> server_;
};

/// Planned arrival times of the measured requests by id, relative to the first.
inline std::map<std::int64_t, std::int64_t> planned_times(
    const std::vector<metrics::RequestRecord>& rs) {
  std::map<std::int64_t, std::int64_t> out;
  for (const auto& r : rs)
    if (!r.warmup)
      out[r.id] = r.scheduled_ns;
  const std::int64_t first = out.empty() ? 0 : out.begin()->second;
  for (auto& [id, t] : out) t -= first;
  return out;
}

}  // namespace llmbench::e2e
