#include "llmbench/cli/run_report.hpp"

#include "llmbench/cli/config_json.hpp"
#include "llmbench/cli/history_record.hpp"
#include "llmbench/cli/report_command.hpp"
#include "llmbench/cli/tokenizer_alias.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/protocol/dialect.hpp"
#include "llmbench/report/report.hpp"
#include "llmbench/report/turns.hpp"
#include "llmbench/telemetry/series_stats.hpp"
#include "llmbench/tokenizer/resolve.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <openssl/evp.h>

namespace llmbench::cli {

namespace {

using nlohmann::json;

/// The SHA-256 of the file at `path` as 64 lowercase hex digits (FIPS 180-4, through OpenSSL's
/// EVP digest API); "" when the file cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path) {
  auto bytes = read_file(path);
  if (!bytes)
    return {};
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes->data(), bytes->size(), digest.data(), &length, EVP_sha256(), nullptr) != 1)
    return {};
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest.at(i));
  return hex;
}

/// Which tokenizer counted: `--tokenizer` as given, the file it resolved to and that file's
/// SHA-256 (so two results that name the same tokenizer can be told apart by content); null
/// without `--tokenizer`.
json tokenizer_json(const RunFlags& f) {
  if (f.tokenizer.empty())
    return nullptr;
  json j{{"given", f.tokenizer}};
  if (auto path = tokenizer::resolve_tokenizer(resolve_tokenizer_alias(f.tokenizer))) {
    j["file"] = path->string();
    j["sha256"] = sha256_file_hex(*path);
  }
  return j;
}

/// Appends `document` as one JSON line to `path` (vLLM's --append-result: one result per line),
/// starting a new line first when the file does not end with one.
void append_json_line(const std::filesystem::path& path, const json& document) {
  const auto old = read_file(path);
  std::ofstream out(path, std::ios::app | std::ios::binary);
  if (!out)
    throw Exception(Error{"cannot open for appending", path.string(), -1});
  if (old && !old->empty() && old->back() != '\n')
    out << '\n';
  out << document.dump() << '\n';
  if (!out.flush())
    throw Exception(Error{"cannot write", path.string(), -1});
}

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
      // Multi-turn: the schedule is of conversation starts; later turns follow their answers.
      if (r.warmup || r.sent_ns < 0 || r.turn > 1)
        continue;
      first_sent = std::min(first_sent, r.sent_ns);
      last_sent = std::max(last_sent, r.sent_ns);
      ++sent;
    }
    const double planned =
        static_cast<double>(result.planned - 1) / ns_to_s(result.schedule_span_ns);
    copt.load_lines.emplace_back(plan.load.multi_turn ? "Scheduled conversation starts (/s):"
                                                      : "Scheduled send rate (req/s):",
                                 fmt::format("{:.2f}", planned));
    if (sent > 1 && last_sent > first_sent) {
      const double achieved = static_cast<double>(sent - 1) / ns_to_s(last_sent - first_sent);
      copt.load_lines.emplace_back(plan.load.multi_turn ? "Achieved conversation starts (/s):"
                                                        : "Achieved send rate (req/s):",
                                   fmt::format("{:.2f}", achieved));
      if (achieved < 0.95 * planned) {
        log::warn(
            "the client sent at {:.2f} req/s but the schedule asked for {:.2f} req/s: the "
            "client (or the concurrency cap) could not keep up",
            achieved, planned);
      }
    }
  }
  copt.load_lines.emplace_back("Connections opened:", std::to_string(result.connections_opened));
  if (plan.load.multi_turn) {
    const auto& c = result.conversations;
    copt.load_lines.emplace_back("Conversations started:", std::to_string(c.started));
    copt.load_lines.emplace_back(
        "Conversations done / failed / cut:",
        fmt::format("{} / {} / {}", c.completed, c.ended_by_failure, c.cut));
  }
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
  info.extra["tokenizer"] = tokenizer_json(f);
  if (plan.load.multi_turn) {
    // Multi-turn runs only (docs/workloads.md "Conversations"): the per-turn figures and how the
    // conversations ended; `num_prompts` counts conversations, `completed` requests (turns).
    const auto by_turn = metrics::summarize_turns(result.records);
    const auto& c = result.conversations;
    info.extra["multi_turn"] = true;
    info.extra["by_turn"] = report::by_turn_json(by_turn);
    info.extra["turn_finding"] =
        report::turn_finding_json(report::turn_finding(result.records, by_turn));
    info.extra["conversations"] = {{"started", c.started},
                                   {"completed", c.completed},
                                   {"ended_by_failure", c.ended_by_failure},
                                   {"cut", c.cut}};
  }
  info.extra["label"] = f.label.empty() ? json(nullptr) : json(f.label);
  json metadata = json::object();
  for (const auto& [key, value] : plan.output.metadata) metadata[key] = value;
  info.extra["metadata"] = std::move(metadata);
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
  auto steady = steady_state(result.records, f.window_s, plan.report.percentiles);
  steady.tails = tail_cis(summary, [&](const metrics::SummaryOptions& o) {
    metrics::SummaryOptions again = plan.report.summary;
    again.percentiles = o.percentiles;
    return metrics::summarize(result.records, again);
  });
  if (out.telemetry) {
    // The batching-failure rule from the scraped /metrics (the server's batch cap is unknown).
    add_batching(steady, scrape_samples(out.telemetry->json().value("server_metrics", json())),
                 std::nan(""), "/metrics scrapes");
  }
  auto copt =
      console_options(f, plan.report.rate, plan.report.percentile_metrics, plan.report.summary.slo);
  add_load_lines(plan, result, summary, copt);
  copt.load_lines.push_back(stability_line(steady));
  copt.load_lines.push_back(spike_line(steady));
  if (steady.batching.evaluated)
    copt.load_lines.push_back(batching_line(steady));
  if (point == nullptr) {
    report::print_console(stdout, summary, copt);
    if (plan.load.multi_turn) {
      const auto by_turn = metrics::summarize_turns(result.records);
      std::fputs(report::turns_console_text(by_turn, report::turn_finding(result.records, by_turn))
                     .c_str(),
                 stdout);
    }
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
  if (plan.output.save_result && plan.output.append) {
    append_json_line(path, document);
    log::info("results appended to {}", path.string());
  } else if (plan.output.save_result) {
    report::write_json_file(path.string(), document);
    log::info("results written to {}", path.string());
  }
  if (!f.history.empty()) {
    record_history(f.history, f.label, point != nullptr ? "sweep-point" : "run", document,
                   plan.output.save_result ? path : "", out.records ? out.records_path : "");
  }
  const int code = (summary.failed > 0 || result.interrupted) ? 1 : 0;
  if (point == nullptr && !f.report_path.empty()) {
    report::ReportInputs inputs;
    inputs.runs.push_back({.name = report::run_name(document, out.stem),
                           .source = plan.output.save_result ? path.string() : "",
                           .results = document,
                           .records = result.records,
                           .records_loaded = true,
                           .records_note = {}});
    write_report(f.report_path, inputs);
  }
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
