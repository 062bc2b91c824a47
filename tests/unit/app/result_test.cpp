// `run`'s result pieces (app/result.hpp, app/session.hpp): `--save-detailed`'s per-request
// arrays, with null where a latency is undefined, the warnings for flags a backend cannot
// honour, the start banner built from the schedule, and the GPUs behind a `run` point.

#include "llmbench/app/result.hpp"

#include "llmbench/app/session.hpp"
#include "llmbench/http/url.hpp"
#include "llmbench/telemetry/gpu_summary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace llmbench::app {
namespace {

using metrics::Chunk;
using metrics::RequestRecord;
using nlohmann::json;

constexpr TimeNs kMs = 1'000'000;

/// A completed request sent at 10 ms whose chunks arrive at `times_ms` with `tokens` each.
RequestRecord completed(std::int64_t id, const std::vector<TimeNs>& times_ms,
                        const std::vector<std::int32_t>& tokens) {
  RequestRecord r;
  r.id = id;
  r.scheduled_ns = 10 * kMs;
  r.slot_ns = 10 * kMs;
  r.sent_ns = 10 * kMs;
  r.headers_ns = 12 * kMs;
  std::int64_t n = 0;
  for (std::size_t i = 0; i < times_ms.size(); ++i) {
    r.chunks.push_back(Chunk{.time_ns = times_ms[i] * kMs, .tokens = tokens[i], .bytes = 4});
    n += tokens[i];
  }
  r.done_ns = times_ms.back() * kMs + kMs;
  r.http_status = 200;
  r.input_tokens = 7;
  r.output_tokens = n;
  r.max_tokens = n;
  r.finish_reason = "length";
  return r;
}

TEST(DetailedArrays, EveryRequestHasItsLatenciesOrNull) {
  std::vector<RequestRecord> records;
  RequestRecord warmup = completed(0, {50, 60}, {1, 1});
  warmup.warmup = true;
  records.push_back(warmup);
  records.push_back(completed(1, {110, 130, 150}, {1, 1, 1}));
  // All four tokens in one chunk (N >= 2): TPOT is undefined, not 0.
  records.push_back(completed(2, {210}, {4}));
  // A chunk of three tokens after the first: three ITL samples of a third of its gap each.
  records.push_back(completed(3, {40, 70}, {1, 3}));
  // Failed with partial output: no latency of it is reported.
  RequestRecord failed = completed(4, {100, 120}, {1, 1});
  failed.error_kind = metrics::ErrorKind::StreamError;
  failed.error_message = "stream ended before it was complete";
  records.push_back(failed);

  const json d = detailed_arrays(records);
  ASSERT_EQ(d.at("ttfts").size(), 4U) << "the warm-up is left out";
  EXPECT_EQ(d.at("ttfts"), json::parse("[0.1, 0.2, 0.03, null]"));
  EXPECT_EQ(d.at("tpots").at(0).get<double>(), 0.02);
  EXPECT_TRUE(d.at("tpots").at(1).is_null()) << d.at("tpots");
  EXPECT_DOUBLE_EQ(d.at("tpots").at(2).get<double>(), 0.03 / 3);
  EXPECT_TRUE(d.at("tpots").at(3).is_null());
  EXPECT_EQ(d.at("e2els"), json::parse("[0.14, 0.2, 0.06, null]"));
  EXPECT_EQ(d.at("itls").at(0), json::parse("[0.02, 0.02]"));
  EXPECT_EQ(d.at("itls").at(1), json::array());
  ASSERT_EQ(d.at("itls").at(2).size(), 3U);
  for (const auto& gap : d.at("itls").at(2)) EXPECT_DOUBLE_EQ(gap.get<double>(), 0.01);
  EXPECT_EQ(d.at("itls").at(3), json::array());
  EXPECT_EQ(d.at("input_lens"), json::parse("[7, 7, 7, 7]"));
  EXPECT_EQ(d.at("output_lens"), json::parse("[3, 4, 4, 2]"));
  EXPECT_EQ(d.at("errors"), json::parse(R"(["", "", "", "stream ended before it was complete"])"));
}

TEST(UnhonouredFlags, EachFlagTheBackendCannotSendIsNamedWithTheBackend) {
  loadgen::LoadOptions load;
  load.backend = protocol::Backend::OpenAI;
  load.request.min_tokens = 3;
  load.request.continuous_usage = true;
  load.request.ignore_eos = true;  // sent by openai
  const auto warnings = unhonoured_flag_warnings(load);
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_EQ(warnings[0].rfind("--min-tokens is not honoured: the openai backend", 0), 0U)
      << warnings[0];
  EXPECT_EQ(warnings[1].rfind("--continuous-usage is not honoured: the openai backend", 0), 0U)
      << warnings[1];

  load.backend = protocol::Backend::Deepseek;
  load.request.chat = true;
  load.request.min_tokens.reset();
  load.request.continuous_usage = false;
  const auto deepseek = unhonoured_flag_warnings(load);
  ASSERT_EQ(deepseek.size(), 1U);
  EXPECT_EQ(deepseek[0].rfind("--ignore-eos is not honoured: the deepseek backend", 0), 0U)
      << deepseek[0];

  load.backend = protocol::Backend::Vllm;
  load.request.chat = false;
  load.request.min_tokens = 3;
  load.request.continuous_usage = true;
  EXPECT_TRUE(unhonoured_flag_warnings(load).empty());
}

/// A run plan against `url` with `--num-prompts 200` and no request rate.
std::shared_ptr<RunPlan> plan_against(const std::string& url) {
  auto plan = std::make_shared<RunPlan>();
  plan->num_prompts = 200;
  plan->report.rate = std::numeric_limits<double>::infinity();
  plan->load.url = *http::parse_url(url);
  plan->load.endpoint = "/v1/completions";
  plan->load.request.model = "m";
  plan->load.num_prompts = 200;
  return plan;
}

// The banner counts what the schedule sends: a trace window of 7 rows replays 7 requests at its
// own times (the banner said "(200 prompts), request rate inf").
TEST(RunBanner, CountsTheScheduleNotTheFlag) {
  const auto plan = plan_against("http://127.0.0.1:8000");
  Schedule trace;
  trace.num_prompts = 7;
  trace.trace_times = true;
  EXPECT_EQ(run_banner(*plan, plan->load, trace),
            "benchmarking http://127.0.0.1:8000 /v1/completions with m (7 prompts), at the "
            "trace's own send times");
  Schedule plain;
  plain.num_prompts = 200;
  plain.num_warmups = 2;
  EXPECT_EQ(run_banner(*plan, plan->load, plain),
            "benchmarking http://127.0.0.1:8000 /v1/completions with m (200 prompts + 2 warm-up), "
            "request rate inf");
}

// Per-GPU figures of a `run` point divide by --num-gpus; without it, by the GPUs NVML sampled
// only when the server is on this host; otherwise the count is unknown (NaN: "per server"),
// never 1 (a `run` point counted as one GPU and printed the total as "tok/s per GPU").
TEST(GpuCount, RunPointsCountTheServersGpusOrSayTheyAreUnknown) {
  RunResult r;
  r.run_plan = plan_against("http://10.0.0.5:8000");
  r.load = r.run_plan->load;
  EXPECT_TRUE(std::isnan(r.gpus()));
  EXPECT_TRUE(r.gpu_count().source.empty());
  auto with_flag = std::make_shared<RunPlan>(*r.run_plan);
  with_flag->num_gpus = 8;
  r.run_plan = with_flag;
  EXPECT_EQ(r.gpus(), 8.0);
  EXPECT_EQ(r.gpu_count().source, "--num-gpus");
  EXPECT_EQ(r.to_json().at("num_gpus"), 8);
  // NVML's devices are this host's: they count for a loopback server, not a remote one.
  r.run_plan = plan_against("http://10.0.0.5:8000");
  r.telemetry = RunTelemetryData{};
  r.telemetry->gpu_summary = telemetry::GpuTelemetrySummary{};
  r.telemetry->gpu_summary->devices.resize(2);
  EXPECT_TRUE(std::isnan(r.gpus()));
  r.run_plan = plan_against("http://127.0.0.1:8000");
  r.load = r.run_plan->load;
  EXPECT_EQ(r.gpus(), 2.0);
  EXPECT_EQ(r.gpu_count().source, "NVML devices sampled");
}

}  // namespace
}  // namespace llmbench::app
