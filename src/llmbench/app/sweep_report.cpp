#include "llmbench/app/sweep_report.hpp"

#include "llmbench/analysis/knee.hpp"
#include "llmbench/analysis/pareto.hpp"
#include "llmbench/analysis/queue_fit.hpp"
#include "llmbench/app/sweep_predict.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/core/name_table.hpp"
#include "llmbench/metrics/catalog.hpp"
#include "llmbench/report/report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace llmbench::app {

namespace {

using nlohmann::json;

/// The names of `PointStatus` in the sweep's files.
constexpr auto kPointStatusNames = make_name_table<PointStatus>({
    {PointStatus::Ok, "ok"},
    {PointStatus::Failed, "failed"},
    {PointStatus::Interrupted, "interrupted"},
});

/// An axis value as JSON: its number when it has one (inf as "inf"), else its text.
json value_json(const AxisValue& v) {
  if (std::isnan(v.number))
    return v.text;
  return std::isinf(v.number) ? json("inf") : json(v.number);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos)
    return text;
  std::string out = "\"";
  for (const char c : text) {
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return out + "\"";
}

std::string csv_number(const json& j) {
  if (j.is_number_integer() || j.is_number_unsigned())
    return j.dump();
  if (j.is_number())
    return fmt::format("{:.6g}", j.get<double>());
  if (j.is_string())
    return csv_field(j.get<std::string>());
  return "";
}

std::size_t column_width(const SweepAxis& axis) {
  return std::max<std::size_t>(8, axis_name(axis).size());
}

/// `key` of the row's metrics as a number, NaN when null or absent.
double metric(const PointRow& row, std::string_view key) {
  const auto it = row.metrics.find(std::string(key));
  return it != row.metrics.end() && it->is_number() ? it->get<double>() : std::nan("");
}

/// The number `key` of a point's results as its results document writes it: a count as an
/// integer, a non-finite value as null, a key the results lack as null.
json metric_json(const RunResult& result, std::string_view key) {
  const auto value = result.metric(key);
  if (!value)
    return nullptr;
  for (const auto& n : metrics::kSummaryNumbers) {
    if (n.key == key && n.integer())
      return static_cast<std::uint64_t>(*value);
  }
  return finite_or_null(*value);
}

std::string cell(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : std::string("n/a");
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  const std::string temp = fmt::format("{}.tmp.{}", path.string(), static_cast<long>(::getpid()));
  {
    std::ofstream out(temp, std::ios::out | std::ios::trunc | std::ios::binary);
    out << text;
    if (!out.flush()) {
      std::remove(temp.c_str());
      throw Exception(Error{"cannot write the sweep's CSV", path.string(), -1});
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw Exception(Error{"cannot rename the sweep's CSV into place", path.string(), -1});
  }
}

}  // namespace

std::string_view to_string(PointStatus status) noexcept {
  return kPointStatusNames.name(status, "failed");
}

PointRow point_row(std::size_t index, const std::vector<AxisValue>& values,
                   const RunResult& result) {
  const auto& v = result.verdicts();
  PointRow row{.index = index,
               .values = values,
               .status = result.interrupted ? PointStatus::Interrupted : PointStatus::Ok,
               .error = {},
               .metrics = json::object(),
               .stable = v.stability.stable,
               .stability_reason = v.stability.reason,
               .results_file = result.results_path.filename().string(),
               .records_file = result.records_path.filename().string(),
               .samples = result.summary().completed,
               .trials = 1,
               .scale = 1,
               .earlier_results = {},
               .spikes = analysis::spike_lines(v.spikes, analysis::SpikeRule{}),
               .valid = v.validity.valid,
               .invalid_reasons = v.validity.reasons,
               .p99_ci = tail_cis_json(v.tails),
               .batching_failed = v.batching.fired,
               .gpus = result.gpus()};
  row.verdict = v.verdict;
  for (const auto key : kPointMetrics) row.metrics[std::string(key)] = metric_json(result, key);
  return row;
}

std::map<std::string, double> row_metrics(const PointRow& row) {
  std::map<std::string, double> out;
  if (row.status != PointStatus::Ok)
    return out;
  for (const char* key : kPredictedMetrics) {
    const auto it = row.metrics.find(key);
    if (it != row.metrics.end() && it->is_number())
      out[key] = it->get<double>();
  }
  return out;
}

json sweep_json(std::string_view mode, const std::vector<SweepAxis>& axes,
                const std::vector<PointRow>& rows, const json& extra) {
  json axes_j = json::array();
  for (const auto& axis : axes) {
    json values = json::array();
    for (const auto& v : axis.values) values.push_back(value_json(v));
    json a{{"name", axis_name(axis)}, {"values", values}};
    if (axis.search_range)
      a["search_range"] = {axis.search_range->first, axis.search_range->second};
    axes_j.push_back(std::move(a));
  }
  json points = json::array();
  for (const auto& row : rows) {
    json p{{"index", row.index}, {"status", to_string(row.status)}, {"error", row.error}};
    json at = json::object();
    for (std::size_t i = 0; i < axes.size() && i < row.values.size(); ++i) {
      at[std::string(axis_name(axes[i]))] = value_json(row.values[i]);
    }
    p["axes"] = std::move(at);
    p.update(row.metrics);
    p["stable"] = row.stable;
    p["stability"] = row.stability_reason;
    if (row.status != PointStatus::Failed) {
      p["verdict"] = analysis::verdict_label(row.verdict);
      p["steadiness"] = analysis::to_string(row.verdict.steadiness);
    }
    p["samples"] = row.samples;
    p["trials"] = row.trials;
    p["scale"] = row.scale;
    p["earlier_results"] = row.earlier_results;
    p["spikes"] = row.spikes;
    p["valid"] = row.valid;
    p["invalid_reasons"] = row.invalid_reasons;
    p["p99_ci"] = row.p99_ci;
    p["batching_failed"] = row.batching_failed;
    p["results_file"] = row.results_file;
    p["records_file"] = row.records_file;
    points.push_back(std::move(p));
  }
  json doc{{"mode", mode}, {"axes", std::move(axes_j)}, {"points", std::move(points)}};
  if (extra.is_object())
    doc.update(extra);
  return doc;
}

std::string sweep_csv(const std::vector<SweepAxis>& axes, const std::vector<PointRow>& rows) {
  std::string out = "index";
  for (const auto& axis : axes) out += "," + std::string(axis_name(axis));
  out += ",status";
  for (const auto key : kPointMetrics) out += "," + std::string(key);
  out += ",stable,samples,results_file,error,valid,trials,verdict\n";
  for (const auto& row : rows) {
    out += std::to_string(row.index);
    for (const auto& v : row.values) out += "," + csv_field(v.text);
    out += "," + std::string(to_string(row.status));
    for (const auto key : kPointMetrics) {
      out += "," + csv_number(row.metrics.value(std::string(key), json(nullptr)));
    }
    out += fmt::format(
        ",{},{},{},{},{},{},{}\n", row.stable ? "true" : "false", row.samples,
        csv_field(row.results_file), csv_field(row.error), row.valid ? "true" : "false", row.trials,
        row.status == PointStatus::Failed ? "" : csv_field(analysis::verdict_label(row.verdict)));
  }
  return out;
}

void write_sweep_files(const std::filesystem::path& dir, const std::string& stem,
                       const json& document, const std::string& csv) {
  report::write_json_file((dir / (stem + ".sweep.json")).string(), document);
  write_text(dir / (stem + ".sweep.csv"), csv);
}

json knee_report(const std::vector<SweepAxis>& axes, const std::vector<PointRow>& rows,
                 std::vector<std::string>& lines, bool verbose) {
  std::size_t load = axes.size();
  for (std::size_t i = 0; i < axes.size() && load == axes.size(); ++i) {
    if (axis_info(axes[i].axis).load)
      load = i;
  }
  if (load == axes.size())
    return nullptr;
  const std::string load_name(axis_name(axes[load]));
  // Groups: the values of every other axis, in the order their first point ran.
  std::vector<std::pair<std::string, std::vector<const PointRow*>>> groups;
  for (const auto& row : rows) {
    if (row.status != PointStatus::Ok || row.values.size() != axes.size())
      continue;
    std::string key;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (i != load)
        key +=
            fmt::format("{}{}={}", key.empty() ? "" : " ", axis_name(axes[i]), row.values[i].text);
    }
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end())
      it = groups.insert(groups.end(), {key, {}});
    it->second.push_back(&row);
  }
  json out = json::array();
  for (const auto& [key, members] : groups) {
    std::vector<std::pair<double, double>> latency;
    double saturation = std::nan("");
    for (const PointRow* row : members) {
      const double t = metric(*row, "output_throughput");
      latency.emplace_back(t, metric(*row, "p99_ttft_ms"));
      if (std::isfinite(t) && !(t <= saturation))
        saturation = t;
    }
    std::vector<std::pair<double, double>> latency_curve;  // (req/s, mean E2EL ms)
    std::vector<std::pair<double, double>> depth_curve;    // (requests in flight, req/s)
    for (const PointRow* row : members) {
      latency_curve.emplace_back(metric(*row, "request_throughput"), metric(*row, "mean_e2el_ms"));
      depth_curve.emplace_back(metric(*row, "max_concurrent_requests"),
                               metric(*row, "request_throughput"));
    }
    const auto mm1 = analysis::fit_mm1_latency(latency_curve);
    const auto notes = analysis::fit_knee_model(depth_curve);
    const auto fit_json = [](const analysis::QueueFit& f, const char* a, const char* b) {
      return json{{"ok", f.ok},
                  {"within_bound", analysis::within_bound(f)},
                  {"error_bound", analysis::kFitErrorBound},
                  {a, finite_or_null(f.a)},
                  {b, finite_or_null(f.b)},
                  {"rms_relative_error", finite_or_null(f.rms_relative_error)},
                  {"points", f.points},
                  {"reason", f.reason}};
    };
    std::vector<analysis::LadderPoint> ladder;
    for (const PointRow* row : members) {
      ladder.push_back({.load = row->values[load].number,
                        .output_throughput = metric(*row, "output_throughput"),
                        .p99_ttft_ms = metric(*row, "p99_ttft_ms"),
                        .median_ttft_ms = metric(*row, "median_ttft_ms")});
    }
    const auto statement = analysis::describe_knee(ladder, load_name);
    const auto& tk = statement.knee;
    const auto lk = analysis::find_knee(latency, {.shape = analysis::CurveShape::ConvexIncreasing});
    json g{{"group", key},
           {"load_axis", load_name},
           {"saturation_output_throughput", saturation},
           {"throughput_knee",
            {{"found", tk.found},
             {"load", tk.found ? json(tk.x) : json(nullptr)},
             {"output_throughput", tk.found ? json(tk.y) : json(nullptr)},
             {"gained_past_knee", std::isfinite(statement.gained_past_knee)
                                      ? json(statement.gained_past_knee)
                                      : json(nullptr)},
             {"log2_load", statement.geometric},
             {"queue_edge", statement.queue_edge},
             {"queue_edge_load", std::isfinite(statement.queue_edge_load)
                                     ? json(statement.queue_edge_load)
                                     : json(nullptr)},
             {"reason", tk.reason}}},
           {"saturated", statement.saturated},
           {"statement", statement.text},
           {"latency_knee",
            {{"found", lk.found},
             {"output_throughput", lk.found ? json(lk.x) : json(nullptr)},
             {"p99_ttft_ms", lk.found ? json(lk.y) : json(nullptr)},
             {"reason", lk.reason}}},
           {"method", "Kneedle (Satopaa et al. 2011), S = 1"},
           {"fits",
            {{"mm1_latency", fit_json(mm1, "l0_ms", "xmax_request_throughput")},
             {"mm1_latency_curve", "mean_e2el_ms = l0_ms / (1 - request_throughput / xmax)"},
             {"knee_model", fit_json(notes, "mu", "rho")},
             {"knee_model_curve",
              "request_throughput = mu (1 - rho) / (1 + Q (1 - rho)), Q = "
              "max_concurrent_requests"}}}};
    out.push_back(std::move(g));
    std::string line = key.empty() ? "Knee: " : fmt::format("Knee ({}): ", key);
    line += statement.text;
    line += lk.found ? fmt::format("; p99 TTFT takes off at {:.1f} tok/s ({:.1f} ms)", lk.x, lk.y)
                     : "; no latency knee";
    line += "; " + analysis::fits_line(mm1, notes, verbose);
    lines.push_back(std::move(line));
  }
  return out;
}

json pareto_report(const std::vector<SweepAxis>& axes, const std::vector<PointRow>& rows,
                   std::vector<std::string>& lines) {
  std::vector<std::pair<double, double>> pts;
  std::vector<const PointRow*> ran;
  bool per_gpu = true;  // false: a point's GPUs are not known, and every figure is per server
  for (const auto& row : rows) {
    if (row.status == PointStatus::Ok)
      per_gpu = per_gpu && !std::isnan(row.gpus);
  }
  for (const auto& row : rows) {
    if (row.status != PointStatus::Ok)
      continue;
    const double tpot = metric(row, "mean_tpot_ms");
    pts.emplace_back(tpot > 0 ? 1000.0 / tpot : std::nan(""),
                     metric(row, "output_throughput") / (per_gpu ? row.gpus : 1.0));
    ran.push_back(&row);
  }
  json points = json::array();
  std::string line =
      fmt::format("Pareto (tok/s per {} vs tok/s per user):", per_gpu ? "GPU" : "server");
  for (const std::size_t i : analysis::pareto_front(pts)) {
    json at = json::object();
    std::string where;
    for (std::size_t a = 0; a < axes.size() && a < ran[i]->values.size(); ++a) {
      at[std::string(axis_name(axes[a]))] = value_json(ran[i]->values[a]);
      where += fmt::format("{}{}={}", where.empty() ? "" : " ", axis_name(axes[a]),
                           ran[i]->values[a].text);
    }
    points.push_back({{"index", ran[i]->index},
                      {"axes", std::move(at)},
                      {"interactivity", pts[i].first},
                      {"throughput_per_gpu", pts[i].second}});
    line += fmt::format(" [{}] {:.1f} @ {:.1f};", where, pts[i].second, pts[i].first);
  }
  if (!points.empty()) {
    line.pop_back();
    lines.push_back(std::move(line));
  }
  return {{"x", "interactivity: 1000 / mean_tpot_ms (output tok/s per user)"},
          {"y", per_gpu ? "output_throughput / GPUs (tp x dp, or --num-gpus for a run point)"
                        : "output_throughput per server (GPUs not known: --num-gpus)"},
          {"per_gpu_known", per_gpu},
          {"points", std::move(points)}};
}

std::string table_header(const std::vector<SweepAxis>& axes) {
  std::string out = fmt::format("{:>4}", "#");
  for (const auto& axis : axes) {
    out += fmt::format(" {:>{}}", axis_name(axis), column_width(axis));
  }
  out += fmt::format(" {:>22} {:>6} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8}", "verdict", "done",
                     "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p99", "ITL p99");
  return out;
}

std::string table_row(const std::vector<SweepAxis>& axes, const PointRow& row) {
  std::string out = fmt::format("{:>4}", row.index);
  for (std::size_t i = 0; i < axes.size() && i < row.values.size(); ++i) {
    out += fmt::format(" {:>{}}", row.values[i].text, column_width(axes[i]));
  }
  if (row.status == PointStatus::Failed)
    return out + fmt::format(" {:>22} {}", "failed", row.error);
  // The one verdict (analysis::judge_point), never "ok" for an invalid point.
  std::string verdict = analysis::verdict_label(row.verdict);
  if (row.trials > 1)
    verdict += fmt::format(" /{}", row.trials);
  out += fmt::format(" {:>22} {:>6} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8}", verdict, row.samples,
                     cell(metric(row, "request_throughput"), 2),
                     cell(metric(row, "output_throughput"), 1),
                     cell(metric(row, "median_ttft_ms"), 1), cell(metric(row, "p99_ttft_ms"), 1),
                     cell(metric(row, "p99_tpot_ms"), 2), cell(metric(row, "p99_itl_ms"), 2));
  return out;
}

}  // namespace llmbench::app
