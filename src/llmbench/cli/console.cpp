#include "llmbench/cli/console.hpp"

#include "llmbench/app/comm_report.hpp"
#include "llmbench/core/clock.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/report/report.hpp"
#include "llmbench/report/turns.hpp"
#include "llmbench/telemetry/series_stats.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
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
  for (auto& line : app::connection_lines(r)) copt.load_lines.push_back(std::move(line));
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
  copt.load_lines.emplace_back("Bottleneck:",
                               analysis::name_bottleneck(r.simulation->engine).reason);
  const double simulated_s = ns_to_s(st.end_ns);
  const double wall_s = r.simulation->wall_s;
  copt.load_lines.emplace_back("Simulated s per wall s:",
                               fmt::format("{:.0f}", wall_s > 0 ? simulated_s / wall_s : 0.0));
  for (auto& l : app::comm_term_lines(r.sim_plan->engine)) copt.load_lines.push_back(std::move(l));
}

/// The cluster's counters under the console table.
void add_cluster_lines(const app::RunResult& r, report::ConsoleOptions& copt) {
  const auto& c = r.cluster->result;
  std::int64_t queries = 0;
  std::int64_t hits = 0;
  for (const auto& x : c.replicas) {
    queries += x.prefix_queries;
    hits += x.prefix_hits;
  }
  const auto ratio = [](std::int64_t part, std::int64_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  copt.load_lines.emplace_back("Cluster units / engines:",
                               fmt::format("{} / {}", c.units, c.engines));
  copt.load_lines.emplace_back(
      "Unit steps (in steady runs %):",
      fmt::format("{} ({:.1f})", c.unit_steps, ratio(c.steady_steps, c.unit_steps)));
  copt.load_lines.emplace_back("Prefix cache hit rate (%):",
                               fmt::format("{:.2f}", ratio(hits, queries)));
  if (c.kv_transfers > 0) {
    copt.load_lines.emplace_back("KV transfers (GB):",
                                 fmt::format("{} ({:.1f})", c.kv_transfers, c.kv_bytes / 1e9));
  }
  const double wall_s = r.cluster->wall_s;
  copt.load_lines.emplace_back(
      "Simulated s per wall s:",
      fmt::format("{:.0f}", wall_s > 0 ? ns_to_s(c.end_ns) / wall_s : 0.0));
}

void print_line(const std::string& text) {
  std::printf("%s\n", text.c_str());
}

/// The versions, pools and replicas of a cluster under the console table.
void print_cluster_tables(const sim::ClusterResult& r) {
  if (!r.versions.empty()) {
    print_line(fmt::format("{:=^88}", " Versions (fingerprint buckets) "));
    print_line(fmt::format("{:<16} {:>7} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>12}", "version",
                           "share%", "routed%", "requests", "TTFT ms", "TTFT p99", "TPOT ms",
                           "TPOT p99", "out tok/s"));
    const double total = static_cast<double>(std::max<std::int64_t>(r.arrived, 1));
    for (const auto& v : r.versions) {
      const double d = v.latency.duration_s();
      print_line(fmt::format(
          "{:<16} {:>7.2f} {:>8.2f} {:>10} {:>9.1f} {:>9.1f} {:>9.2f} {:>9.2f} {:>12.0f}", v.name,
          100 * v.share, 100 * static_cast<double>(v.requests) / total, v.requests,
          v.latency.ttft_ms.mean(), v.latency.ttft_ms.percentile(99), v.latency.tpot_ms.mean(),
          v.latency.tpot_ms.percentile(99),
          d > 0 ? static_cast<double>(v.latency.output_tokens) / d : 0.0));
    }
  }
  if (r.pools.prefill_ms.count() > 0) {
    print_line(fmt::format("{:=^88}", " Disaggregated pools (ms) "));
    print_line(fmt::format("{:<34} {:>12} {:>12} {:>12}", "part of TTFT", "mean", "P50", "P99"));
    const auto row = [](const char* name, const sim::StreamingHistogram& h) {
      print_line(fmt::format("{:<34} {:>12.2f} {:>12.2f} {:>12.2f}", name, h.mean(),
                             h.percentile(50), h.percentile(99)));
    };
    row("prefill pool (arrival→prompt done)", r.pools.prefill_ms);
    row("KV transfer", r.pools.transfer_ms);
    row("decode admission (→first token)", r.pools.admit_ms);
  }
  print_line(fmt::format("{:=^88}", " Replicas "));
  print_line(fmt::format("{:>5} {:<18} {:<8} {:>5} {:>10} {:>9} {:>7} {:>10} {:>9}", "#", "group",
                         "role", "unit", "requests", "KV hit%", "busy%", "steps", "preempt"));
  const double end_s = ns_to_s(r.end_ns);
  constexpr std::size_t kShown = 64;  // the results JSON lists every one
  const std::size_t shown = std::min(r.replicas.size(), kShown);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& x = r.replicas[i];
    print_line(fmt::format("{:>5} {:<18} {:<8} {:>5} {:>10} {:>9.2f} {:>7.1f} {:>10} {:>9}", i,
                           x.group, sim::pool_role_name(static_cast<sim::PoolRole>(x.role)), x.unit,
                           x.requests, 100 * x.hit_rate(), end_s > 0 ? 100 * x.busy_s / end_s : 0.0,
                           x.steps, x.preemptions));
  }
  if (shown < r.replicas.size())
    print_line(fmt::format("({} more replicas in the results JSON)", r.replicas.size() - shown));
  print_line(std::string(88, '='));
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
  return {fmt::format("Stability ({:g} s windows):", r.analysis.window_s),
          fmt::format("{}: {}", analysis::to_string(s.state), s.reason)};
}

std::pair<std::string, std::string> spike_line(const app::RunResult& r) {
  const analysis::SpikeRule rule;
  const auto& spikes = r.verdicts().spikes;
  std::string value = analysis::spike_summary(spikes, rule);
  const std::string interference = analysis::interference_line(spikes, rule);
  if (!interference.empty())
    value += "; " + interference;
  return {fmt::format("P{:g} spikes:", rule.percentile), value};
}

std::pair<std::string, std::string> verdict_line(const app::RunResult& r) {
  const auto& v = r.verdicts().verdict;
  std::string value = analysis::verdict_label(v);
  if (!v.invalid_reasons.empty())
    value += fmt::format(" ({})", fmt::join(v.invalid_reasons, "; "));
  return {"Verdict:", value};
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
  if (r.cluster)
    add_cluster_lines(r, copt);
  else if (r.simulated())
    add_engine_lines(r, copt);
  else
    add_load_lines(r, copt);
  const auto& summary = r.summary();
  if (summary.cancelled > 0)
    copt.load_lines.emplace_back("Cancelled requests:", std::to_string(summary.cancelled));
  if (summary.zero_output_completions > 0) {
    copt.load_lines.emplace_back("Zero-output completions:",
                                 std::to_string(summary.zero_output_completions));
  }
  copt.load_lines.emplace_back("TTFT basis:", std::string(metrics::kTtftBasis));
  copt.load_lines.push_back(verdict_line(r));
  copt.load_lines.push_back(stability_line(r));
  copt.load_lines.push_back(spike_line(r));
  if (r.verdicts().batching.evaluated)
    copt.load_lines.push_back(batching_line(r));
  report::print_console(stdout, r.summary(), copt);
  if (r.cluster) {
    print_cluster_tables(r.cluster->result);
  } else if (r.simulated()) {
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
