// End to end: `llmbench doctor` (docs/telemetry.md, "llmbench doctor") against a `llmbench serve`
// child (every server line PASS, the prompt counts compared with the same tokenizer), on a
// machine without NVIDIA (every GPU line N/A), and with the fake NVML of the telemetry tests (a
// throttling GPU FAILs: exit code 1).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/shared_data.hpp"
#include "../unit/tokenizer/test_data.hpp"
#include "process.hpp"
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

using nlohmann::json;

class DoctorTest : public ScratchDirTest {
 protected:
  DoctorTest() : ScratchDirTest("doctor") {}

  /// Runs `llmbench doctor --json <args>` with stdout alone in out.json; returns its exit code.
  int doctor(const std::vector<std::string>& args) {
    std::string command = "exec '" + binary() + "' doctor --json";
    for (const auto& a : args) command += " '" + a + "'";
    command += " > '" + (dir_ / "out.json").string() + "'";
    Process p({"/bin/sh", "-c", command}, (dir_ / "doctor.log").string());
    return p.wait(std::chrono::seconds(120));
  }
  json output() const { return json::parse(read_file((dir_ / "out.json").string())); }
  /// The checks of `subject`, by name → status.
  std::map<std::string, std::string> statuses(const json& j, const std::string& subject) const {
    std::map<std::string, std::string> out;
    for (const auto& c : j.at("checks")) {
      if (c.at("subject") == subject)
        out[c.at("name").get<std::string>()] = c.at("status").get<std::string>();
    }
    return out;
  }
};

TEST_F(DoctorTest, EveryServerLinePassesAgainstServe) {
  const auto tok = tokenizer::testing::data_file("deepseek-v3/tokenizer.json");
  if (tok.empty()) {
    LLMBENCH_SHARED_DATA_MISSING() << "tokenizers/deepseek-v3 not found";
  }
  ServeProcess server(
      dir_, {"--timing", "fixed", "--ttft-ms", "5", "--itl-ms", "1", "--tokenizer", tok.string()});
  ASSERT_GT(server.port(), 0) << server.log();
  const int rc =
      doctor({"--base-url", server.base_url(), "--backend", "vllm", "--tokenizer", tok.string(),
              "--nvml-library", "/nonexistent/libnvidia-ml.so.1", "--max-concurrency", "8"});
  const std::string log = read_file((dir_ / "doctor.log").string());
  ASSERT_EQ(rc, 0) << log << read_file((dir_ / "out.json").string());
  const json j = output();
  const auto server_lines = statuses(j, "server");
  EXPECT_EQ(server_lines, (std::map<std::string, std::string>{{"reachable", "PASS"},
                                                              {"models", "PASS"},
                                                              {"stream", "PASS"},
                                                              {"usage", "PASS"},
                                                              {"prompt_tokens", "PASS"},
                                                              {"metrics", "PASS"}}))
      << j.dump(2);
  for (const auto& c : j.at("checks")) {
    const std::string detail = c.at("detail").get<std::string>();
    if (c.at("name") == "metrics") {
      EXPECT_NE(detail.find("looks like vllm"), std::string::npos) << detail;
    }
    if (c.at("name") == "stream") {
      EXPECT_NE(detail.find("32 output tokens"), std::string::npos) << detail;
    }
  }
}

TEST_F(DoctorTest, WithoutNvidiaTheGpuLinesAreNotApplicable) {
  const int rc = doctor({"--nvml-library", "/nonexistent/libnvidia-ml.so.1"});
  ASSERT_EQ(rc, 0) << read_file((dir_ / "doctor.log").string());
  const json j = output();
  const auto gpu = statuses(j, "gpu");
  EXPECT_EQ(gpu.size(), 10U);
  for (const auto& [name, status] : gpu) EXPECT_EQ(status, "N/A") << name;
  EXPECT_EQ(statuses(j, "nvml").at("driver"), "N/A");
  for (const auto& [name, status] : statuses(j, "server")) EXPECT_EQ(status, "N/A") << name;
  EXPECT_EQ(statuses(j, "host").size(), 3U);
}

TEST_F(DoctorTest, AThrottlingGpuFails) {
  std::ofstream(dir_ / "script.txt")
      << "devices 1\ndriver 550.54.15\ncuda 12040\nname 0 NVIDIA H200\n"
         "row 0 sm_clock=1200 max_sm_clock=1980 throttle=0x40 persistence=1\n";
  ::setenv("LLMBENCH_FAKE_NVML_SCRIPT", (dir_ / "script.txt").c_str(), 1);
  const int rc = doctor({"--nvml-library", LLMBENCH_FAKE_NVML_PATH});
  ::unsetenv("LLMBENCH_FAKE_NVML_SCRIPT");
  EXPECT_EQ(rc, 1) << read_file((dir_ / "doctor.log").string());
  const json j = output();
  const auto gpu0 = statuses(j, "gpu0");
  EXPECT_EQ(gpu0.at("throttle"), "FAIL");
  EXPECT_EQ(gpu0.at("persistence_mode"), "PASS");
  EXPECT_EQ(statuses(j, "nvml").at("driver"), "PASS");
  EXPECT_EQ(j.at("counts").at("FAIL"), 1);
}

}  // namespace
}  // namespace llmbench::e2e
