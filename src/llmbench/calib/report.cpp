#include "llmbench/calib/report.hpp"

#include "llmbench/core/build_info.hpp"
#include "llmbench/sim/calibration_file.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

namespace llmbench::calib {

namespace {

using nlohmann::json;

json number_or_null(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json metrics_json(const Metrics& m) {
  return {{"ttft_mean_ms", number_or_null(m.ttft_mean_ms)},
          {"ttft_median_ms", number_or_null(m.ttft_median_ms)},
          {"ttft_p99_ms", number_or_null(m.ttft_p99_ms)},
          {"tpot_mean_ms", number_or_null(m.tpot_mean_ms)},
          {"tpot_median_ms", number_or_null(m.tpot_median_ms)},
          {"tpot_p99_ms", number_or_null(m.tpot_p99_ms)},
          {"e2e_mean_s", number_or_null(m.e2e_mean_s)},
          {"itl_median_ms", number_or_null(m.itl_median_ms)},
          {"output_tok_s_per_gpu", number_or_null(m.output_tok_s_per_gpu)},
          {"total_tok_s_per_gpu", number_or_null(m.total_tok_s_per_gpu)}};
}

json errors_json(const ErrorSummary& e) {
  return {{"points", e.points},
          {"mape_pct",
           {{"ttft_mean", number_or_null(e.ttft_mean)},
            {"ttft_median", number_or_null(e.ttft_median)},
            {"ttft_p99", number_or_null(e.ttft_p99)},
            {"tpot", number_or_null(e.tpot)},
            {"output_tok_s_per_gpu", number_or_null(e.output_per_gpu)},
            {"e2e_mean", number_or_null(e.e2e_mean)},
            {"itl_median", number_or_null(e.itl_median)}}}};
}

json point_json(const PointResult& r) {
  const Workload& w = r.point.workload;
  // The tags, less what the point records elsewhere (its source, workload and figures).
  static const std::set<std::string> kRecorded{"source_url",         "input_min",
                                               "input_max",          "output_min",
                                               "output_max",         "num_prompts",
                                               "ttft_mean_ms",       "ttft_median_ms",
                                               "ttft_p99_ms",        "tpot_mean_ms",
                                               "tpot_median_ms",     "tpot_p99_ms",
                                               "e2e_mean_s",         "output_tok_s_per_gpu",
                                               "total_tok_s_per_gpu"};
  json tags = json::object();
  for (const auto& [k, v] : r.point.tags) {
    if (kRecorded.count(k) == 0)
      tags[k] = v;
  }
  return {{"label", r.point.label},
          {"held_out", r.held_out},
          {"source", r.point.source},
          {"tags", tags},
          {"workload",
           {{"input_min", w.input_min},
            {"input_max", w.input_max},
            {"output_min", w.output_min},
            {"output_max", w.output_max},
            {"num_prompts", w.num_prompts},
            {"max_concurrency", w.max_concurrency},
            {"request_rate", std::isfinite(w.request_rate) ? json(w.request_rate) : json("inf")},
            {"lengths_listed", !w.input_lens.empty()}}},
          {"measured", metrics_json(r.point.measured)},
          {"predicted", metrics_json(r.predicted)}};
}

std::string cell(double measured, double predicted, double scale, int decimals) {
  if (std::isnan(measured) && std::isnan(predicted))
    return "-";
  const double e = relative_error(predicted, measured);
  const auto show = [&](double v) {
    return std::isnan(v) ? std::string("-") : fmt::format("{:.{}f}", v * scale, decimals);
  };
  return std::isnan(e) ? fmt::format("{}/{}", show(measured), show(predicted))
                       : fmt::format("{}/{} {:+.0f}%", show(measured), show(predicted), 100 * e);
}

std::string pct(double v) {
  return std::isnan(v) ? std::string("-") : fmt::format("{:.1f}%", v);
}

}  // namespace

ErrorSummary summarize_errors(const std::vector<PointResult>& results) {
  ErrorSummary e;
  e.points = results.size();
  e.ttft_mean = mape(results, Metric::TtftMean);
  e.ttft_median = mape(results, Metric::TtftMedian);
  e.ttft_p99 = mape(results, Metric::TtftP99);
  e.tpot = mape(results, Metric::Tpot);
  e.output_per_gpu = mape(results, Metric::OutputPerGpu);
  e.e2e_mean = mape(results, Metric::E2eMean);
  e.itl_median = mape(results, Metric::ItlMedian);
  return e;
}

std::string summary_line(const Calibration& c) {
  const sim::EngineSpec& s = c.fit.spec;
  const bool holdout = !c.held_out.empty();
  const ErrorSummary e = summarize_errors(holdout ? c.held_out : c.fit.points);
  return fmt::format(
      "{} {} serving {} on {} x {} (TP{}): fitted on {} points{}; {} MAPE TPOT {}, mean TTFT {}, "
      "output tok/s per GPU {} over {} points",
      sim::to_string(s.family), c.engine_version.empty() ? "(version unknown)" : c.engine_version,
      s.model.name, s.memory.tp * s.memory.dp, s.gpu.name, s.memory.tp, c.fit.points.size(),
      c.inputs.empty() ? "" : " of " + c.inputs.front() + (c.inputs.size() > 1 ? " …" : ""),
      holdout ? "held-out" : "fit", pct(e.tpot), pct(e.ttft_mean), pct(e.output_per_gpu), e.points);
}

json cost_model_json(const sim::Efficiency& eff) {
  json j = {{"compute", eff.compute},
            {"memory", eff.memory},
            {"attention", eff.attention},
            {"step_overhead_us", eff.step_overhead_us},
            {"layer_overhead_us", eff.layer_overhead_us},
            {"request_overhead_us", eff.request_overhead_us},
            {"allreduce_latency_us", eff.allreduce_latency_us}};
  // llama.cpp's per-expert MoE batches and one-token scores: written only when set, so other
  // engines' files are as before.
  if (eff.moe_expert_overhead_us > 0)
    j["moe_expert_overhead_us"] = eff.moe_expert_overhead_us;
  if (eff.vec_score_overhead_us > 0)
    j["vec_score_overhead_us"] = eff.vec_score_overhead_us;
  return j;
}

std::string calibration_json(const Calibration& c) {
  const sim::EngineSpec& s = c.fit.spec;
  const auto& sched = s.engine.scheduler;
  json engine = {{"max_num_seqs", sched.max_num_seqs},
                 {"max_num_batched_tokens", sched.max_num_batched_tokens},
                 {"enable_prefix_caching", sched.enable_prefix_caching},
                 {"block_size", s.plan.block_size},
                 {"gpu_memory_utilization", s.memory.gpu_memory_utilization},
                 {"long_prefill_token_threshold", sched.long_prefill_token_threshold},
                 {"kv_cache_dtype", s.model.kv_cache_bytes <= 1 ? "fp8" : "auto"}};
  if (s.family == sim::EngineFamily::Sglang) {
    engine["max_prefill_tokens"] = sched.max_prefill_tokens;
    engine["num_continuous_decode_steps"] = sched.num_continuous_decode_steps;
    engine["stream_interval"] = s.stream_interval;
  }
  if (s.engine.max_request_tokens > 0)
    engine["context_size"] = s.engine.max_request_tokens * sched.max_num_seqs;
  const sim::Efficiency& eff = s.efficiency;
  json params = json::array();
  json not_identified = json::array();
  for (const auto& p : c.fit.params) {
    params.push_back({{"name", to_string(p.param)},
                      {"initial", p.initial},
                      {"value", p.value},
                      {"log_sigma", number_or_null(p.log_sigma)},
                      {"identified", p.identified}});
    if (!p.identified)
      not_identified.push_back(to_string(p.param));
  }
  json points = json::array();
  for (const auto& r : c.fit.points) points.push_back(point_json(r));
  for (const auto& r : c.held_out) points.push_back(point_json(r));
  const json doc = {
      {"format", sim::kCalibrationFormat},
      {"format_version", sim::kCalibrationFormatVersion},
      {"tool",
       {{"name", "llmbench"},
        {"version", build_info::version()},
        {"git_sha", build_info::git_sha()}}},
      {"created", c.created},
      {"target",
       {{"engine", sim::to_string(s.family)},
        {"engine_version", c.engine_version},
        {"model_profile", s.model.name},
        {"gpu", s.gpu.name},
        {"tp", s.memory.tp},
        {"ep", s.memory.ep},
        {"dp", s.memory.dp}}},
      {"engine", engine},
      {"cost_model", cost_model_json(eff)},
      {"serving",
       {{"api_overhead_us", s.engine.overheads.api_overhead_us},
        {"first_step_overhead_us", s.engine.overheads.first_step_overhead_us}}},
      {"fit",
       {{"summary", summary_line(c)},
        {"method",
         "Levenberg-Marquardt on ln(predicted/measured) of TPOT, mean and median TTFT, median ITL "
         "(where measured) and output tok/s per GPU; parameters with posterior ln-sigma >= 0.35 "
         "keep their defaults"},
        {"inputs", c.inputs},
        {"select", c.select},
        {"holdout", c.holdout},
        {"evaluations", c.fit.evaluations},
        {"parameters", params},
        {"not_identified", not_identified},
        {"error",
         {{"fit", errors_json(summarize_errors(c.fit.points))},
          {"holdout", errors_json(summarize_errors(c.held_out))}}},
        {"points", points}}}};
  return doc.dump(2) + "\n";
}

std::string points_table(const std::vector<PointResult>& results, const std::string& title) {
  std::string out = fmt::format("{:=^135}\n", " " + title + " (measured/predicted error) ");
  out += fmt::format("{:<16} {:>22} {:>22} {:>20} {:>16} {:>16} {:>18}\n", "point", "TTFT mean ms",
                     "TTFT median ms", "TTFT p99 ms", "TPOT ms", "ITL median ms", "out tok/s/GPU");
  for (const auto& r : results) {
    const Metrics& m = r.point.measured;
    const Metrics& p = r.predicted;
    out += fmt::format("{:<16} {:>22} {:>22} {:>20} {:>16} {:>16} {:>18}\n", r.point.label,
                       cell(m.ttft_mean_ms, p.ttft_mean_ms, 1, 0),
                       cell(m.ttft_median_ms, p.ttft_median_ms, 1, 0),
                       cell(m.ttft_p99_ms, p.ttft_p99_ms, 1, 0),
                       cell(metric_value(m, Metric::Tpot), metric_value(p, Metric::Tpot), 1, 1),
                       cell(m.itl_median_ms, p.itl_median_ms, 1, 1),
                       cell(m.output_tok_s_per_gpu, p.output_tok_s_per_gpu, 1, 1));
  }
  const ErrorSummary e = summarize_errors(results);
  out += fmt::format("{:<16} {:>22} {:>22} {:>20} {:>16} {:>16} {:>18}\n", "MAPE", pct(e.ttft_mean),
                     pct(e.ttft_median), pct(e.ttft_p99), pct(e.tpot), pct(e.itl_median),
                     pct(e.output_per_gpu));
  return out;
}

std::string params_table(const FitResult& fit) {
  std::string out = fmt::format("{:<24} {:>12} {:>12} {:>10}  {}\n", "parameter", "initial",
                                "fitted", "ln-sigma", "identified");
  for (const auto& p : fit.params) {
    out += fmt::format("{:<24} {:>12.4g} {:>12.4g} {:>10.3f}  {}\n", to_string(p.param), p.initial,
                       p.value, p.log_sigma, p.identified ? "yes" : "no (kept the default)");
  }
  return out;
}

}  // namespace llmbench::calib
