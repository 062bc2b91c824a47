// Honest labels (docs/sweep.md "Pareto frontier", docs/metrics.md): a `run` point's "per GPU"
// figures divide by the GPUs behind the server (`--num-gpus`), and say "per server" when those
// are not known, instead of counting a server as one GPU.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class LabelsTest : public ScratchDirTest {
 protected:
  LabelsTest() : ScratchDirTest("labels") {}

  /// A two-point concurrency sweep against the built-in fixed-timing server (`extra` appended);
  /// the sweep JSON, with the console in `console`.
  json sweep(const std::string& name, const std::vector<std::string>& extra, std::string& console) {
    const fs::path out = dir_ / name;
    std::vector<std::string> argv{
        binary(),          "sweep", "--sweep",          "max-concurrency=2,8",
        "--server-timing", "fixed", "--server-ttft-ms", "5",
        "--server-itl-ms", "2",     "--output-len",     "8",
        "--num-prompts",   "40",    "--quiet",          "--result-dir",
        out.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const std::string log = (dir_ / (name + ".log")).string();
    Process p(argv, log);
    EXPECT_EQ(p.wait(std::chrono::seconds(60)), 0) << read_file(log);
    console = read_file(log);
    for (const auto& e : fs::directory_iterator(out)) {
      if (e.path().string().ends_with(".sweep.json"))
        return json::parse(read_file(e.path().string()));
    }
    ADD_FAILURE() << "no sweep JSON in " << out;
    return json::object();
  }
};

TEST_F(LabelsTest, NumGpusDividesPerGpuFiguresAndUnknownGpusArePerServer) {
  std::string console;
  const json eight = sweep("eight", {"--num-gpus", "8"}, console);
  EXPECT_NE(console.find("Pareto (tok/s per GPU vs tok/s per user)"), std::string::npos) << console;
  ASSERT_TRUE(eight.at("pareto").at("per_gpu_known").get<bool>());
  ASSERT_FALSE(eight.at("pareto").at("points").empty());
  for (const auto& f : eight.at("pareto").at("points")) {
    const json& point = eight.at("points").at(f.at("index").get<std::size_t>());
    EXPECT_NEAR(f.at("throughput_per_gpu").get<double>(),
                point.at("output_throughput").get<double>() / 8, 1e-6);
    const json results = json::parse(
        read_file((dir_ / "eight" / point.at("results_file").get<std::string>()).string()));
    EXPECT_EQ(results.at("num_gpus"), 8);
    EXPECT_EQ(results.at("num_gpus_source"), "--num-gpus");
  }
  // The fixed-timing server has no GPUs the client can know of: per server, and said so.
  const json unknown = sweep("unknown", {}, console);
  EXPECT_NE(console.find("Pareto (tok/s per server vs tok/s per user)"), std::string::npos)
      << console;
  EXPECT_FALSE(unknown.at("pareto").at("per_gpu_known").get<bool>());
  for (const auto& f : unknown.at("pareto").at("points")) {
    const json& point = unknown.at("points").at(f.at("index").get<std::size_t>());
    EXPECT_NEAR(f.at("throughput_per_gpu").get<double>(),
                point.at("output_throughput").get<double>(), 1e-6);
    const json results = json::parse(
        read_file((dir_ / "unknown" / point.at("results_file").get<std::string>()).string()));
    EXPECT_TRUE(results.at("num_gpus").is_null());
  }
}

}  // namespace
}  // namespace llmbench::e2e
