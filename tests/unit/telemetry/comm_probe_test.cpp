// `llmbench probe comm`'s sweep (telemetry/nccl.hpp) against the fake CUDA runtime and NCCL
// (fake_cudart.cpp, fake_nccl.cpp): every collective's sizes, counts and scripted times come back
// exactly; spikes give the p99 that order statistics say; FP8 is skipped where NCCL or the GPU
// lacks it; a failing call keeps what was measured and frees everything; and without a runtime,
// without a GPU or with one GPU the probe says what it cannot measure.

#include "llmbench/core/error.hpp"
#include "llmbench/telemetry/nccl.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>

namespace llmbench::telemetry {
namespace {

/// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [k, v] : vars) {
      const char* old = std::getenv(k);
      saved_[k] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
      if (v != nullptr) {
        setenv(k, v, 1);
      } else {
        unsetenv(k);
      }
    }
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_) {
      if (v) {
        setenv(k.c_str(), v->c_str(), 1);
      } else {
        unsetenv(k.c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ScopedEnv(ScopedEnv&&) = delete;
  ScopedEnv& operator=(ScopedEnv&&) = delete;

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

/// A timing script in a temporary file.
class Script {
 public:
  explicit Script(const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("llmbench_fake_nccl_" + std::to_string(getpid()) + "_" + std::to_string(counter_++) +
               ".txt")) {
    std::ofstream(path_) << text;
  }
  ~Script() { std::filesystem::remove(path_); }
  Script(const Script&) = delete;
  Script& operator=(const Script&) = delete;
  Script(Script&&) = delete;
  Script& operator=(Script&&) = delete;
  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

CommProbeOptions fake_options() {
  CommProbeOptions o;
  o.cudart_libraries = {LLMBENCH_FAKE_CUDART_PATH};
  o.nccl_libraries = {LLMBENCH_FAKE_NCCL_PATH};
  o.min_bytes = 4096;
  o.max_bytes = 1 << 20;
  o.iters = 10;
  o.warmup_iters = 2;
  return o;
}

/// A test hook of a fake library already loaded by the probe (the same path gives the same
/// handle).
template <class Fn>
Fn hook(const char* library, const char* name) {
  void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(h, nullptr);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): dlsym result to a function
  return reinterpret_cast<Fn>(dlsym(h, name));
}

std::string open_error(const CommProbeOptions& o) {
  try {
    (void)CommProbe::open(o);
  } catch (const Exception& e) {
    return e.what();
  }
  return "";
}

double scripted(double latency_us, double gb_s, std::int64_t bytes) {
  return latency_us + static_cast<double>(bytes) / (gb_s * 1e3);
}

TEST(CommProbe, SizesAndNcclVersionStrings) {
  EXPECT_EQ(sweep_sizes(4096, 1 << 30).size(), 19U);
  EXPECT_EQ(sweep_sizes(4096, 1 << 30).back(), 1 << 30);
  EXPECT_EQ(sweep_sizes(4096, 12288), (std::vector<std::int64_t>{4096, 8192}));
  EXPECT_EQ(nccl_version_string(22105), "2.21.5");
  EXPECT_EQ(nccl_version_string(22403), "2.24.3");
  EXPECT_EQ(nccl_version_string(2804), "2.8.4");
}

TEST(CommProbe, WithoutTheCudaRuntimeItSaysWhatItCannotMeasure) {
  CommProbeOptions o = fake_options();
  o.cudart_libraries = {"/nonexistent/libcudart.so.12"};
  const std::string why = open_error(o);
  EXPECT_NE(why.find("probe comm: no CUDA runtime on this machine"), std::string::npos) << why;
  EXPECT_NE(why.find("/nonexistent/libcudart.so.12"), std::string::npos) << why;
  EXPECT_NE(why.find("all-reduce, all-gather, reduce-scatter and all-to-all need the CUDA "
                     "runtime, NCCL and at least 2 GPUs; nothing was measured"),
            std::string::npos)
      << why;
}

TEST(CommProbe, WithoutAGpuItSaysSo) {
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "0"}};
  const std::string why = open_error(fake_options());
  EXPECT_NE(why.find("no usable GPU (cudaGetDeviceCount: no CUDA-capable device is detected "
                     "(CUDA error 100) of " LLMBENCH_FAKE_CUDART_PATH ")"),
            std::string::npos)
      << why;
}

TEST(CommProbe, OnOneGpuItSaysWhatItCannotMeasure) {
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "1"}};
  const std::string why = open_error(fake_options());
  EXPECT_NE(why.find("this machine has one GPU (0: Fake H100): collectives move data between "
                     "GPUs, so not one of them can be measured here"),
            std::string::npos)
      << why;
  // Choosing one GPU of several is a usage error.
  const ScopedEnv four{{"LLMBENCH_FAKE_CUDA_DEVICES", "4"}};
  CommProbeOptions o = fake_options();
  o.devices = {2};
  EXPECT_EQ(open_error(o),
            "--gpu-devices: chose one GPU (2: Fake H100) of 4: collectives move data between "
            "GPUs; choose at least 2");
}

TEST(CommProbe, BadDeviceListsAndOptionsNameTheFlag) {
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "4"}};
  CommProbeOptions o = fake_options();
  o.devices = {0, 9};
  EXPECT_NE(open_error(o).find("--gpu-devices: GPU 9 does not exist: this machine has 4 (0 to 3)"),
            std::string::npos);
  o.devices = {0, 1};
  o.gpu_counts = {3};
  EXPECT_NE(open_error(o).find("--gpu-counts: 3 GPUs: must be between 2 and the 2 chosen"),
            std::string::npos);
  o = fake_options();
  o.iters = 0;
  EXPECT_NE(open_error(o).find("--iters"), std::string::npos);
  o = fake_options();
  o.max_bytes = 1024;
  EXPECT_NE(open_error(o).find("--max-bytes: must be ≥ --min-bytes (4096), got 1024"),
            std::string::npos);
}

TEST(CommProbe, NcclWithoutSendIsNamed) {
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "2"}};
  CommProbeOptions o = fake_options();
  o.nccl_libraries = {LLMBENCH_FAKE_NCCL_NO_SEND_PATH};
  EXPECT_NE(open_error(o).find("has no ncclSend"), std::string::npos);
}

TEST(CommProbe, EveryCollectiveSizeAndCountComesBackExactly) {
  const Script script(
      "all_reduce * 20 100\n"
      "all_gather * 5 200\n"
      "reduce_scatter 4 6 150\n"
      "reduce_scatter * 7 120\n"
      "all_to_all * 30 50\n");
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "4"},
                      {"LLMBENCH_FAKE_NCCL_SCRIPT", script.path().c_str()},
                      {"NCCL_NVLS_ENABLE", nullptr}};
  const auto probe = CommProbe::open(fake_options());
  EXPECT_EQ(probe->gpu_counts(), (std::vector<int>{2, 4}));
  EXPECT_EQ(probe->setup().devices.size(), 4U);
  EXPECT_EQ(probe->setup().nccl_version, "2.24.3");
  EXPECT_EQ(probe->setup().cuda_runtime_version, 12040);
  // NVLink multicast is off unless the user asked: set before NCCL made its communicators.
  ASSERT_NE(std::getenv("NCCL_NVLS_ENABLE"), nullptr);
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
  int groups = 0;
  const CommProbeResult r = probe->run([&](std::span<const CollectiveTiming> g) {
    ++groups;
    EXPECT_EQ(g.size(), 9U);
  });
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(groups, 8);
  ASSERT_EQ(r.timings.size(), 2U * 4U * 9U);  // GPU counts × collectives × 4 KB..1 MB
  const auto nvls = hook<const char* (*)()>(LLMBENCH_FAKE_NCCL_PATH, "llmbench_fake_nccl_nvls");
  EXPECT_STREQ(nvls(), "0");
  const std::map<Collective, std::pair<double, double>> at2{{Collective::AllReduce, {20, 100}},
                                                            {Collective::AllGather, {5, 200}},
                                                            {Collective::ReduceScatter, {7, 120}},
                                                            {Collective::AllToAll, {30, 50}}};
  for (const auto& t : r.timings) {
    auto [lat, bw] = at2.at(t.collective);
    if (t.collective == Collective::ReduceScatter && t.gpus == 4)
      std::tie(lat, bw) = std::pair{6.0, 150.0};  // the line for 4 GPUs comes first
    // Sizes divide evenly here, so S is the target and the count follows nccl-tests.
    const std::int64_t per = t.collective == Collective::AllReduce ? 1 : t.gpus;
    EXPECT_EQ(t.count * 2 * per, t.bytes);
    EXPECT_EQ(t.iters, 10);
    EXPECT_NEAR(t.mean_us, scripted(lat, bw, t.bytes), 1e-3) << to_string(t.collective);
    EXPECT_NEAR(t.p99_us, t.mean_us, 1e-3);
    EXPECT_NEAR(t.min_us, t.mean_us, 1e-3);
    const double algbw = static_cast<double>(t.bytes) / (t.mean_us * 1e3);
    EXPECT_NEAR(t.algbw_gb_s(), algbw, 1e-9);
    const double factor =
        (t.collective == Collective::AllReduce ? 2.0 : 1.0) * (t.gpus - 1) / t.gpus;
    EXPECT_NEAR(t.busbw_gb_s(), algbw * factor, 1e-9);
  }
  // The first row: all_reduce bf16 on 2 GPUs, 4 KB = 2048 elements in 20.04096 µs.
  EXPECT_EQ(r.timings.front().collective, Collective::AllReduce);
  EXPECT_EQ(r.timings.front().gpus, 2);
  EXPECT_EQ(r.timings.front().count, 2048);
  EXPECT_NEAR(r.timings.front().mean_us, 20.04096, 1e-4);
}

TEST(CommProbe, SpikesGiveTheP99OfOrderStatistics) {
  const Script script("all_reduce * 10 100\nspike all_reduce 10 3\n");
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "2"},
                      {"LLMBENCH_FAKE_NCCL_SCRIPT", script.path().c_str()}};
  CommProbeOptions o = fake_options();
  o.collectives = {Collective::AllReduce};
  o.max_bytes = 8192;
  o.iters = 20;
  o.warmup_iters = 0;
  const CommProbeResult r = CommProbe::open(o)->run();
  ASSERT_EQ(r.timings.size(), 2U);
  for (const auto& t : r.timings) {
    const double base = scripted(10, 100, t.bytes);
    // Calls 10 and 20 take 3×: mean (18 + 2·3)/20 = 1.2×; p99 between the two largest (3×).
    EXPECT_NEAR(t.mean_us, 1.2 * base, 1e-3);
    EXPECT_NEAR(t.p99_us, 3 * base, 1e-3);
    EXPECT_NEAR(t.max_us, 3 * base, 1e-3);
    EXPECT_NEAR(t.min_us, base, 1e-3);
  }
}

TEST(CommProbe, Fp8IsMeasuredOnlyWhereNcclAndTheGpuHaveIt) {
  CommProbeOptions o = fake_options();
  o.collectives = {Collective::AllReduce, Collective::AllToAll};
  o.dtypes = {CommDtype::Bf16, CommDtype::Fp8E4M3};
  o.max_bytes = 8192;
  {
    const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "2"}};
    const CommProbeResult r = CommProbe::open(o)->run();
    EXPECT_TRUE(r.notes.empty());
    ASSERT_EQ(r.timings.size(), 8U);
    EXPECT_EQ(r.timings[2].dtype, CommDtype::Fp8E4M3);
    EXPECT_EQ(r.timings[2].count, 4096);  // one byte per element
    EXPECT_EQ(r.timings[2].bytes, 4096);
  }
  {
    const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "2"},
                        {"LLMBENCH_FAKE_NCCL_VERSION", "22105"}};
    const CommProbeResult r = CommProbe::open(o)->run();
    EXPECT_EQ(r.timings.size(), 4U);
    ASSERT_EQ(r.notes.size(), 2U);
    EXPECT_EQ(r.notes[0],
              "all_reduce on 2 GPUs not measured: fp8_e4m3: NCCL 2.21.5 has no such type (2.24.0 "
              "and later)");
  }
  {
    const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "2"}, {"LLMBENCH_FAKE_CUDA_CC", "80"}};
    const CommProbeResult r = CommProbe::open(o)->run();
    EXPECT_EQ(r.timings.size(), 4U);
    ASSERT_EQ(r.notes.size(), 2U);
    EXPECT_EQ(r.notes[1],
              "all_to_all on 2 GPUs not measured: fp8_e4m3: GPU 0 has compute capability 8.0 "
              "(NCCL needs 9.0)");
  }
}

TEST(CommProbe, SizesTooSmallToSplitAreNoted) {
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "8"}};
  CommProbeOptions o = fake_options();
  o.collectives = {Collective::AllGather};
  o.gpu_counts = {8};
  o.min_bytes = 64;
  o.max_bytes = 256;
  const CommProbeResult r = CommProbe::open(o)->run();
  // 64 B over 8 GPUs is 4 BF16 elements each, below the 16-byte unit; 128 B is exactly one.
  ASSERT_EQ(r.notes.size(), 1U);
  EXPECT_EQ(r.notes[0],
            "all_gather bf16 on 8 GPUs: 64 B is too small to split into 8 chunks of 16 B");
  ASSERT_EQ(r.timings.size(), 2U);
  EXPECT_EQ(r.timings[0].bytes, 128);
  EXPECT_EQ(r.timings[0].count, 8);
}

TEST(CommProbe, AFailingCallKeepsWhatWasMeasuredAndFreesEverything) {
  const Script script("fail all_to_all 65536\n");
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "4"},
                      {"LLMBENCH_FAKE_NCCL_SCRIPT", script.path().c_str()}};
  CommProbeOptions o = fake_options();
  o.gpu_counts = {4};
  const CommProbeResult r = CommProbe::open(o)->run();
  EXPECT_NE(r.error.find("ncclGroupEnd: internal error"), std::string::npos) << r.error;
  // all_reduce, all_gather, reduce_scatter (9 sizes each), then all_to_all 4 KB..32 KB.
  ASSERT_EQ(r.timings.size(), 3U * 9U + 4U);
  EXPECT_EQ(r.timings.back().collective, Collective::AllToAll);
  EXPECT_EQ(r.timings.back().bytes, 32768);
  const auto cuda_live = hook<int (*)()>(LLMBENCH_FAKE_CUDART_PATH, "llmbench_fake_cuda_live");
  const auto nccl_live = hook<int (*)()>(LLMBENCH_FAKE_NCCL_PATH, "llmbench_fake_nccl_live");
  EXPECT_EQ(cuda_live(), 0);
  EXPECT_EQ(nccl_live(), 0);
}

TEST(CommProbe, OutOfMemorySaysToLowerMaxBytes) {
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "2"},
                      {"LLMBENCH_FAKE_CUDA_MEMORY", "1048576"}};
  const CommProbeResult r = CommProbe::open(fake_options())->run();
  EXPECT_TRUE(r.timings.empty());
  EXPECT_NE(r.error.find("cudaMalloc: out of memory (CUDA error 2) on GPU 0 (lower --max-bytes)"),
            std::string::npos)
      << r.error;
  EXPECT_EQ(hook<int (*)()>(LLMBENCH_FAKE_CUDART_PATH, "llmbench_fake_cuda_live")(), 0);
}

TEST(CommProbe, AUserSetNvlsIsLeftAsItIs) {
  const ScopedEnv env{{"LLMBENCH_FAKE_CUDA_DEVICES", "2"}, {"NCCL_NVLS_ENABLE", "1"}};
  const auto probe = CommProbe::open(fake_options());
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "1");
  bool listed = false;
  for (const auto& [k, v] : probe->setup().nccl_env)
    listed = listed || (k == "NCCL_NVLS_ENABLE" && v == "1");
  EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace llmbench::telemetry
