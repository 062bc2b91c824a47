// `llmbench doctor`'s verdicts (telemetry/doctor_checks.hpp): GPU lines from the fake NVML
// (fake_nvml.cpp) with scripted values, exactly; a library that lacks one of the doctor's
// functions; no NVML at all; the host lines from a fake /sys tree; the server lines from probes.

#include "llmbench/telemetry/doctor_checks.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <unistd.h>

namespace llmbench::telemetry {
namespace {

namespace fs = std::filesystem;

// GPU 0 healthy; GPU 1 wrong in every way the doctor checks. Memory: 150754820096 B = 140.4 GiB.
constexpr const char* kScript = R"(devices 2
driver 550.54.15
cuda 12040
name 0 NVIDIA H200
name 1 NVIDIA H200
proc 0 4242 1610612736
proc 1 100 1073741824
proc 1 200 -
proc 1 999 1073741824
row 0 mem_total=150754820096 mem_used=1073741824 sm_clock=1980 mem_clock=3201 max_sm_clock=1980 max_mem_clock=3201 app_sm_clock=1980 app_mem_clock=3201 throttle=0x1 pcie_gen=5 pcie_width=16 max_pcie_gen=5 max_pcie_width=16 ecc_corr=0 ecc_uncorr=0 ecc_corr_agg=0 ecc_uncorr_agg=0 mig=0 persistence=1 ecc_mode=1 nvlink_links=18 nvlink_up=0x3ffff
row 1 mem_total=150754820096 mem_used=85899345920 sm_clock=1410 mem_clock=3201 max_sm_clock=1980 max_mem_clock=3201 app_sm_clock=1755 app_mem_clock=3201 throttle=0x24 pcie_gen=4 pcie_width=8 max_pcie_gen=5 max_pcie_width=16 ecc_corr=3 ecc_uncorr=1 ecc_corr_agg=10 ecc_uncorr_agg=2 mig=1 persistence=0 ecc_mode=1 ecc_pending=0 nvlink_links=18 nvlink_up=0x3fff7
)";

/// A scratch folder, the script in it, and a fake /proc naming pid 4242.
class DoctorNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("doctor-nvml-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "proc/4242");
    std::ofstream(dir_ / "proc/4242/comm") << "llama-server\n";
    write_script(kScript);
  }
  void TearDown() override {
    ::unsetenv("LLMBENCH_FAKE_NVML_SCRIPT");
    fs::remove_all(dir_);
  }
  void write_script(const std::string& text) {
    std::ofstream(dir_ / "script.txt") << text;
    ::setenv("LLMBENCH_FAKE_NVML_SCRIPT", (dir_ / "script.txt").c_str(), 1);
  }
  /// Every line NVML gives with the library at `path`; pid 999 plays the doctor itself.
  std::vector<DoctorCheck> checks(const char* path) {
    std::string message;
    std::vector<std::string> notes;
    const auto nvml = Nvml::open(path, message, notes);
    EXPECT_NE(nvml, nullptr) << message;
    if (!nvml)
      return {};
    auto out =
        driver_checks(nvml->driver_version(), nvml->cuda_driver_version(), nvml->device_count());
    for (unsigned int i = 0; i < nvml->device_count(); ++i) {
      auto more = gpu_checks(nvml->health(i, (dir_ / "proc").string()), nvml->device_count(), 999);
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }

  fs::path dir_;
};

TEST_F(DoctorNvmlTest, ScriptedGpusGiveExactLines) {
  const auto result = checks(LLMBENCH_FAKE_NVML_PATH);
  EXPECT_EQ(format_checks_text(result),
            R"(PASS  nvml driver: driver 550.54.15, 2 GPU(s)
PASS  nvml cuda_driver: supports CUDA 12.4
PASS  gpu0 device: NVIDIA H200, 140.4 GiB (1.0 GiB in use)
PASS  gpu0 persistence_mode: enabled
PASS  gpu0 clocks: applications clocks at the maximum: SM 1980 MHz, memory 3201 MHz (SM now 1980 MHz)
PASS  gpu0 throttle: gpu_idle only (no work running: clocks rest)
PASS  gpu0 ecc_mode: enabled
PASS  gpu0 ecc_errors: 0 corrected, 0 uncorrected since the driver loaded; lifetime 0 corrected, 0 uncorrected
PASS  gpu0 mig: disabled (the whole GPU)
PASS  gpu0 pcie_link: Gen5 x16, max Gen5 x16
PASS  gpu0 nvlink: 18 of 18 links up
PASS  gpu0 gpu_processes: one process holds GPU memory (the server under test?): pid 4242 (llama-server) 1.5 GiB
PASS  gpu1 device: NVIDIA H200, 140.4 GiB (80.0 GiB in use)
WARN  gpu1 persistence_mode: disabled: the driver tears the GPU down when its last client exits, so each start pays the initialization again and clock settings reset
      fix: sudo nvidia-smi -i 1 -pm 1 (or run nvidia-persistenced)
WARN  gpu1 clocks: applications clocks SM 1755 MHz, memory 3201 MHz, below the maximum SM 1980 MHz, memory 3201 MHz (SM now 1410 MHz)
      fix: sudo nvidia-smi -i 1 -ac 3201,1980 (memory,SM), or lock the SM clock with nvidia-smi -i 1 -lgc 1980
FAIL  gpu1 throttle: active now: sw_power_cap, sw_thermal_slowdown (SM clock 1410 of 1980 MHz)
      fix: cooling or power delivery is slowing the GPU: nvidia-smi -i 1 -q -d PERFORMANCE,TEMPERATURE,POWER; benchmark after it clears
WARN  gpu1 ecc_mode: enabled now, disabled after the next reboot
      fix: sudo nvidia-smi -i 1 -e 1 keeps it on
FAIL  gpu1 ecc_errors: 3 corrected, 1 uncorrected since the driver loaded; lifetime 10 corrected, 2 uncorrected
      fix: drain the GPU and check nvidia-smi -i 1 -q -d ECC,ROW_REMAPPER; a reset remaps the rows, repeated errors mean a failing board
WARN  gpu1 mig: enabled: CUDA sees MIG slices, not the whole GPU
      fix: sudo nvidia-smi -i 1 -mig 0 (then reset the GPU), unless a slice is what you benchmark
WARN  gpu1 pcie_link: Gen4 x8, max Gen5 x16: fewer lanes than the link has
      fix: check the slot and riser (lspci -vv: LnkSta against LnkCap); reseat the card
WARN  gpu1 nvlink: 17 of 18 links up; down: 3
      fix: nvidia-smi nvlink -s -i 1; on NVSwitch systems check that nvidia-fabricmanager runs
WARN  gpu1 gpu_processes: 2 processes hold GPU memory: pid 100 (?) 1.0 GiB, pid 200 (?) memory unknown
      fix: stop those that are not the server under test, or give the server a GPU of its own (CUDA_VISIBLE_DEVICES)
13 PASS, 7 WARN, 2 FAIL, 0 N/A
)");
  EXPECT_EQ(doctor_exit_code(result), 1);
  const auto j = checks_json(result);
  EXPECT_EQ(j.at("counts").at("FAIL"), 2);
  EXPECT_EQ(j.at("checks").at(3).at("name"), "persistence_mode");
  EXPECT_EQ(j.at("checks").at(3).at("status"), "PASS");
}

TEST_F(DoctorNvmlTest, PcieGenBelowMaxIsFineOnlyWhenIdle) {
  write_script(R"(devices 1
row 0 pcie_gen=1 pcie_width=16 max_pcie_gen=5 max_pcie_width=16 throttle=0x1
)");
  auto result = checks(LLMBENCH_FAKE_NVML_PATH);
  ASSERT_EQ(result.size(), 12U);
  EXPECT_EQ(result[9].name, "pcie_link");
  EXPECT_EQ(result[9].status, CheckStatus::Pass);
  EXPECT_EQ(result[9].detail,
            "Gen1 x16, max Gen5 x16: the GPU is idle, and an idle GPU lowers its link speed");
  write_script(R"(devices 1
row 0 pcie_gen=3 pcie_width=16 max_pcie_gen=5 max_pcie_width=16 throttle=0
)");
  result = checks(LLMBENCH_FAKE_NVML_PATH);
  ASSERT_EQ(result.size(), 12U);
  EXPECT_EQ(result[9].status, CheckStatus::Warn);
  EXPECT_EQ(result[9].detail, "Gen3 x16, max Gen5 x16 while busy");
  // Nothing else scripted: the lines say not supported, none pretends to pass.
  EXPECT_EQ(result[3].status, CheckStatus::NotApplicable);  // persistence_mode
  EXPECT_EQ(result[3].detail, "not supported on this GPU");
  EXPECT_EQ(result[10].detail, "no NVLink on this GPU");
  EXPECT_EQ(result[11].detail, "no process holds GPU memory");
}

TEST_F(DoctorNvmlTest, ManyProcessesAreAllListed) {
  std::string script = "devices 1\nrow 0 mem_total=100\n";
  for (int pid = 1; pid <= 70; ++pid) script += "proc 0 " + std::to_string(pid) + " 0\n";
  write_script(script);
  std::string message;
  std::vector<std::string> notes;
  const auto nvml = Nvml::open(LLMBENCH_FAKE_NVML_PATH, message, notes);
  ASSERT_NE(nvml, nullptr) << message;
  const GpuHealth h = nvml->health(0, (dir_ / "proc").string());
  ASSERT_TRUE(h.processes.has_value());  // more than the first buffer of 64 holds
  EXPECT_EQ(h.processes->size(), 70U);
  EXPECT_EQ(h.processes->back().pid, 70U);
}

TEST_F(DoctorNvmlTest, MissingFunctionIsNamedAndTheRestChecked) {
  const auto result = checks(LLMBENCH_FAKE_NVML_NO_PERSISTENCE_PATH);
  ASSERT_EQ(result.size(), 22U);
  EXPECT_EQ(result[3].name, "persistence_mode");
  EXPECT_EQ(result[3].status, CheckStatus::NotApplicable);
  EXPECT_EQ(result[3].detail, "this NVML has no nvmlDeviceGetPersistenceMode (an older driver)");
  EXPECT_EQ(result[4].name, "clocks");
  EXPECT_EQ(result[4].status, CheckStatus::Pass);
  EXPECT_EQ(result[21].status, CheckStatus::Warn);  // gpu1's processes still listed
}

TEST(DoctorChecks, WithoutNvidiaEveryGpuLineIsNotApplicable) {
  std::string message;
  std::vector<std::string> notes;
  ASSERT_EQ(Nvml::open("/nonexistent/libnvidia-ml.so.1", message, notes), nullptr);
  const auto result = no_nvml_checks(message);
  ASSERT_EQ(result.size(), 2 + kGpuCheckNames.size());
  for (const auto& c : result) EXPECT_EQ(c.status, CheckStatus::NotApplicable) << c.name;
  EXPECT_EQ(result[0].detail.rfind("no NVIDIA driver: ", 0), 0U);
  EXPECT_NE(result[0].detail.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
  EXPECT_EQ(result[2].subject, "gpu");
  EXPECT_EQ(result[2].name, "device");
  EXPECT_EQ(doctor_exit_code(result), 0);
}

TEST(DoctorChecks, HostFactsFromAFakeSysTree) {
  const fs::path root = fs::temp_directory_path() / ("doctor-host-" + std::to_string(::getpid()));
  const auto cpu = root / "sys/devices/system/cpu";
  for (const auto& [name, governor] :
       {std::pair{"cpu0", "powersave"}, {"cpu1", "performance"}, {"cpu12", "powersave"}}) {
    fs::create_directories(cpu / name / "cpufreq");
    std::ofstream(cpu / name / "cpufreq/scaling_governor") << governor << "\n";
  }
  fs::create_directories(cpu / "cpufreq");  // not a CPU
  fs::create_directories(cpu / "cpuidle");
  fs::create_directories(root / "sys/kernel/mm/transparent_hugepage");
  std::ofstream(root / "sys/kernel/mm/transparent_hugepage/enabled") << "always [madvise] never\n";
  HostFacts f = read_host_facts(root, 64, true);
  fs::remove_all(root);
  EXPECT_EQ(f.governors, (std::map<std::string, int>{{"performance", 1}, {"powersave", 2}}));
  EXPECT_EQ(f.transparent_hugepages, "madvise");
  EXPECT_FALSE(std::isnan(f.open_files_soft));
  f.open_files_soft = 1024;
  f.open_files_hard = 524288;
  EXPECT_EQ(
      format_checks_text(host_checks(f)),
      R"(WARN  host cpu_governor: performance on 1, powersave on 2 of 3 CPUs: CPUs that change speed make the client's timing jitter
      fix: sudo cpupower frequency-set -g performance
PASS  host transparent_hugepages: madvise
PASS  host open_files: soft limit 1024, enough for --max-concurrency 64
2 PASS, 1 WARN, 0 FAIL, 0 N/A
)");
}

TEST(DoctorChecks, OpenFilesAgainstThePlannedConcurrency) {
  HostFacts f{.governors = {{"performance", 8}},
              .transparent_hugepages = "always",
              .open_files_soft = 1024,
              .open_files_hard = 4096,
              .planned_concurrency = 5000,
              .concurrency_given = true};
  auto lines = host_checks(f);
  EXPECT_EQ(lines[0].detail, "performance on all 8 CPUs");
  EXPECT_EQ(lines[1].status, CheckStatus::Warn);
  EXPECT_EQ(lines[2].status, CheckStatus::Fail);
  EXPECT_EQ(lines[2].detail,
            "hard limit 4096 below the 5128 needed for --max-concurrency 5000 (+128 spare)");
  f.planned_concurrency = 200;
  f.concurrency_given = false;
  f.open_files_soft = 256;
  f.open_files_hard = std::numeric_limits<double>::infinity();
  lines = host_checks(f);
  EXPECT_EQ(lines[2].status, CheckStatus::Pass);
  EXPECT_EQ(lines[2].detail,
            "soft limit 256, hard unlimited: llmbench run raises the soft limit to the hard "
            "one, enough for 200 requests at once (--max-concurrency not given: the default "
            "--num-prompts)");
  f.governors.clear();
  f.transparent_hugepages.clear();
  lines = host_checks(f);
  EXPECT_EQ(lines[0].status, CheckStatus::NotApplicable);
  EXPECT_EQ(lines[1].status, CheckStatus::NotApplicable);
}

ServerProbe good_probe() {
  return ServerProbe{.given = true,
                     .base_url = "http://127.0.0.1:8000",
                     .backend = "vllm",
                     .models_path = "/v1/models",
                     .models_status = 200,
                     .models = {"ds2"},
                     .model = "ds2",
                     .request_sent = true,
                     .ttft_ms = 12.34,
                     .e2el_ms = 100,
                     .decode_tokens_per_s = 350,
                     .output_tokens = 32,
                     .usage_sent = true,
                     .server_prompt_tokens = 15,
                     .local_prompt_tokens = 14,
                     .tokenizer = "deepseek-v3",
                     .metrics_url = "http://127.0.0.1:8000/metrics",
                     .metrics_status = 200,
                     .metric_families = 40,
                     .engine = Engine::Vllm};
}

TEST(DoctorChecks, ServerLinesFromAProbe) {
  EXPECT_EQ(format_checks_text(server_checks(good_probe())),
            R"(PASS  server reachable: http://127.0.0.1:8000 answers
PASS  server models: /v1/models lists ds2
PASS  server stream: TTFT 12.3 ms, 32 output tokens in 100.0 ms, decode 350.0 tokens/s
PASS  server usage: sends usage (prompt 15, completion 32 tokens)
WARN  server prompt_tokens: server counts 15 prompt tokens, --tokenizer deepseek-v3 counts 14 (+1)
      fix: point --tokenizer at the served model's tokenizer (a difference of 1 is often a BOS token only one side adds)
PASS  server metrics: 40 metric families; looks like vllm
5 PASS, 1 WARN, 0 FAIL, 0 N/A
)");
  ServerProbe p = good_probe();
  p.model_given = true;
  p.model = "ds3";
  p.engine = Engine::Unknown;
  auto lines = server_checks(p);
  EXPECT_EQ(lines[1].status, CheckStatus::Warn);  // answered anyway, as llama.cpp does
  EXPECT_EQ(lines[1].detail,
            "--model ds3 is not listed, yet the server answered it (a single-model server takes "
            "any name); /v1/models lists ds2");
  EXPECT_EQ(lines[5].status, CheckStatus::Warn);
  p.request_error = "http_4xx (HTTP 404): model not found";
  lines = server_checks(p);
  EXPECT_EQ(lines[1].status, CheckStatus::Fail);
  EXPECT_EQ(lines[1].detail, "--model ds3 is not served; /v1/models lists ds2");
  EXPECT_EQ(lines[2].status, CheckStatus::Fail);
  EXPECT_EQ(lines[3].status, CheckStatus::NotApplicable);
}

TEST(DoctorChecks, UnreachableOrAbsentServer) {
  ServerProbe p = good_probe();
  p.unreachable = "GET /v1/models failed: connection refused";
  auto lines = server_checks(p);
  ASSERT_EQ(lines.size(), 6U);
  EXPECT_EQ(lines[0].status, CheckStatus::Fail);
  for (std::size_t i = 1; i < lines.size(); ++i)
    EXPECT_EQ(lines[i].detail, "the server is unreachable") << lines[i].name;
  lines = server_checks(ServerProbe{});
  ASSERT_EQ(lines.size(), 6U);
  for (const auto& c : lines) EXPECT_EQ(c.status, CheckStatus::NotApplicable);
  EXPECT_EQ(lines[5].name, "metrics");
}

}  // namespace
}  // namespace llmbench::telemetry
