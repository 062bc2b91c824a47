#pragma once
// The fixture of the `llmbench sweep` end-to-end tests (sweep_test.cpp, sweep_rules_test.cpp):
// runs the binary in a scratch folder and reads back the sweep's files.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {

inline std::string binary() {
  return std::string(LLMBENCH_TEST_BINARY_DIR) + "/llmbench";
}

/// A scratch folder and helpers to run `llmbench sweep` in it.
class SweepTest : public ScratchDirTest {
 protected:
  SweepTest() : ScratchDirTest("sweep") {}

  /// Runs `llmbench sweep ARGS --result-dir <dir>/out --result-filename s.json`; returns the exit
  /// code.
  int sweep(std::vector<std::string> args) {
    std::vector<std::string> argv{binary(), "sweep"};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const char* a : {"--result-dir", "", "--result-filename", "s.json"}) argv.emplace_back(a);
    argv[argv.size() - 3] = (dir_ / "out").string();
    Process p(argv, log().string());
    return p.wait(std::chrono::seconds(120));
  }
  std::filesystem::path log() const { return dir_ / "sweep.log"; }
  nlohmann::json sweep_json() const {
    return nlohmann::json::parse(read_file((dir_ / "out" / "s.sweep.json").string()));
  }
  std::vector<std::string> csv_lines() const {
    std::istringstream in(read_file((dir_ / "out" / "s.sweep.csv").string()));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  /// Every point's results JSON and records file exist, with the point's completed count.
  void expect_point_files(const nlohmann::json& doc, std::size_t completed) {
    for (const auto& p : doc.at("points")) {
      ASSERT_EQ(p.at("status"), "ok") << p.dump();
      const std::filesystem::path results = dir_ / "out" / p.at("results_file").get<std::string>();
      ASSERT_TRUE(std::filesystem::exists(results)) << results;
      const nlohmann::json r = nlohmann::json::parse(read_file(results.string()));
      EXPECT_EQ(r.at("completed").get<std::size_t>(), completed);
      EXPECT_TRUE(r.at("windows").is_array());
      EXPECT_FALSE(r.at("windows").empty());
      EXPECT_TRUE(r.at("stable").is_boolean());
      std::istringstream records(
          read_file((dir_ / "out" / p.at("records_file").get<std::string>()).string()));
      std::size_t lines = 0;
      for (std::string line; std::getline(records, line);) lines += line.empty() ? 0 : 1;
      EXPECT_EQ(lines, completed);
    }
  }
};

}  // namespace llmbench::e2e
