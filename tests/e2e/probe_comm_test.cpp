// `llmbench probe comm` end to end, against the fake CUDA runtime and NCCL of the telemetry tests
// (tests/unit/telemetry/fake_cudart.cpp, fake_nccl.cpp) where a GPU is needed: exit 2 with what
// cannot be measured on a machine without the libraries or with one GPU; a sweep's table, fit
// and calibration file; `simulate` and `plan` taking that file, saying which terms were measured,
// and the TP8 TPOT moving by the all-reduce difference the fit predicts; a failing NCCL call
// keeping what was measured (exit 1).

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ProbeCommTest : public ScratchDirTest {
 protected:
  ProbeCommTest() : ScratchDirTest("probe") {}

  void SetUp() override {
    ScratchDirTest::SetUp();
    unsetenv("NCCL_NVLS_ENABLE");
    setenv("LLMBENCH_FAKE_CUDA_DEVICES", "8", 1);
    unsetenv("LLMBENCH_FAKE_NCCL_SCRIPT");
  }
  void TearDown() override {
    unsetenv("LLMBENCH_FAKE_CUDA_DEVICES");
    unsetenv("LLMBENCH_FAKE_NCCL_SCRIPT");
    ScratchDirTest::TearDown();
  }

  /// `probe comm` on the fake libraries with `args` after.
  int probe(const std::vector<std::string>& args, std::string& log) {
    std::vector<std::string> all{"probe",
                                 "comm",
                                 "--cudart-library",
                                 LLMBENCH_FAKE_CUDART_PATH,
                                 "--nccl-library",
                                 LLMBENCH_FAKE_NCCL_PATH};
    all.insert(all.end(), args.begin(), args.end());
    return llmbench(all, log);
  }

  void script(const std::string& text) {
    const auto path = dir_ / "script.txt";
    std::ofstream(path) << text;
    setenv("LLMBENCH_FAKE_NCCL_SCRIPT", path.c_str(), 1);
  }
};

TEST_F(ProbeCommTest, WithoutTheLibrariesItExitsTwoAndSaysWhatItCannotMeasure) {
  std::string log;
  EXPECT_EQ(llmbench({"probe", "comm", "--cudart-library", "/nonexistent/libcudart.so.12"}, log),
            2);
  EXPECT_NE(log.find("llmbench: error: probe comm: no CUDA runtime on this machine "
                     "(/nonexistent/libcudart.so.12: cannot open shared object file"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("all-reduce, all-gather, reduce-scatter and all-to-all need the CUDA "
                     "runtime, NCCL and at least 2 GPUs; nothing was measured and no "
                     "calibration was written"),
            std::string::npos)
      << log;
  // The fake runtime found, NCCL missing.
  EXPECT_EQ(llmbench({"probe", "comm", "--cudart-library", LLMBENCH_FAKE_CUDART_PATH,
                      "--nccl-library", "/nonexistent/libnccl.so.2"},
                     log),
            2);
  EXPECT_NE(log.find("NCCL cannot be opened"), std::string::npos) << log;
  EXPECT_NE(log.find("8 GPUs found: 0: Fake H100, 1: Fake H100"), std::string::npos) << log;
  // `probe` alone needs its subcommand.
  EXPECT_EQ(llmbench({"probe"}, log), 2);
}

TEST_F(ProbeCommTest, OnOneGpuItExitsTwoAndSaysWhatItCannotMeasure) {
  setenv("LLMBENCH_FAKE_CUDA_DEVICES", "1", 1);
  std::string log;
  EXPECT_EQ(probe({"--calibration-out", (dir_ / "c.json").string()}, log), 2);
  EXPECT_NE(log.find("llmbench: error: probe comm: this machine has one GPU (0: Fake H100): "
                     "collectives move data between GPUs, so not one of them can be measured "
                     "here"),
            std::string::npos)
      << log;
  EXPECT_FALSE(fs::exists(dir_ / "c.json"));
}

TEST_F(ProbeCommTest, ASweepIsPrintedFittedAndFeedsSimulateAndPlan) {
  script("all_reduce * 30 100\nall_to_all * 20 50\n");
  const std::string cal = (dir_ / "comm.json").string();
  std::string log;
  ASSERT_EQ(probe({"--gpu-counts", "8", "--collectives", "all_reduce,all_to_all", "--max-bytes",
                   "64K", "--iters", "5", "--warmup-iters", "1", "--calibration-out", cal},
                  log),
            0)
      << log;
  EXPECT_NE(log.find("# NCCL environment: NCCL_NVLS_ENABLE=0"), std::string::npos) << log;
  EXPECT_NE(log.find("# all_reduce bf16 over 8 GPUs"), std::string::npos) << log;
  // 4 KB = 2048 BF16 elements in 30 + 4096/1e5 µs; algbw 0.14, busbw × 1.75; the fit is exact.
  EXPECT_NE(log.find("          4096         2048      30.04      30.04      0.14      0.24      "
                     "30.04    +0.0"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("# one line: 30.00 us + S / 100.00 GB/s, within 0.0 % of every size"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("# all_to_all bf16 over 8 GPUs"), std::string::npos) << log;
  const json j = json::parse(read_file(cal));
  EXPECT_EQ(j["format"], "llmbench-calibration");
  EXPECT_EQ(j["comm"]["nccl_env"]["NCCL_NVLS_ENABLE"], "0");
  EXPECT_EQ(j["comm"]["nccl_version"], "2.24.3");
  ASSERT_EQ(j["comm"]["fits"].size(), 2U);
  EXPECT_EQ(j["comm"]["fits"][0]["points"].size(), 5U);  // 4 KB .. 64 KB
  EXPECT_NEAR(j["comm"]["fits"][0]["latency_us"].get<double>(), 30, 1e-6);

  // simulate: one request alone, with and without the file. Each decode step all-reduces
  // h·2 = 14,336 B twice in each of 61 layers: measured 30 + 14336/1e5 µs against the datasheet's
  // 10 + 1.75·14336/450e3 µs, so the TPOT moves by 122 × 20.0876 µs = 2.4507 ms.
  const std::vector<std::string> sim = {
      "simulate",     "--num-prompts",       "1",  "--random-input-len",
      "128",          "--random-output-len", "33", "--save-result",
      "--result-dir", dir_.string()};
  auto with = sim;
  for (const std::string a : {"--calibration", cal.c_str(), "--result-filename", "with.json"})
    with.push_back(a);
  auto without = sim;
  for (const std::string a : {"--result-filename", "without.json"}) without.push_back(a);
  ASSERT_EQ(llmbench(with, log), 0) << log;
  EXPECT_NE(log.find("TP all-reduce:"), std::string::npos) << log;
  EXPECT_NE(log.find("measured: all_reduce bf16 on 8 GPUs, 1 segment, within 0.0 % of every "
                     "measured size (" +
                     cal + "; NCCL 2.24.3; 0: Fake H100 (compute capability 9.0))"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("none (EP1)"), std::string::npos) << log;
  ASSERT_EQ(llmbench(without, log), 0) << log;
  EXPECT_NE(log.find("(no --calibration)"), std::string::npos) << log;
  const json a = json::parse(read_file((dir_ / "with.json").string()));
  const json b = json::parse(read_file((dir_ / "without.json").string()));
  const double predicted_ms = 122 * ((30 + 14336 / 1e5) - (10 + 1.75 * 14336 / 450e3)) / 1e3;
  EXPECT_NEAR(a["mean_tpot_ms"].get<double>() - b["mean_tpot_ms"].get<double>(), predicted_ms,
              1e-5);
  EXPECT_EQ(a["config_effective"]["comm_terms"]["all_reduce"]["measured"], true);
  EXPECT_EQ(a["config_effective"]["comm_terms"]["calibration"], cal);
  EXPECT_EQ(b["config_effective"]["comm_terms"]["all_reduce"]["measured"], false);

  // plan: the term sources and the traffic of TP8 against DP8+EP8 per forward pass.
  ASSERT_EQ(llmbench({"plan", "--calibration", cal, "--batch-tokens", "256"}, log), 0) << log;
  EXPECT_NE(log.find("TP all-reduce:                               measured: all_reduce bf16"),
            std::string::npos)
      << log;
  // TP8: S = 256·7168·2 B = 3.670 MB, 122 calls, 1.75·S each sent = 783.5 MB per GPU.
  EXPECT_NE(log.find("  TP8 *              256        3.670    122"), std::string::npos) << log;
  EXPECT_NE(log.find("783.548"), std::string::npos) << log;
  // DP8+EP8: 32 tokens per GPU × top-8 × 7168: 1.835 MB FP8 dispatch, 3.670 MB BF16 combine.
  EXPECT_NE(log.find("  DP8+EP8            256            -      -          1.835+3.670     58"),
            std::string::npos)
      << log;
}

TEST_F(ProbeCommTest, AFailingCallKeepsWhatWasMeasuredAndExitsOne) {
  script("fail all_to_all 16384\n");
  const std::string cal = (dir_ / "partial.json").string();
  std::string log;
  EXPECT_EQ(probe({"--gpu-counts", "2", "--collectives", "all_reduce,all_to_all", "--max-bytes",
                   "64K", "--iters", "3", "--calibration-out", cal},
                  log),
            1)
      << log;
  EXPECT_NE(log.find("llmbench: error: probe comm stopped early: ncclGroupEnd: internal error"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("the 7 sizes measured before are printed above and written"),
            std::string::npos)
      << log;
  const json j = json::parse(read_file(cal));
  ASSERT_EQ(j["comm"]["fits"].size(), 2U);
  EXPECT_EQ(j["comm"]["fits"][1]["points"].size(), 2U);  // all_to_all 4 KB and 8 KB
}

TEST_F(ProbeCommTest, AnOutputThatIsNoCalibrationFileIsRefusedBeforeMeasuring) {
  const auto path = dir_ / "notes.json";
  std::ofstream(path) << R"({"hello": 1})";
  std::string log;
  EXPECT_EQ(probe({"--calibration-out", path.string()}, log), 2);
  EXPECT_NE(log.find("not a calibration file"), std::string::npos) << log;
  EXPECT_EQ(log.find("# llmbench probe comm:"), std::string::npos) << log;
  EXPECT_EQ(probe({"--min-bytes", "4KB"}, log), 2);
  EXPECT_NE(log.find("--min-bytes: '4KB' is not a size in bytes"), std::string::npos) << log;
  EXPECT_EQ(probe({"--dtypes", "fp8"}, log), 2);
  EXPECT_NE(log.find("--dtypes: 'fp8' is not one of fp16, bf16, fp8_e4m3, fp8_e5m2"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace llmbench::e2e
