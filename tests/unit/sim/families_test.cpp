// Engine families (SGLang's prefill-first policy, llama.cpp's slots), the serving overheads of a
// calibration (API overhead, first-step warm-up), the attention efficiency, and the calibration
// file: every case traced by hand.

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/sim/calibration_file.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/sim/sglang_scheduler.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace llmbench::sim {
namespace {

using testing::Ids;
using testing::make;
using testing::seq_ids;
using testing::seq_tokens;

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

SchedulerConfig sglang_config(std::int64_t chunk) {
  SchedulerConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = chunk;
  c.enable_prefix_caching = false;
  return c;
}

TEST(SglangScheduler, APromptNeverSharesAStepWithDecodes) {
  SglangScheduler s(sglang_config(64), 100, 16);
  RequestState a = make(1, 10, 3);
  s.add_request(&a);
  auto out = s.schedule();  // prefill of a (10 tokens, samples its first token)
  EXPECT_EQ(seq_ids(out), (Ids{1}));
  EXPECT_EQ(seq_tokens(out), (Ids{10}));
  s.update(out);
  EXPECT_EQ(a.num_output_tokens, 1);
  RequestState b = make(2, 20, 2);
  s.add_request(&b);
  out = s.schedule();  // b's prefill runs alone: a's decode waits
  EXPECT_EQ(seq_ids(out), (Ids{2}));
  EXPECT_EQ(seq_tokens(out), (Ids{20}));
  s.update(out);
  out = s.schedule();  // nothing waiting: both decode
  EXPECT_EQ(seq_ids(out), (Ids{1, 2}));
  EXPECT_EQ(seq_tokens(out), (Ids{1, 1}));
  EXPECT_EQ(out.sums.decode_seqs, 2);
}

TEST(SglangScheduler, ALongPromptIsChunkedBeforeAnyDecode) {
  SglangScheduler s(sglang_config(16), 100, 16);
  RequestState a = make(1, 4, 5);
  s.add_request(&a);
  s.update(s.schedule());
  RequestState b = make(2, 40, 2);  // 16 + 16 + 8 tokens
  s.add_request(&b);
  for (const std::int64_t chunk : {16, 16, 8}) {
    const auto out = s.schedule();
    EXPECT_EQ(seq_ids(out), (Ids{2}));
    EXPECT_EQ(seq_tokens(out), (Ids{chunk}));
    s.update(out);
  }
  EXPECT_EQ(a.num_output_tokens, 1);  // a decoded nothing while b was prefilled
  EXPECT_EQ(b.num_output_tokens, 1);
  EXPECT_EQ(seq_ids(s.schedule()), (Ids{1, 2}));
}

TEST(SglangScheduler, ContinuousDecodeStepsDelayANewPrompt) {
  SchedulerConfig c = sglang_config(64);
  c.num_continuous_decode_steps = 3;
  SglangScheduler s(c, 100, 16);
  RequestState a = make(1, 4, 10);
  s.add_request(&a);
  s.update(s.schedule());  // prefill
  s.update(s.schedule());  // decode 1 of 3
  RequestState b = make(2, 4, 2);
  s.add_request(&b);
  EXPECT_EQ(seq_ids(s.schedule()), (Ids{1}));  // still decode 2 of 3: b waits
}

TEST(SglangScheduler, MaxPrefillTokensCapsTheBatch) {
  SchedulerConfig c = sglang_config(64);
  c.max_prefill_tokens = 24;
  SglangScheduler s(c, 100, 16);
  RequestState a = make(1, 10, 2);
  RequestState b = make(2, 20, 2);
  s.add_request(&a);
  s.add_request(&b);
  const auto out = s.schedule();
  EXPECT_EQ(seq_tokens(out), (Ids{10, 14}));  // 24 tokens: b is chunked
}

TEST(SglangScheduler, ReservesKvForFutureDecodesThenRetractsTheNewest) {
  // 5 blocks of 4 tokens. Admission reserves 0.7 x the outputs to come: a (4 + 0.7 x 8 = 9.6
  // tokens) and b (9.6) fit 20 free slots, c (9.6 more) does not.
  SglangScheduler s(sglang_config(64), 5, 4);
  RequestState a = make(1, 4, 8);
  RequestState b = make(2, 4, 8);
  RequestState c = make(3, 4, 8);
  s.add_request(&a);
  s.add_request(&b);
  s.add_request(&c);
  auto out = s.schedule();
  EXPECT_EQ(seq_ids(out), (Ids{1, 2}));
  s.update(out);
  EXPECT_EQ(s.num_waiting(), 1u);
  // The reservation was an estimate: both grow to 12 tokens (3 blocks each, 6 > 5). The fifth
  // decode step needs a third block for each; only one is free, so b (newest) is retracted.
  for (int step = 0; step < 4; ++step) {
    out = s.schedule();
    EXPECT_EQ(seq_ids(out), (Ids{1, 2})) << step;
    EXPECT_TRUE(out.preempted.empty());
    s.update(out);
  }
  out = s.schedule();
  EXPECT_EQ(out.preempted, (Ids{2}));
  EXPECT_EQ(seq_ids(out), (Ids{1}));
  EXPECT_EQ(b.num_computed_tokens, 0);
  EXPECT_EQ(s.num_waiting(), 2u);  // b back at the head, c still waiting
}

TEST(EngineFamily, NamesAndDefaults) {
  EXPECT_EQ(parse_engine_family("sglang"), EngineFamily::Sglang);
  EXPECT_EQ(parse_engine_family("llama.cpp"), EngineFamily::Llamacpp);
  EXPECT_EQ(to_string(EngineFamily::Llamacpp), "llamacpp");
  EXPECT_THROW((void)parse_engine_family("tgi"), Exception);
  EngineOverrides o;
  o.engine = "sglang";
  EngineSpec h200 = load_engine_spec(kData, o);  // 140 GiB: SGLang's 8k chunk
  EXPECT_EQ(h200.engine.scheduler_kind, SchedulerKind::Sglang);
  EXPECT_EQ(h200.engine.scheduler.max_num_batched_tokens, 8192);
  EXPECT_EQ(h200.engine.scheduler.max_prefill_tokens, 16384);
  o.gpu = "mi300x";  // 192 GB: 16k
  EXPECT_EQ(load_engine_spec(kData, o).engine.scheduler.max_num_batched_tokens, 16384);
}

TEST(EngineFamily, LlamacppSlotsOwnTheirContext) {
  EngineOverrides o;
  o.engine = "llamacpp";
  o.model_profile = "ds2-random-tiny";
  o.gpu = "cpu-host";
  o.max_num_seqs = 4;
  o.context_size = 8192;
  const EngineSpec s = load_engine_spec(kData, o);
  EXPECT_EQ(s.memory.tp, 1);
  EXPECT_EQ(s.engine.scheduler_kind, SchedulerKind::VllmV1);
  EXPECT_EQ(s.engine.scheduler.max_num_batched_tokens, 2048);  // n_batch
  EXPECT_FALSE(s.engine.scheduler.enable_prefix_caching);
  EXPECT_EQ(s.engine.max_request_tokens, 2048);  // 8192 / 4 slots
  EXPECT_EQ(s.engine.num_gpu_blocks, 4 * 2048 / 16);
  EngineCore core(s.engine, s.make_exec_model());
  EXPECT_TRUE(core.fits(1900, 148));
  EXPECT_FALSE(core.fits(1900, 149));  // past the slot's context
  // Four slots full of the longest requests never preempt: each owns its context.
  SimOptions so;
  so.engine = s.engine;
  Simulation sim(so, s.make_exec_model());
  std::vector<SimRequest> reqs(12, SimRequest{0, 1500, 548, {}, false, {}});
  const auto r = sim.run(reqs);
  EXPECT_EQ(r.stats.preemptions, 0);
  EXPECT_EQ(r.stats.max_running, 4);
}

/// One request alone: TTFT and the end of the run, with the given overheads.
std::pair<double, double> lone_request(const ServingOverheads& overheads, int requests) {
  SimOptions o;
  o.engine.num_gpu_blocks = 100;
  o.engine.block_size = 16;
  o.engine.overheads = overheads;
  o.max_concurrency = 1;
  o.closed_loop = true;
  Simulation sim(o, std::make_unique<testing::SimpleModel>());
  std::vector<SimRequest> reqs(static_cast<std::size_t>(requests),
                               SimRequest{0, 10, 3, {}, false, {}});
  const auto r = sim.run(reqs);
  const auto s = metrics::summarize(r.records, {});
  return {s.ttft_ms.max, s.ttft_ms.min};
}

TEST(ServingOverheads, ApiOverheadDelaysTtftAndWarmUpOnlyTheFirstStep) {
  // SimpleModel: a 10-token prefill step takes 1 ms + 10 µs.
  const auto [base_max, base_min] = lone_request({}, 2);
  EXPECT_NEAR(base_max, 1.010, 1e-9);
  EXPECT_NEAR(base_min, 1.010, 1e-9);
  // Every request: its overhead, drawn in [0.5·α, 1.5·α], then its prefill.
  const auto [api_max, api_min] = lone_request({.api_overhead_us = 2500}, 2);
  EXPECT_GE(api_min, 1.010 + 1.25 - 1e-9);
  EXPECT_LE(api_max, 1.010 + 3.75 + 1e-9);
  EXPECT_GT(api_max - api_min, 1e-6);  // not the same overhead for both
  double sum = 0;                      // many requests: the mean overhead is α
  const auto one = [&](int n) {
    SimOptions o;
    o.engine.num_gpu_blocks = 100;
    o.engine.block_size = 16;
    o.engine.overheads.api_overhead_us = 2500;
    o.max_concurrency = 1;
    o.closed_loop = true;
    Simulation sim(o, std::make_unique<testing::SimpleModel>());
    std::vector<SimRequest> reqs(static_cast<std::size_t>(n), SimRequest{0, 10, 1, {}, false, {}});
    return metrics::summarize(sim.run(reqs).records, {}).ttft_ms.mean;
  };
  sum = one(2000);
  EXPECT_NEAR(sum, 1.010 + 2.5, 0.05);
  const auto [w_max, w_min] = lone_request({.first_step_overhead_us = 40000}, 2);
  EXPECT_NEAR(w_max, 41.010, 1e-9);  // the first request's prefill is the engine's first step
  EXPECT_NEAR(w_min, 1.010, 1e-9);   // the second is not
}

TEST(CostModel, AttentionEfficiencyScalesOnlyTheAttentionTerms) {
  const auto model = load_model_profile(kData, "deepseek-r1");
  const auto gpu = load_hardware_profile(kData, "h200");
  Efficiency e = gpu.efficiency;
  const RooflineModel one({model, gpu, 8, e});
  e.attention = 0.25;
  const RooflineModel quarter({model, gpu, 8, e});
  const std::vector<SeqWork> batch{{1, 4000, true}, {1, 8000, true}, {512, 1000, true}};
  const StepCost a = one.step_cost(batch);
  const StepCost b = quarter.step_cost(batch);
  EXPECT_NEAR(b.attention_decode_s, 4 * a.attention_decode_s, 1e-15);
  EXPECT_NEAR(b.attention_prefill_s, 4 * a.attention_prefill_s, 1e-15);
  EXPECT_DOUBLE_EQ(b.moe_s, a.moe_s);
  EXPECT_DOUBLE_EQ(b.dense_linear_s, a.dense_linear_s);
}

constexpr const char* kFile = R"({
  "format": "llmbench-calibration", "format_version": 1,
  "target": {"engine": "sglang", "engine_version": "0.5.9", "model_profile": "deepseek-r1",
             "gpu": "h200", "tp": 8},
  "engine": {"max_num_seqs": 512, "max_num_batched_tokens": 32768, "max_prefill_tokens": 32768,
             "stream_interval": 10, "enable_prefix_caching": false},
  "cost_model": {"compute": 0.3, "memory": 0.5, "attention": 0.4, "step_overhead_us": 3000},
  "serving": {"api_overhead_us": 120000, "first_step_overhead_us": 800000},
  "fit": {"summary": "test fit"},
  "comm": {"fits": [{"collective": "all_reduce", "dtype": "bf16", "gpus": 8, "latency_us": 12}]}
})";

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(CalibrationFile, AppliesKnobsCostModelAndOverheadsTypedFlagsWin) {
  const std::string path = write_temp("llmbench_families_test_cal.json", kFile);
  EngineOverrides o;
  o.calibration = path;
  o.max_num_seqs = 64;  // typed: wins over the file's 512
  const EngineSpec s = load_engine_spec(kData, o);
  EXPECT_EQ(s.family, EngineFamily::Sglang);
  EXPECT_EQ(s.engine.scheduler_kind, SchedulerKind::Sglang);
  EXPECT_EQ(s.engine.scheduler.max_num_seqs, 64);
  EXPECT_EQ(s.engine.scheduler.max_num_batched_tokens, 32768);
  EXPECT_FALSE(s.engine.scheduler.enable_prefix_caching);
  EXPECT_EQ(s.stream_interval, 10);
  EXPECT_DOUBLE_EQ(s.efficiency.memory, 0.5);
  EXPECT_DOUBLE_EQ(s.efficiency.attention, 0.4);
  EXPECT_DOUBLE_EQ(s.efficiency.request_overhead_us, Efficiency{}.request_overhead_us);
  EXPECT_DOUBLE_EQ(s.engine.overheads.api_overhead_us, 120000);
  EXPECT_DOUBLE_EQ(s.engine.overheads.first_step_overhead_us, 800000);
  EXPECT_EQ(s.calibrated_on, "test fit");
  EXPECT_EQ(s.calibration_file, path);
  o.gpu = "h100";  // the fit does not carry over to another GPU
  try {
    (void)load_engine_spec(kData, o);
    FAIL() << "expected an error";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--gpu");
  }
  std::remove(path.c_str());
}

TEST(CalibrationFile, ErrorsNameSectionAndField) {
  const auto bad = [](const std::string& text) {
    try {
      (void)parse_calibration(text, "cal.json");
    } catch (const Exception& e) {
      EXPECT_EQ(e.error().source, "cal.json");
      return e.error().message;
    }
    return std::string("no error");
  };
  EXPECT_NE(bad(R"({"format": "x"})").find("format"), std::string::npos);
  EXPECT_NE(
      bad(R"({"format": "llmbench-calibration", "format_version": 2})").find("format_version"),
      std::string::npos);
  const std::string head = R"({"format": "llmbench-calibration", "format_version": 1, )";
  EXPECT_NE(bad(head + R"("target": {"engine": "vllm"}, "engine": {"max_num_seqs": 0}})")
                .find("engine.max_num_seqs"),
            std::string::npos);
  EXPECT_NE(bad(head + R"("target": {"engine": "vllm"}, "cost_model": {"memory": 1.5}})")
                .find("cost_model.memory"),
            std::string::npos);
  EXPECT_NE(bad(head + R"("target": {"engine": "tgi"}})").find("unknown engine"),
            std::string::npos);
  // Every section is optional (a hand-written comm fragment has no target): no error.
  EXPECT_EQ(bad(head + R"("engine": {}})"), "no error");
}

}  // namespace
}  // namespace llmbench::sim
