// Simulator speed: runs N requests (IN tokens in, OUT out) closed-loop at a concurrency cap on
// a model/GPU/TP profile and prints simulated seconds, wall seconds and their ratio (the
// speed-up over real time). Three modes:
//   engine    the full `Simulation` (events, records with one chunk per token, scheduler, cost
//             model), as `simulate` used to run it;
//   pipeline  what `simulate` runs now between building the workload and printing: the
//             `Simulation` with token times kept as runs (no chunks) and the step trace, then
//             `metrics::summarize` from those runs;
//   core      scheduler + cost model only, driven by a minimal loop (the share of sim/'s policy
//             and cost code, without the engine's event queue and per-token records).
// Usage: sim_speed_bench [--mode engine|pipeline|core] [--model deepseek-v3] [--gpu h200] [--tp 8]
//        [--requests 2000] [--in 1024] [--out 256] [--concurrency 256] [--repeat 3]
//        [--scheduler vllm-v1|static|dynamic] [--data DIR]

#include "llmbench/core/clock.hpp"
#include "llmbench/core/heap.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/memory.hpp"
#include "llmbench/sim/profiles.hpp"
#include "llmbench/sim/scheduler.hpp"
#include "llmbench/sim/step_pricing.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace llmbench;
using namespace llmbench::sim;

struct Args {
  std::string mode = "engine";
  std::string model = "deepseek-v3";
  std::string gpu = "h200";
  std::string data = LLMBENCH_SOURCE_DATA_DIR;
  std::string scheduler = "vllm-v1";
  int tp = 8;
  std::int64_t requests = 2000;
  std::int64_t in = 1024;
  std::int64_t out = 256;
  std::int64_t concurrency = 256;
  int repeat = 3;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--mode")
      a.mode = v;
    else if (k == "--model")
      a.model = v;
    else if (k == "--gpu")
      a.gpu = v;
    else if (k == "--data")
      a.data = v;
    else if (k == "--scheduler")
      a.scheduler = v;
    else if (k == "--tp")
      a.tp = std::atoi(v.c_str());
    else if (k == "--requests")
      a.requests = std::atoll(v.c_str());
    else if (k == "--in")
      a.in = std::atoll(v.c_str());
    else if (k == "--out")
      a.out = std::atoll(v.c_str());
    else if (k == "--concurrency")
      a.concurrency = std::atoll(v.c_str());
    else if (k == "--repeat")
      a.repeat = std::atoi(v.c_str());
    else {
      fmt::print(stderr, "unknown flag {}\n", k);
      std::exit(2);
    }
  }
  return a;
}

/// Scheduler + cost model on a virtual clock; all requests arrive at 0, `concurrency` in flight.
/// The V1 scheduler runs with its decode lane and steps are priced from the batch sums, as the
/// engine does.
double run_core(const Args& a, SchedulerConfig sc, std::int64_t blocks, std::int64_t block_size,
                const ExecTimeModel& model, double& wall_s) {
  auto sched = make_scheduler(parse_scheduler_kind(a.scheduler), sc, blocks, block_size);
  sched->enable_decode_lane();
  std::vector<RequestState> states(static_cast<std::size_t>(a.requests));
  for (std::size_t i = 0; i < states.size(); ++i) {
    states[i].id = static_cast<std::int64_t>(i);
    states[i].prompt_len = a.in;
    states[i].output_len = a.out;
  }
  const TimeNs t0 = steady_now_ns();
  std::size_t next = 0;
  std::int64_t in_flight = 0;
  TimeNs now = 0;
  SchedulerOutput out;
  StepResult res;
  std::vector<SeqWork> work;
  while (true) {
    while (next < states.size() && in_flight < a.concurrency) {
      sched->set_now(now);
      sched->add_request(&states[next++]);
      ++in_flight;
    }
    sched->schedule_into(out);
    if (out.empty())
      break;
    now += price_step(model, out, block_size, work, nullptr);
    sched->update_into(out, res);
    in_flight -= static_cast<std::int64_t>(res.finished.size());
  }
  wall_s = ns_to_s(steady_now_ns() - t0);
  return ns_to_s(now);
}

double run_engine(const Args& a, const SchedulerConfig& sc, std::int64_t blocks,
                  std::int64_t block_size, const ExecModelParams& p, double& wall_s) {
  SimOptions o;
  o.engine.scheduler = sc;
  o.engine.scheduler_kind = parse_scheduler_kind(a.scheduler);
  o.engine.num_gpu_blocks = blocks;
  o.engine.block_size = block_size;
  o.max_concurrency = a.concurrency;
  std::vector<SimRequest> reqs(static_cast<std::size_t>(a.requests),
                               SimRequest{0, a.in, a.out, {}, false, {}});
  const bool pipeline = a.mode == "pipeline";
  o.expand_chunks = !pipeline;
  o.record_steps = pipeline;
  Simulation sim(o, make_exec_model(ExecModelKind::Roofline, p));
  const TimeNs t0 = steady_now_ns();
  const auto result = sim.run(std::move(reqs));
  if (pipeline) {
    const auto summary = metrics::summarize(result.records, result.tokens, {});
    if (summary.completed != static_cast<std::size_t>(a.requests))
      std::abort();
  }
  wall_s = ns_to_s(steady_now_ns() - t0);
  return ns_to_s(result.stats.end_ns);
}

}  // namespace

int main(int argc, char** argv) {
  // As `llmbench` does at start-up (apps/llmbench/main.cpp, LLMBENCH_HUGE_PAGE_HEAP);
  // HUGE_PAGE_HEAP=0 turns it off.
  const char* huge = std::getenv("HUGE_PAGE_HEAP");
  if (huge == nullptr || std::string(huge) != "0")
    llmbench::use_huge_page_heap(std::size_t{256} << 20);
  const Args a = parse(argc, argv);
  const auto model = load_model_profile(a.data, a.model);
  const auto gpu = load_hardware_profile(a.data, a.gpu);
  MemoryOptions mem;
  mem.tp = a.tp;
  mem.block_size = model.attention == AttentionKind::Mla ? 64 : 16;
  const auto plan = plan_memory(model, gpu, mem);
  SchedulerConfig sc;
  sc.max_num_seqs = 1024;
  sc.max_num_batched_tokens = 8192;
  ExecModelParams p;
  p.model = model;
  p.gpu = gpu;
  p.tp = a.tp;
  p.efficiency = gpu.efficiency;
  const auto cost = make_exec_model(ExecModelKind::Roofline, p);
  double best = 0;
  for (int r = 0; r < a.repeat; ++r) {
    double wall = 0;
    const double simulated =
        a.mode == "core" ? run_core(a, sc, plan.num_gpu_blocks, plan.block_size, *cost, wall)
                         : run_engine(a, sc, plan.num_gpu_blocks, plan.block_size, p, wall);
    const double ratio = wall > 0 ? simulated / wall : 0;
    best = std::max(best, ratio);
    fmt::print(
        "{} {} {} TP{} {} req {}/{} conc {} [{}]: simulated {:.1f} s, wall {:.4f} s, "
        "speed-up {:.0f}x\n",
        a.mode, model.name, gpu.name, a.tp, a.requests, a.in, a.out, a.concurrency, a.scheduler,
        simulated, wall, ratio);
  }
  fmt::print("best speed-up: {:.0f}x\n", best);
  return 0;
}
