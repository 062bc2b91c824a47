#include "llmbench/cli/console.hpp"

#include "llmbench/cli/comm_report.hpp"
#include "llmbench/core/clock.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/report/report.hpp"
#include "llmbench/report/turns.hpp"
#include "llmbench/telemetry/series_stats.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace llmbench::cli {

namespace {

/// The table's options: the percentile sections asked for, the configured concurrency (as
/// typed) and (finite) request rate, and the goodput line when an SLO is set.
report::ConsoleOptions console_options(const app::RunResult& r) {
  const app::ReportSetup& setup = r.report();
  report::ConsoleOptions copt;
  copt.percentile_metrics = setup.percentile_metrics;
  std::int64_t cap = -1;  // `--max-concurrency` as typed
  if (r.sim_plan != nullptr)
    cap = r.sim_plan->max_concurrency;
  else if (r.run_plan != nullptr)
    cap = r.run_plan->max_concurrency;
  if (cap > 0)
    copt.max_concurrency = static_cast<int>(cap);
  if (std::isfinite(setup.rate))
    copt.request_rate = setup.rate;
  const auto& slo = setup.summary.slo;
  copt.show_goodput = slo.ttft_ms || slo.tpot_ms || slo.e2el_ms;
  return copt;
}

/// Load accuracy: the requested against the achieved send rate (open loop), connection reuse
/// and, with a local tokenizer, the token-count cross-checks.
void add_load_lines(const app::RunResult& r, report::ConsoleOptions& copt) {
  const auto& facts = *r.load_facts;
  const bool multi_turn = r.load.multi_turn;
  if (std::isfinite(facts.planned_rate) && r.summary().total > 1) {
    copt.load_lines.emplace_back(
        multi_turn ? "Scheduled conversation starts (/s):" : "Scheduled send rate (req/s):",
        fmt::format("{:.2f}", facts.planned_rate));
    if (std::isfinite(facts.achieved_rate)) {
      copt.load_lines.emplace_back(
          multi_turn ? "Achieved conversation starts (/s):" : "Achieved send rate (req/s):",
          fmt::format("{:.2f}", facts.achieved_rate));
    }
  }
  copt.load_lines.emplace_back("Connections opened:", std::to_string(facts.connections_opened));
  if (multi_turn) {
    const auto& c = facts.conversations;
    copt.load_lines.emplace_back("Conversations started:", std::to_string(c.started));
    copt.load_lines.emplace_back(
        "Conversations done / failed / cut:",
        fmt::format("{} / {} / {}", c.completed, c.ended_by_failure, c.cut));
  }
  const std::vector<double> lags(facts.loop_lag_ms.begin(), facts.loop_lag_ms.end());
  const auto lag = telemetry::describe_series(lags);
  if (lag.count > 0) {
    copt.load_lines.emplace_back("Event-loop lag p99 / max (ms):",
                                 fmt::format("{:.2f} / {:.2f}", lag.p99, lag.max));
  }
  if (!r.run_plan->names.tokenizer.empty()) {
    copt.load_lines.emplace_back("Prompt token mismatches:",
                                 std::to_string(r.summary().prompt_token_mismatches));
    copt.load_lines.emplace_back("Output tokens counted locally:",
                                 std::to_string(r.summary().output_tokens_counted_locally));
  }
}

/// The engine's counters under the console table.
void add_engine_lines(const app::RunResult& r, report::ConsoleOptions& copt) {
  const auto& st = r.simulation->stats;
  const auto& so = r.sim_plan->options;
  copt.load_lines.emplace_back("Simulated engine steps:", std::to_string(st.steps));
  copt.load_lines.emplace_back("Mean tokens per step:", fmt::format("{:.1f}", st.mean_step_tokens));
  copt.load_lines.emplace_back("Preemptions:", std::to_string(st.preemptions));
  if (so.engine.scheduler.num_cpu_blocks > 0) {
    copt.load_lines.emplace_back("Swapped out / in:",
                                 fmt::format("{} / {}", st.swap_outs, st.swap_ins));
    copt.load_lines.emplace_back("Swap blocks out / in:",
                                 fmt::format("{} / {}", st.swap_out_blocks, st.swap_in_blocks));
    copt.load_lines.emplace_back("Recompute fallbacks:", std::to_string(st.recompute_fallbacks));
  }
  if (so.data_parallel_size > 1)
    copt.load_lines.emplace_back("Data-parallel replicas:", std::to_string(so.data_parallel_size));
  copt.load_lines.emplace_back(
      "Prefix cache hit rate (%):",
      fmt::format("{:.2f}", st.prefix_queries > 0 ? 100.0 * static_cast<double>(st.prefix_hits) /
                                                        static_cast<double>(st.prefix_queries)
                                                  : 0.0));
  copt.load_lines.emplace_back("Max running requests:", std::to_string(st.max_running));
  const double simulated_s = ns_to_s(st.end_ns);
  const double wall_s = r.simulation->wall_s;
  copt.load_lines.emplace_back("Simulated s per wall s:",
                               fmt::format("{:.0f}", wall_s > 0 ? simulated_s / wall_s : 0.0));
  for (auto& l : comm_term_lines(r.sim_plan->engine)) copt.load_lines.push_back(std::move(l));
}

/// Prints the engine state over time: KV-cache usage, running/waiting, preemptions and the
/// prefix-cache hit rate per window (docs/simulator.md "Over time").
void print_timeline(const std::vector<sim::TimelineBucket>& timeline) {
  if (timeline.empty())
    return;
  std::printf("%s\n", fmt::format("{:=^72}", " Engine over time ").c_str());
  std::printf("%s\n",
              fmt::format("{:>15} {:>6} {:>6} {:>8} {:>8} {:>8} {:>7} {:>8}", "window (s)", "busy%",
                          "steps", "KV mean%", "KV max%", "running", "preempt", "prefix%")
                  .c_str());
  for (const auto& b : timeline) {
    std::printf(
        "%s\n",
        fmt::format("{:>15} {:>6.1f} {:>6} {:>8.1f} {:>8.1f} {:>8.1f} {:>7} {:>8.1f}",
                    fmt::format("{:.2f}-{:.2f}", ns_to_s(b.start_ns), ns_to_s(b.end_ns)),
                    100 * b.busy_fraction, b.steps, 100 * b.mean_kv_usage, 100 * b.max_kv_usage,
                    b.mean_running, b.preemptions, 100 * b.prefix_hit_rate())
            .c_str());
  }
  std::printf("%s\n", std::string(72, '=').c_str());
}

}  // namespace

std::pair<std::string, std::string> stability_line(const app::RunResult& r) {
  const auto& s = r.verdicts().stability;
  return {fmt::format("Stable ({:g} s windows):", r.analysis.window_s),
          s.stable ? "yes" : "no: " + s.reason};
}

std::pair<std::string, std::string> spike_line(const app::RunResult& r) {
  const analysis::SpikeRule rule;
  const auto& spikes = r.verdicts().spikes.spikes;
  std::string value = spikes.empty() ? "none" : std::to_string(spikes.size());
  constexpr std::size_t kListed = 5;  // the results list every one
  for (const auto& sp : spikes) {
    if (&sp - spikes.data() == kListed) {
      value += ", ...";
      break;
    }
    value += fmt::format("{} {} {:.1f}x at {:.1f}-{:.1f} s", &sp == spikes.data() ? ":" : ",",
                         sp.metric == analysis::SpikeMetric::Itl ? "ITL" : "TTFT", sp.ratio,
                         ns_to_s(sp.start_ns), ns_to_s(sp.end_ns));
  }
  return {fmt::format("P{:g} spikes (> {:g}x median window):", rule.percentile, rule.multiple),
          value};
}

std::pair<std::string, std::string> batching_line(const app::RunResult& r) {
  const auto& v = r.verdicts();
  if (!v.batching.evaluated)
    return {"", ""};
  return {fmt::format("Batching failure ({}):", v.batching_source),
          (v.batching.fired ? "FIRED: " : "no: ") + v.batching.reason};
}

void print_result(const app::RunResult& r) {
  auto copt = console_options(r);
  if (r.simulated())
    add_engine_lines(r, copt);
  else
    add_load_lines(r, copt);
  copt.load_lines.push_back(stability_line(r));
  copt.load_lines.push_back(spike_line(r));
  if (r.verdicts().batching.evaluated)
    copt.load_lines.push_back(batching_line(r));
  report::print_console(stdout, r.summary(), copt);
  if (r.simulated()) {
    print_timeline(r.simulation->timeline);
  } else if (r.load.multi_turn) {
    const auto by_turn = metrics::summarize_turns(r.records);
    std::fputs(
        report::turns_console_text(by_turn, report::turn_finding(r.records, by_turn)).c_str(),
        stdout);
  }
}

void ConsoleObserver::load_started(const loadgen::Progress& progress) {
  if (progress_ && isatty(STDERR_FILENO) != 0) {
    done_.store(false);
    thread_ = std::thread([this, &progress] { loop(progress); });
  }
}

void ConsoleObserver::stop() {
  if (thread_.joinable()) {
    done_.store(true);
    thread_.join();
    std::fprintf(stderr, "\r\033[K");
  }
}

void ConsoleObserver::loop(const loadgen::Progress& p) {
  const auto t0 = std::chrono::steady_clock::now();
  while (!done_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto done = p.done.load();
    const auto total = p.total.load();
    std::fprintf(stderr, "\r\033[K[%lld/%s] %.1f req/s, %.0f tok/s, errors %lld, %.0fs",
                 static_cast<long long>(done), total > 0 ? std::to_string(total).c_str() : "?",
                 s > 0 ? static_cast<double>(done) / s : 0.0,
                 s > 0 ? static_cast<double>(p.output_tokens.load()) / s : 0.0,
                 static_cast<long long>(p.failed.load()), s);
    std::fflush(stderr);
  }
}

}  // namespace llmbench::cli
