// The GPU sampler (telemetry/nvml.hpp) against the fake NVML (fake_nvml.cpp): every field, the
// throttle-reason decoding, the energy and J/token arithmetic (gpu_summary.hpp) exactly, a
// library that lacks a symbol, a missing library, a failing nvmlInit_v2 and a device list.

#include "llmbench/telemetry/nvml.hpp"

#include "llmbench/telemetry/gpu_summary.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace llmbench::telemetry {
namespace {

constexpr const char* kScript = R"(devices 2
driver 550.54.15
cuda 12040
name 0 NVIDIA H200
name 1 NVIDIA H200 NVL
row 0 mem_total=150754820096 mem_used=1000000000 mem_reserved=645922816 util_gpu=0 util_mem=0 power_mw=100000 energy_mj=5000000 sm_clock=1980 mem_clock=3201 max_sm_clock=1980 max_mem_clock=3201 throttle=0x1 temp=40 pcie_gen=5 pcie_width=16 max_pcie_gen=5 max_pcie_width=16 pcie_tx=100 pcie_rx=200 ecc_corr=0 ecc_uncorr=0 mig=0
row 0 mem_used=80000000000 util_gpu=95 util_mem=60 power_mw=650000 energy_mj=5100000 sm_clock=1755 throttle=0x4 temp=70 pcie_tx=5000 pcie_rx=9000
row 0 mem_used=90000000000 util_gpu=99 util_mem=70 power_mw=700000 energy_mj=5250000 sm_clock=1410 throttle=0x24 temp=85 pcie_gen=4 ecc_corr=2
row 0 mem_used=2000000000 util_gpu=0 power_mw=- energy_mj=5300000 sm_clock=1980 throttle=0x201 temp=60
row 1 mem_total=100 mem_used=10 util_gpu=1 util_mem=1 power_mw=50000 energy_mj=7000 sm_clock=900 mem_clock=1000 max_sm_clock=1800 max_mem_clock=2000 throttle=0 temp=30 pcie_gen=3 pcie_width=8 max_pcie_gen=4 max_pcie_width=16 pcie_tx=1 pcie_rx=2 ecc_corr=0 ecc_uncorr=0 mig=1
)";

/// Writes the script, points the fake at it, and holds the fake loaded so the test can move its
/// step (`llmbench_fake_nvml_set_step`).
class FakeNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    script_ = std::filesystem::temp_directory_path() /
              ("fake-nvml-" + std::to_string(::getpid()) + ".txt");
    write_script(kScript);
    handle_ = dlopen(LLMBENCH_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    set_step_ = reinterpret_cast<void (*)(unsigned)>(dlsym(handle_, "llmbench_fake_nvml_set_step"));
    ASSERT_NE(set_step_, nullptr);
    set_step_(0);
  }
  void TearDown() override {
    if (handle_ != nullptr)
      dlclose(handle_);
    std::filesystem::remove(script_);
    ::unsetenv("LLMBENCH_FAKE_NVML_SCRIPT");
  }
  void write_script(const std::string& text) {
    std::ofstream(script_) << text;
    ::setenv("LLMBENCH_FAKE_NVML_SCRIPT", script_.c_str(), 1);
  }

  std::filesystem::path script_;
  void* handle_ = nullptr;
  void (*set_step_)(unsigned) = nullptr;
};

NvmlOptions fake_options(std::vector<unsigned int> devices = {}) {
  return NvmlOptions{.library_path = LLMBENCH_FAKE_NVML_PATH, .devices = std::move(devices)};
}

TEST(ThrottleReasons, DecodedByName) {
  EXPECT_TRUE(decode_throttle_reasons(0).empty());
  EXPECT_EQ(decode_throttle_reasons(0x24),
            (std::vector<std::string>{"sw_power_cap", "sw_thermal_slowdown"}));
  EXPECT_EQ(decode_throttle_reasons(0x1ff).size(), 9U);
  EXPECT_EQ(decode_throttle_reasons(0x1ff).back(), "display_clock_setting");
  EXPECT_EQ(decode_throttle_reasons(0xC08),
            (std::vector<std::string>{"hw_slowdown", "other(0xc00)"}));
  for (std::size_t i = 0; i < kThrottleReasons.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kThrottleReasons[i].reason), i);
}

TEST_F(FakeNvmlTest, EveryFieldOfEveryStep) {
  GpuSampler sampler(fake_options());
  for (unsigned step = 0; step < 4; ++step) {
    set_step_(step);
    sampler.sample_once();
  }
  ASSERT_TRUE(sampler.available()) << sampler.message();
  EXPECT_TRUE(sampler.notes().empty());
  EXPECT_EQ(sampler.driver_version(), "550.54.15");
  EXPECT_EQ(sampler.cuda_driver_version(), 12040);
  ASSERT_EQ(sampler.series().size(), 2U);
  const GpuSeries& g = sampler.series()[0];
  EXPECT_EQ(g.info.index, 0U);
  EXPECT_EQ(g.info.name, "NVIDIA H200");
  EXPECT_EQ(g.info.memory_total_bytes, 150754820096.0);
  EXPECT_EQ(g.info.max_sm_clock_mhz, 1980);
  EXPECT_EQ(g.info.max_mem_clock_mhz, 3201);
  EXPECT_EQ(g.info.max_pcie_gen, 5);
  EXPECT_EQ(g.info.max_pcie_width, 16);
  EXPECT_EQ(g.info.mig_enabled, false);
  EXPECT_EQ(sampler.series()[1].info.name, "NVIDIA H200 NVL");
  EXPECT_EQ(sampler.series()[1].info.mig_enabled, true);
  ASSERT_EQ(g.samples.size(), 4U);
  const GpuSample& s = g.samples[2];
  EXPECT_EQ(s.memory_used_bytes,
            9e10);  // nvmlDeviceGetMemoryInfo_v2: the 616 MiB reserved left out
  EXPECT_EQ(s.sm_util_pct, 99);
  EXPECT_EQ(s.mem_util_pct, 70);
  EXPECT_EQ(s.power_w, 700);
  EXPECT_EQ(s.energy_j, 5250);
  EXPECT_EQ(s.sm_clock_mhz, 1410);
  EXPECT_EQ(s.mem_clock_mhz, 3201);  // kept from step 0
  EXPECT_EQ(s.throttle_reasons, 0x24U);
  EXPECT_EQ(s.temperature_c, 85);
  EXPECT_EQ(s.pcie_gen, 4);
  EXPECT_EQ(s.pcie_width, 16);
  EXPECT_EQ(s.pcie_tx_kbps, 5000);
  EXPECT_EQ(s.pcie_rx_kbps, 9000);
  EXPECT_EQ(s.ecc_corrected, 2);
  EXPECT_EQ(s.ecc_uncorrected, 0);
  EXPECT_TRUE(std::isnan(g.samples[3].power_w));  // "not supported" at that step
  EXPECT_EQ(g.samples[3].energy_j, 5300);
  for (std::size_t i = 1; i < g.samples.size(); ++i)
    EXPECT_GE(g.samples[i].t_ns, g.samples[i - 1].t_ns);
}

TEST_F(FakeNvmlTest, SummaryArithmeticIsExact) {
  GpuSampler sampler(fake_options({0}));
  for (unsigned step = 0; step < 4; ++step) {
    set_step_(step);
    sampler.sample_once();
  }
  ASSERT_EQ(sampler.series().size(), 1U);
  const auto& samples = sampler.series()[0].samples;
  const auto dt = [&](std::size_t i) { return ns_to_s(samples[i + 1].t_ns - samples[i].t_ns); };
  const GpuTelemetrySummary sum = summarize_gpus(sampler.series(), 600);
  const GpuDeviceSummary& d = sum.devices.at(0);
  EXPECT_EQ(d.peak_memory_used_bytes, 9e10);
  EXPECT_EQ(d.power_w.max, 700);
  EXPECT_DOUBLE_EQ(d.power_w.mean, (100.0 + 650 + 700) / 3);
  EXPECT_EQ(d.sm_clock_mhz.min, 1410);
  EXPECT_EQ(d.temperature_c.max, 85);
  EXPECT_EQ(d.pcie_gen_min, 4);
  EXPECT_EQ(d.ecc_corrected_increase, 2);
  EXPECT_EQ(d.energy_counter_j, 300);  // 5300 J − 5000 J
  EXPECT_EQ(d.energy_j, 300);
  // The trapezoid over the pairs with two powers (the last sample has none).
  EXPECT_DOUBLE_EQ(d.energy_integrated_j, (100.0 + 650) / 2 * dt(0) + (650.0 + 700) / 2 * dt(1));
  EXPECT_EQ(sum.energy_j, 300);
  EXPECT_EQ(sum.joules_per_output_token, 0.5);
  // Each interval takes the mask read at its start: 0x1, 0x4, 0x24; the last sample none.
  ASSERT_EQ(d.throttled.size(), kThrottleReasons.size());
  EXPECT_EQ(d.throttled[0].reason, "gpu_idle");
  EXPECT_DOUBLE_EQ(d.throttled[0].seconds, dt(0));
  EXPECT_DOUBLE_EQ(d.throttled[2].seconds, dt(1) + dt(2));  // sw_power_cap
  EXPECT_DOUBLE_EQ(d.throttled[5].seconds, dt(2));          // sw_thermal_slowdown
  EXPECT_EQ(d.throttled[3].seconds, 0);                     // hw_slowdown never
  EXPECT_DOUBLE_EQ(d.throttled_any_except_idle_s, dt(1) + dt(2));
  const auto j = gpu_telemetry_json(sampler, sum, samples[0].t_ns);
  EXPECT_EQ(j["available"], true);
  EXPECT_EQ(j["joules_per_output_token"], 0.5);
  EXPECT_EQ(j["devices"][0]["series"]["t_ms"][0], 0.0);
  EXPECT_EQ(j["devices"][0]["series"]["throttle_reasons"][3], 0x201);
  EXPECT_TRUE(j["devices"][0]["series"]["power_w"][3].is_null());
  EXPECT_EQ(j["devices"][0]["summary"]["energy_counter_j"], 300.0);
  EXPECT_EQ(j["devices"][0]["info"]["name"], "NVIDIA H200");
}

TEST(GpuSummary, IntegratesPowerAndThrottleTimeOverFixedTimes) {
  GpuSeries s;
  const auto at = [](double seconds, double watts, std::uint64_t mask) {
    return GpuSample{
        .t_ns = static_cast<TimeNs>(seconds * 1e9), .power_w = watts, .throttle_reasons = mask};
  };
  s.samples = {at(0, 100, 0x0), at(1, 300, 0x8), at(3, 300, 0x8), at(3.5, 500, 0x0)};
  const auto d = summarize_gpu(s);
  EXPECT_EQ(d.energy_integrated_j, 200 + 600 + 200);  // trapezoids: 1 s, 2 s, 0.5 s
  EXPECT_TRUE(std::isnan(d.energy_counter_j));        // no energy counter in these samples
  EXPECT_EQ(d.energy_j, 1000);                        // so the integral stands in
  EXPECT_EQ(d.throttled[3].seconds, 2.5);             // hw_slowdown from 1 s to 3.5 s
  EXPECT_EQ(d.throttled_any_except_idle_s, 2.5);
  EXPECT_EQ(d.span_s, 3.5);
  EXPECT_TRUE(std::isnan(summarize_gpus({s}, 0).joules_per_output_token));
  EXPECT_EQ(summarize_gpus({s}, 4000).joules_per_output_token, 0.25);
}

TEST_F(FakeNvmlTest, AMissingSymbolLeavesItsFieldsOutAndSamplesTheRest) {
  GpuSampler sampler(
      NvmlOptions{.library_path = LLMBENCH_FAKE_NVML_NO_ENERGY_PATH, .devices = {0}});
  sampler.sample_once();
  sampler.sample_once();
  ASSERT_TRUE(sampler.available()) << sampler.message();
  ASSERT_EQ(sampler.notes().size(), 1U);
  EXPECT_EQ(sampler.notes()[0],
            "NVML has no nvmlDeviceGetTotalEnergyConsumption: the fields it gives are not "
            "sampled");
  const auto& s = sampler.series().at(0).samples.at(1);
  EXPECT_TRUE(std::isnan(s.energy_j));
  EXPECT_EQ(s.power_w, 100);
  // No nvmlDeviceGetMemoryInfo_v2 either (an older driver): total − free, reserved memory included.
  EXPECT_EQ(s.memory_used_bytes, 1e9 + 645922816);
  EXPECT_EQ(s.throttle_reasons, 0x1U);
  const auto d = summarize_gpu(sampler.series()[0]);
  EXPECT_TRUE(std::isnan(d.energy_counter_j));
  EXPECT_EQ(d.energy_j, d.energy_integrated_j);
  EXPECT_DOUBLE_EQ(d.energy_j, 100 * ns_to_s(sampler.series()[0].samples[1].t_ns -
                                             sampler.series()[0].samples[0].t_ns));
}

TEST(GpuSampler, AMissingLibraryTurnsSamplingOffWithOneMessage) {
  GpuSampler sampler(NvmlOptions{.library_path = "/nonexistent/libnvidia-ml.so.1"});
  sampler.start();
  sampler.sample_once();
  sampler.stop();
  EXPECT_FALSE(sampler.available());
  EXPECT_EQ(
      sampler.message().rfind("GPU telemetry off: cannot open /nonexistent/libnvidia-ml.so.1 (", 0),
      0U)
      << sampler.message();
  EXPECT_TRUE(sampler.series().empty());
  const auto j = gpu_telemetry_json(sampler, summarize_gpus(sampler.series(), 10), 0);
  EXPECT_EQ(j["available"], false);
  EXPECT_TRUE(j["energy_j"].is_null());
}

TEST_F(FakeNvmlTest, AFailingInitIsReportedWithNvmlsText) {
  write_script("init_error 9\ndevices 1\n");
  GpuSampler sampler(fake_options());
  sampler.sample_once();
  EXPECT_FALSE(sampler.available());
  EXPECT_EQ(sampler.message(), "GPU telemetry off: nvmlInit_v2 failed: Driver Not Loaded (code 9)");
}

TEST_F(FakeNvmlTest, DeviceListPicksAndNamesTheMissing) {
  GpuSampler sampler(fake_options({1, 5}));
  sampler.sample_once();
  ASSERT_EQ(sampler.series().size(), 1U);
  EXPECT_EQ(sampler.series()[0].info.index, 1U);
  EXPECT_EQ(sampler.series()[0].samples.at(0).sm_clock_mhz, 900);
  ASSERT_EQ(sampler.notes().size(), 1U);
  EXPECT_EQ(sampler.notes()[0], "--gpu-devices: GPU 5 does not exist (NVML sees 2)");
}

TEST_F(FakeNvmlTest, TheThreadSamplesFromStartToStop) {
  GpuSampler sampler(NvmlOptions{.library_path = LLMBENCH_FAKE_NVML_PATH,
                                 .interval = std::chrono::milliseconds(5)});
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  sampler.stop();
  sampler.stop();  // idempotent
  ASSERT_EQ(sampler.series().size(), 2U);
  const auto& samples = sampler.series()[0].samples;
  ASSERT_GE(samples.size(), 2U);  // one at start, one at stop
  for (const auto& s : samples) EXPECT_EQ(s.power_w, 100);
}

}  // namespace
}  // namespace llmbench::telemetry
