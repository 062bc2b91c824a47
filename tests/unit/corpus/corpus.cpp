#include "corpus.hpp"

#include "llmbench/core/rng.hpp"
#include "llmbench/metrics/record_file.hpp"
#include "llmbench/server/time_warp.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/engine_spec.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <queue>
#include <sstream>
#include <utility>

namespace llmbench::corpus {

namespace {

using analysis::Steadiness;
using metrics::RequestRecord;

constexpr TimeNs kMs = 1'000'000;
constexpr TimeNs kS = 1'000'000'000;

// ---- the simulator ----

/// How a simulated case is set up.
struct SimSetup {
  std::string name;
  std::string family;
  std::string model = "deepseek-r1-distill-qwen-7b";
  std::string gpu = "h200";
  int tp = 1;
  sim::EngineOverrides overrides{};
  std::int64_t max_concurrency = -1;  ///< > 0 with `closed`: a closed loop of that many
  bool closed = false;
  Truth truth{};
};

/// `count` requests: Poisson arrivals at `rate` (evenly spaced when `deterministic`; all at 0
/// when `rate` is 0), prompt and output lengths uniform in ±`spread` of `prompt` and `output`.
std::vector<sim::SimRequest> requests(std::int64_t count, double rate, std::int64_t prompt,
                                      std::int64_t output, double spread, std::uint64_t seed,
                                      bool deterministic = false) {
  Rng arrivals(seed, "corpus/arrivals");
  Rng lengths(seed, "corpus/lengths");
  std::vector<sim::SimRequest> out;
  double t = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    if (rate > 0 && i > 0)
      t += deterministic ? 1.0 / rate : arrivals.exponential(rate);
    const auto len = [&](std::int64_t base) {
      const double lo = static_cast<double>(base) * (1 - spread);
      const double hi = static_cast<double>(base) * (1 + spread);
      return std::max<std::int64_t>(1, std::llround(lengths.uniform(lo, hi)));
    };
    out.push_back(sim::SimRequest{.arrival_ns = static_cast<TimeNs>(t * 1e9),
                                  .prompt_len = len(prompt),
                                  .output_len = len(output),
                                  .prompt_tokens = {},
                                  .warmup = false,
                                  .block_hashes = {}});
  }
  return out;
}

Case simulate(const SimSetup& s, std::vector<sim::SimRequest> reqs) {
  sim::EngineOverrides o = s.overrides;
  o.model_profile = s.model;
  o.gpu = s.gpu;
  o.tp = s.tp;
  const sim::EngineSpec spec =
      sim::load_engine_spec(std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data", o);
  sim::SimOptions so;
  so.engine = spec.engine;
  so.data_parallel_size = spec.data_parallel_size();
  so.max_concurrency = s.max_concurrency;
  so.closed_loop = s.closed;
  so.record_steps = true;
  so.expand_chunks = false;
  sim::Simulation simulation(so, spec.make_exec_model());
  sim::SimResult result = simulation.run(std::move(reqs));
  Case c{.name = s.name,
         .family = s.family,
         .records = std::move(result.records),
         .tokens = std::move(result.tokens),
         .engine = {},
         .capacity =
             static_cast<double>(spec.engine.scheduler.max_num_seqs * spec.data_parallel_size()),
         .truth = s.truth};
  for (const auto& st : result.steps) {
    c.engine.push_back(
        analysis::EngineSample{.t_ns = st.start_ns,
                               .running = static_cast<double>(st.num_running),
                               .waiting = static_cast<double>(st.num_waiting),
                               .weight = static_cast<double>(st.end_ns - st.start_ns)});
  }
  return c;
}

// ---- the fixed timing of `serve`, perturbed ----

/// How a fixed-timing case is set up: `streams` clients in a closed loop (each sends its next
/// request when the last one ended), `requests` in all, TTFT and ITL on the server's clock,
/// `tokens` output tokens each, the perturbation, and up to `jitter_ms` of receive jitter.
struct FixedSetup {
  std::string name;
  std::string family;
  int streams = 16;
  int requests = 200;
  double ttft_ms = 100;
  double itl_ms = 100;
  int tokens = 8;
  server::TimingPerturbation perturbation{};
  double jitter_ms = 2;
  std::uint64_t seed = 1;
  Truth truth{};
};

Case fixed_timing(const FixedSetup& s) {
  const server::TimeWarp warp(s.perturbation);
  Rng jitter(s.seed, "corpus/jitter");
  using Due = std::pair<TimeNs, int>;  // (send time, stream)
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due;
  for (int k = 0; k < s.streams; ++k) due.emplace(0, k);
  Case c{.name = s.name, .family = s.family, .truth = s.truth};
  c.truth.batching_observable = false;  // no /metrics scraped in these runs
  for (int i = 0; i < s.requests; ++i) {
    const auto [sent, stream] = due.top();
    due.pop();
    RequestRecord r;
    r.id = i;
    r.scheduled_ns = sent;
    r.slot_ns = sent;
    r.sent_ns = sent;
    r.headers_ns = sent + kMs;
    r.http_status = 200;
    r.prompt_len = 32;
    r.input_tokens = 32;
    r.max_tokens = s.tokens;
    r.output_tokens = s.tokens;
    r.finish_reason = "length";
    const TimeNs origin = warp.to_engine(sent);
    TimeNs last = sent;
    for (int j = 0; j < s.tokens; ++j) {
      const auto engine_t =
          origin + static_cast<TimeNs>((s.ttft_ms + j * s.itl_ms) * static_cast<double>(kMs));
      const TimeNs t = std::max(
          last + 1, warp.to_wall(engine_t) + static_cast<TimeNs>(jitter.uniform(0, s.jitter_ms) *
                                                                 static_cast<double>(kMs)));
      r.chunks.push_back(metrics::Chunk{.time_ns = t, .tokens = 1, .bytes = 4});
      last = t;
    }
    r.done_ns = last + kMs / 5;
    due.emplace(r.done_ns + kMs / 10, stream);
    c.records.push_back(std::move(r));
  }
  return c;
}

// ---- recorded runs ----

/// The `/metrics` scrapes of a results file as queue samples (as `cli::scrape_samples` reads
/// them).
std::vector<analysis::EngineSample> scrapes_of(const nlohmann::json& results) {
  std::vector<analysis::EngineSample> out;
  const auto tel = results.find("telemetry");
  if (tel == results.end() || !tel->is_object() || !tel->contains("server_metrics") ||
      !tel->at("server_metrics").is_object())
    return out;
  const auto& sm = tel->at("server_metrics");
  const auto& t = sm.at("t_ms");
  const auto& running = sm.at("series").at("running");
  const auto& waiting = sm.at("series").at("waiting");
  const auto late = sm.value("late", nlohmann::json::array());
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!running[i].is_number() || !waiting[i].is_number())
      continue;
    out.push_back(analysis::EngineSample{
        .t_ns = static_cast<TimeNs>(t[i].get<double>() * 1e6),
        .running = running[i].get<double>(),
        .waiting = waiting[i].get<double>(),
        .weight = 1,
        .late = i < late.size() && late[i].is_boolean() && late[i].get<bool>()});
  }
  return out;
}

}  // namespace

Verdicts judge(const Case& c) {
  Verdicts v;
  const analysis::WindowOptions options{.width_ns = kS, .percentiles = {50, 99}};
  v.windows = c.tokens ? analysis::time_windows(c.records, *c.tokens, options)
                       : analysis::time_windows(c.records, options);
  v.stability = analysis::stability(v.windows, c.engine, analysis::StabilityRule{});
  v.spikes = analysis::find_spikes(v.windows, analysis::SpikeRule{});
  v.batching =
      analysis::batching_failure(v.windows, c.engine, c.capacity, analysis::BatchingRule{});
  return v;
}

std::vector<Case> simulated_cases() {
  std::vector<Case> out;
  const Truth healthy{.steadiness = Steadiness::Stable};
  // Healthy Poisson runs: three loads, two lengths (±50% spread), 60-90 s each.
  struct Load {
    double rate;
    std::int64_t count;
  };
  for (const std::uint64_t seed : {7, 8, 9}) {
    for (const Load load : {Load{0.5, 45}, Load{2, 160}, Load{8, 640}}) {
      for (const auto& [prompt, output, tag] :
           {std::tuple<std::int64_t, std::int64_t, const char*>{128, 64, "short"},
            std::tuple<std::int64_t, std::int64_t, const char*>{2048, 256, "long"}}) {
        out.push_back(simulate(
            SimSetup{.name = fmt::format("poisson {:g} req/s {} (seed {})", load.rate, tag, seed),
                     .family = "healthy",
                     .truth = healthy},
            requests(load.count, load.rate, prompt, output, 0.5, seed)));
      }
    }
  }
  // DeepSeek-R1 on 8 x H200 at 0.5 req/s, evenly spaced, 1024/128 tokens: every prefill stalls
  // the decodes of its step (the 41 "spikes" of the old rule).
  out.push_back(simulate(SimSetup{.name = "deterministic 0.5 req/s (prefill interference)",
                                  .family = "healthy",
                                  .model = "deepseek-r1",
                                  .tp = 8,
                                  .truth = healthy},
                         requests(60, 0.5, 1024, 128, 0, 3, true)));
  // Long prompts at 1 req/s: prefill interference at its clearest.
  out.push_back(simulate(
      SimSetup{
          .name = "prefill interference 4k prompts 1 req/s", .family = "healthy", .truth = healthy},
      requests(90, 1, 4096, 256, 0.25, 11)));
  // An open loop above capacity: 16 running at most, 4 req/s of 512 output tokens.
  sim::EngineOverrides capped;
  capped.max_num_seqs = 16;
  out.push_back(simulate(SimSetup{.name = "overload: 4 req/s, max_num_seqs 16",
                                  .family = "overload",
                                  .overrides = capped,
                                  .truth = {.steadiness = Steadiness::Saturated}},
                         requests(240, 4, 512, 512, 0.25, 5)));
  // A closed loop's start-up ramp: 256 requests at once, all fit (max_num_seqs 256, ample KV).
  sim::EngineOverrides ramp;
  ramp.max_num_seqs = 256;
  out.push_back(simulate(SimSetup{.name = "closed loop 256 at once (start-up ramp)",
                                  .family = "ramp",
                                  .overrides = ramp,
                                  .max_concurrency = 256,
                                  .closed = true,
                                  .truth = healthy},
                         requests(1536, 0, 1024, 128, 0.5, 13)));
  // KV-starved: 64 at once of ~1152 tokens on 1,200 blocks of 16 (~16 fit): heavy preemption,
  // the batch far under what waits. The same with the GPU's own blocks: all 64 run.
  sim::EngineOverrides starved;
  starved.num_gpu_blocks_override = 1200;
  out.push_back(
      simulate(SimSetup{.name = "KV-starved closed loop 64 (heavy preemption)",
                        .family = "kv",
                        .overrides = starved,
                        .max_concurrency = 64,
                        .closed = true,
                        .truth = {.steadiness = Steadiness::Saturated, .batching_fails = true}},
               requests(640, 0, 1024, 128, 0.25, 17)));
  // DeepSeek-R1 (MLA, 64-token blocks) as the e2e test runs it: 64 at once of 1,024 + 128
  // tokens on 300 blocks, about 16 fit.
  sim::EngineOverrides r1_starved;
  r1_starved.num_gpu_blocks_override = 300;
  out.push_back(
      simulate(SimSetup{.name = "DeepSeek-R1 64 at once on 300 KV blocks",
                        .family = "kv",
                        .model = "deepseek-r1",
                        .tp = 8,
                        .overrides = r1_starved,
                        .max_concurrency = 64,
                        .closed = true,
                        .truth = {.steadiness = Steadiness::Saturated, .batching_fails = true}},
               requests(400, 0, 1024, 128, 0, 19)));
  // An open loop on a starved cache: 8 req/s of ~2.3k tokens on 2,000 blocks of 16 (about 14
  // fit, and each lives ~3 s: room for ~5 req/s).
  sim::EngineOverrides open_starved;
  open_starved.num_gpu_blocks_override = 2000;
  out.push_back(simulate(SimSetup{.name = "KV-starved open loop 8 req/s",
                                  .family = "kv",
                                  .overrides = open_starved,
                                  .truth = {.steadiness = Steadiness::Saturated,
                                            .batching_fails = true,
                                            .spikes_scored = false}},
                         requests(480, 8, 2048, 256, 0.25, 23)));
  out.push_back(simulate(SimSetup{.name = "ample KV closed loop 64",
                                  .family = "kv",
                                  .max_concurrency = 64,
                                  .closed = true,
                                  .truth = healthy},
                         requests(1280, 0, 1024, 128, 0.25, 17)));
  return out;
}

std::vector<Case> fixed_timing_cases() {
  std::vector<Case> out;
  const Truth healthy{.steadiness = Steadiness::Stable};
  out.push_back(fixed_timing(
      {.name = "fixed 16 streams", .family = "healthy", .requests = 240, .truth = healthy}));
  out.push_back(fixed_timing({.name = "fixed 16 streams, 3 s (too short)",
                              .family = "healthy",
                              .requests = 48,
                              .truth = {.steadiness = Steadiness::TooShort}}));
  out.push_back(fixed_timing({.name = "fixed 4 streams 20 ms",
                              .family = "healthy",
                              .streams = 4,
                              .requests = 200,
                              .ttft_ms = 40,
                              .itl_ms = 20,
                              .tokens = 32,
                              .truth = healthy}));
  server::TimingPerturbation stalls;
  stalls.stalls = {{.at_s = 4.1, .for_s = 0.6}, {.at_s = 9.1, .for_s = 0.6}};
  out.push_back(
      fixed_timing({.name = "stalls at 4.1 and 9.1 s (0.6 s)",
                    .family = "stall",
                    .requests = 240,
                    .perturbation = stalls,
                    .truth = {.steadiness = Steadiness::Stable, .stalls_s = {4.7, 9.7}}}));
  server::TimingPerturbation one;
  one.stalls = {{.at_s = 6.3, .for_s = 0.3}};
  out.push_back(fixed_timing({.name = "stall at 6.3 s (0.3 s), 4 streams 20 ms",
                              .family = "stall",
                              .streams = 4,
                              .requests = 200,
                              .ttft_ms = 40,
                              .itl_ms = 20,
                              .tokens = 32,
                              .perturbation = one,
                              .truth = {.steadiness = Steadiness::Stable, .stalls_s = {6.6}}}));
  server::TimingPerturbation three;
  three.stalls = {
      {.at_s = 3.3, .for_s = 0.4}, {.at_s = 7.5, .for_s = 0.4}, {.at_s = 11.2, .for_s = 0.4}};
  out.push_back(
      fixed_timing({.name = "stalls at 3.3, 7.5, 11.2 s (0.4 s), 8 streams 50 ms",
                    .family = "stall",
                    .streams = 8,
                    .requests = 300,
                    .ttft_ms = 60,
                    .itl_ms = 50,
                    .tokens = 16,
                    .perturbation = three,
                    .seed = 5,
                    .truth = {.steadiness = Steadiness::Stable, .stalls_s = {3.7, 7.9, 11.6}}}));
  server::TimingPerturbation settle;
  settle.drift = {.factor = 2, .over_s = 6};
  out.push_back(fixed_timing({.name = "drift 2x settling over 6 s, 30 s run",
                              .family = "drift",
                              .requests = 560,
                              .perturbation = settle,
                              .truth = healthy}));
  server::TimingPerturbation drifting;
  drifting.drift = {.factor = 2, .over_s = 30};
  out.push_back(fixed_timing({.name = "drift 2x over 30 s, 14 s run (not settled)",
                              .family = "drift",
                              .requests = 200,
                              .perturbation = drifting,
                              .truth = {.steadiness = Steadiness::Unstable}}));
  server::TimingPerturbation slowing;
  slowing.drift = {.factor = 0.5, .over_s = 40};
  out.push_back(fixed_timing({.name = "drift 0.5x slowing over 40 s, 25 s run",
                              .family = "drift",
                              .streams = 8,
                              .requests = 400,
                              .ttft_ms = 60,
                              .itl_ms = 50,
                              .tokens = 16,
                              .perturbation = slowing,
                              .seed = 3,
                              .truth = {.steadiness = Steadiness::Unstable}}));
  server::TimingPerturbation quick;
  quick.drift = {.factor = 3, .over_s = 3};
  out.push_back(fixed_timing({.name = "drift 3x settling over 3 s, 4 streams 20 ms",
                              .family = "drift",
                              .streams = 4,
                              .requests = 300,
                              .ttft_ms = 40,
                              .itl_ms = 20,
                              .tokens = 32,
                              .perturbation = quick,
                              .seed = 4,
                              .truth = healthy}));
  return out;
}

std::vector<Case> recorded_cases(const std::string& data_dir) {
  std::vector<Case> out;
  std::ifstream manifest(data_dir + "/cases.txt");
  // One case per line: results file, records file, steadiness, batching fails (0/1).
  std::string line;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream in(line);
    std::string results_file;
    std::string records_file;
    std::string state;
    int fails = 0;
    in >> results_file >> records_file >> state >> fails;
    Case c{.name = results_file, .family = "recorded"};
    c.records = metrics::read_record_file(data_dir + "/" + records_file).records;
    std::ifstream rf(data_dir + "/" + results_file);
    const auto results = nlohmann::json::parse(rf);
    c.engine = scrapes_of(results);
    for (const auto& s : analysis::kSteadinessNames) {
      if (s.name == state)
        c.truth.steadiness = s.state;
    }
    c.truth.batching_fails = fails != 0;
    c.truth.batching_observable = !c.engine.empty();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace llmbench::corpus
