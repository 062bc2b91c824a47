#include "llmbench/cli/run_report.hpp"

#include "llmbench/cli/config_json.hpp"
#include "llmbench/cli/history_record.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/protocol/dialect.hpp"
#include "llmbench/report/report.hpp"
#include "llmbench/telemetry/series_stats.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmbench::cli {

namespace {

using nlohmann::json;

/// Load accuracy: the requested against the achieved send rate (open loop), connection reuse
/// and, with a local tokenizer, the token-count cross-checks.
void add_load_lines(const RunPlan& plan, const loadgen::LoadResult& result,
                    const metrics::Summary& summary, report::ConsoleOptions& copt) {
  const double rate = plan.report.rate;
  if (std::isfinite(rate) && result.schedule_span_ns > 0 && summary.total > 1) {
    TimeNs first_sent = std::numeric_limits<TimeNs>::max();
    TimeNs last_sent = 0;
    std::int64_t sent = 0;
    for (const auto& r : result.records) {
      if (r.warmup || r.sent_ns < 0)
        continue;
      first_sent = std::min(first_sent, r.sent_ns);
      last_sent = std::max(last_sent, r.sent_ns);
      ++sent;
    }
    const double planned =
        static_cast<double>(result.planned - 1) / ns_to_s(result.schedule_span_ns);
    copt.load_lines.emplace_back("Scheduled send rate (req/s):", fmt::format("{:.2f}", planned));
    if (sent > 1 && last_sent > first_sent) {
      const double achieved = static_cast<double>(sent - 1) / ns_to_s(last_sent - first_sent);
      copt.load_lines.emplace_back("Achieved send rate (req/s):", fmt::format("{:.2f}", achieved));
      if (achieved < 0.95 * planned) {
        log::warn(
            "the client sent at {:.2f} req/s but the schedule asked for {:.2f} req/s: the "
            "client (or the concurrency cap) could not keep up",
            achieved, planned);
      }
    }
  }
  copt.load_lines.emplace_back("Connections opened:", std::to_string(result.connections_opened));
  const std::vector<double> lags(result.loop_lag_ms.begin(), result.loop_lag_ms.end());
  const auto lag = telemetry::describe_series(lags);
  if (lag.count > 0) {
    copt.load_lines.emplace_back("Event-loop lag p99 / max (ms):",
                                 fmt::format("{:.2f} / {:.2f}", lag.p99, lag.max));
  }
  if (plan.load.tokenizer != nullptr) {
    copt.load_lines.emplace_back("Prompt token mismatches:",
                                 std::to_string(summary.prompt_token_mismatches));
    copt.load_lines.emplace_back("Output tokens counted locally:",
                                 std::to_string(summary.output_tokens_counted_locally));
  }
}

json results_document(const RunFlags& f, const RunPlan& plan, const RunWorkload& w,
                      const RunTarget& target, const loadgen::LoadResult& result,
                      const RunOutputs& out, const metrics::Summary& summary,
                      const SteadyState& steady) {
  const auto& lo = plan.load;
  report::RunInfo info;
  info.date = fmt::format("{:%Y%m%d-%H%M%S}",
                          fmt::localtime(std::chrono::system_clock::to_time_t(out.start_time)));
  info.backend = f.backend;
  info.model_id = lo.request.model;
  info.tokenizer_id = f.tokenizer.empty() ? lo.request.model : f.tokenizer;
  info.base_url = lo.url.origin() + lo.url.path_prefix;
  info.endpoint = lo.endpoint;
  info.num_prompts = f.duration_s > 0 ? f.num_prompts : lo.num_prompts;
  info.request_rate = plan.report.rate;
  info.burstiness = plan.report.burstiness;
  info.max_concurrency = static_cast<int>(f.max_concurrency);
  info.slo = plan.report.summary.slo;
  info.seed = f.seed;
  info.tool_version = std::string(build_info::version());
  info.git_sha = std::string(build_info::git_sha());
  info.config_requested = run_flags_json(f);
  info.config_effective = run_effective_config(f, plan, w.samples.size());
  info.server_models = target.server_models;
  info.run_start_steady_ns = result.run_start_steady_ns;
  info.percentiles = plan.report.percentiles;
  info.extra = {{"interrupted", result.interrupted},
                {"connections_opened", result.connections_opened},
                {"records_file", out.records_path.filename().string()},
                {"prompt_token_mismatches", summary.prompt_token_mismatches},
                {"output_tokens_counted_locally", summary.output_tokens_counted_locally}};
  info.extra.update(steady_state_json(steady));
  if (plan.output.save_detailed) {
    info.extra.update(detailed_arrays(result.records));
  }
  if (out.telemetry)
    info.extra["telemetry"] = out.telemetry->json();
  return report::results_json(summary, info);
}

/// Seconds, or null when undefined (NaN).
json seconds_or_null(double ms) {
  return std::isnan(ms) ? json(nullptr) : json(ms / 1000.0);
}

}  // namespace

json detailed_arrays(const std::vector<metrics::RequestRecord>& records) {
  json ttfts = json::array();
  json tpots = json::array();
  json e2els = json::array();
  json itls = json::array();
  json in_lens = json::array();
  json out_lens = json::array();
  json errors = json::array();
  std::vector<double> itl_ms;
  for (const auto& r : records) {
    if (r.warmup)
      continue;
    // A failed request has no latencies: they enter no figure of the summary either.
    const auto lat = r.ok() ? metrics::request_latency(r) : metrics::RequestLatency{};
    ttfts.push_back(seconds_or_null(lat.ttft_ms));
    tpots.push_back(seconds_or_null(lat.tpot_ms));
    e2els.push_back(seconds_or_null(lat.e2el_ms));
    itl_ms.clear();
    if (r.ok())
      metrics::append_itl_ms(r, itl_ms);
    json gaps = json::array();
    for (const double ms : itl_ms) gaps.push_back(ms / 1000.0);
    itls.push_back(std::move(gaps));
    in_lens.push_back(metrics::input_token_count(r));
    out_lens.push_back(metrics::output_token_count(r));
    errors.push_back(r.error_message);
  }
  return {{"ttfts", std::move(ttfts)},        {"tpots", std::move(tpots)},
          {"e2els", std::move(e2els)},        {"itls", std::move(itls)},
          {"input_lens", std::move(in_lens)}, {"output_lens", std::move(out_lens)},
          {"errors", std::move(errors)}};
}

std::vector<std::string> unhonoured_flag_warnings(const loadgen::LoadOptions& load) {
  std::vector<std::string> warnings;
  for (const std::string_view flag : protocol::unhonoured_flags(load.backend, load.request)) {
    warnings.push_back(fmt::format(
        "{} is not honoured: the {} backend does not send the field (its server does not "
        "accept it); the run goes on without it",
        flag, protocol::to_string(load.backend)));
  }
  return warnings;
}

json run_effective_config(const RunFlags& f, const RunPlan& plan, std::size_t samples) {
  json j = dataset_json(plan.dataset, f);
  j.update(report_setup_json(plan.report));
  j.update(load_options_json(plan.load));
  j["builtin_server"] =
      plan.builtin ? builtin_server_json(*plan.builtin, f.server.engine) : json(nullptr);
  j["samples"] = samples;
  return j;
}

int report_run(const RunFlags& f, const RunPlan& plan, const RunWorkload& w,
               const RunTarget& target, loadgen::LoadResult& result, const RunOutputs& out,
               PointReport* point) {
  const auto summary = metrics::summarize(result.records, plan.report.summary);
  if (out.telemetry)
    out.telemetry->finish(result);
  const auto steady = steady_state(result.records, f.window_s, plan.report.percentiles);
  auto copt =
      console_options(f, plan.report.rate, plan.report.percentile_metrics, plan.report.summary.slo);
  add_load_lines(plan, result, summary, copt);
  copt.load_lines.push_back(stability_line(steady));
  if (point == nullptr) {
    report::print_console(stdout, summary, copt);
  }
  // Lateness is sent − slot (docs/metrics.md): the wait behind --max-concurrency is not in it,
  // so a late client is a late client with a cap too.
  if (summary.lateness_ms.count > 0 && summary.lateness_ms.max > 10.0 &&
      std::isfinite(plan.report.rate)) {
    log::warn(
        "the client sent requests up to {:.1f} ms late (mean {:.2f} ms): it could not keep up "
        "with the schedule; see lateness_ms in the results",
        summary.lateness_ms.max, summary.lateness_ms.mean);
  }
  json document = results_document(f, plan, w, target, result, out, summary, steady);
  const auto path = plan.output.dir / (out.stem + ".json");
  if (plan.output.save_result) {
    report::write_json_file(path.string(), document);
    log::info("results written to {}", path.string());
  }
  if (!f.history.empty()) {
    record_history(f.history, f.label, point != nullptr ? "sweep-point" : "run", document,
                   plan.output.save_result ? path : "", out.records ? out.records_path : "");
  }
  const int code = (summary.failed > 0 || result.interrupted) ? 1 : 0;
  if (point != nullptr) {
    *point = PointReport{.summary = summary,
                         .steady = steady,
                         .results = std::move(document),
                         .results_path = plan.output.save_result ? path : "",
                         .exit_code = code,
                         .interrupted = result.interrupted};
  }
  if (out.records && out.records->lost() > 0) {
    log::error(
        "{} of {} per-request records were lost writing {} ({}); the summary above "
        "counts every request",
        out.records->lost(), out.records->lost() + out.records->written(),
        out.records_path.string(), out.records->error());
    if (point != nullptr)
      point->exit_code = 1;
    return 1;
  }
  if (out.records) {
    log::info("per-request records written to {}", out.records_path.string());
  }
  return code;
}

}  // namespace llmbench::cli
