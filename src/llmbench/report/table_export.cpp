#include "llmbench/report/table_export.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/report/detail/data_util.hpp"
#include "llmbench/report/run_config.hpp"
#include "llmbench/report/verdicts.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace llmbench::report {

namespace {

using nlohmann::json;

/// The value of `key` in `j` when it is a number or a string, else null.
json cell(const json& j, std::string_view key) {
  const auto it = j.find(key);
  if (it == j.end() || !(it->is_number() || it->is_string()))
    return nullptr;
  return *it;
}

/// Names of every sweep's axes, in first-seen order.
std::vector<std::string> axis_columns(const ReportInputs& inputs) {
  std::vector<std::string> names;
  for (const auto& s : inputs.sweeps) {
    for (const auto& axis : s.sweep.at("axes")) {
      const std::string name = axis.value("name", "");
      if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
    }
  }
  return names;
}

/// The loaded run of the sweep point with `index`, or null when its results were not read.
const RunData* point_run(const SweepData& s, std::size_t index) {
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    if (s.point_index[i] == index)
      return &s.points[i];
  }
  return nullptr;
}

/// An axis value as its cell: a whole number as an integer (the sweep JSON may hold 4 as 4.0),
/// anything else as it is.
json axis_cell(const json& v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.007199254740992e15)
      return static_cast<std::int64_t>(d);
  }
  return v;
}

void add_records(const RunData& run, Table& t) {
  if (!run.records_loaded) {
    throw Exception(
        Error{fmt::format("has no per-request records ({})", run.records_note), run.source, -1});
  }
  std::vector<double> itl;
  for (const auto& r : run.records) {
    const auto lat = r.ok() ? metrics::request_latency(r) : metrics::RequestLatency{};
    itl.clear();
    if (r.ok())
      metrics::append_itl_ms(r, itl);
    const double itl_mean = itl.empty() ? std::nan("")
                                        : std::accumulate(itl.begin(), itl.end(), 0.0) /
                                              static_cast<double>(itl.size());
    const auto seconds = [](TimeNs ns) { return ns >= 0 ? json(ns_to_s(ns)) : json(nullptr); };
    t.rows.push_back({run.name, r.id, r.warmup,
                      r.ok() ? std::string("ok") : std::string(metrics::to_string(r.error_kind)),
                      r.http_status, seconds(r.scheduled_ns), seconds(r.sent_ns),
                      finite_or_null(lat.ttft_ms), finite_or_null(lat.tpot_ms),
                      finite_or_null(itl_mean), finite_or_null(lat.e2el_ms),
                      metrics::input_token_count(r), metrics::output_token_count(r),
                      r.chunks.size(), r.finish_reason, r.error_message});
  }
}

/// A number as CSV writes it: integers as they are, others in shortest round-trip form.
std::string number_text(const json& v) {
  if (v.is_number_unsigned())
    return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer())
    return std::to_string(v.get<std::int64_t>());
  return fmt::format("{}", v.get<double>());
}

std::string csv_field(const json& v) {
  if (v.is_null())
    return "";
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  if (v.is_number())
    return number_text(v);
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\r\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (const char c : s) {
    out += c;
    if (c == '"')
      out += '"';
  }
  return out + "\"";
}

std::string markdown_field(const json& v) {
  if (v.is_null())
    return "n/a";
  if (v.is_boolean())
    return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer() || v.is_number_unsigned())
    return number_text(v);
  if (v.is_number())
    return fmt::format("{:.2f}", v.get<double>());
  const std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  std::string out;
  for (const char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

/// One row of a summary: a run, or a sweep point (with its sweep row, and its results when they
/// were read).
struct RowSource {
  std::string name;
  std::string sweep;
  const json* point = nullptr;
  const json* results = nullptr;
  double load = std::nan("");   ///< the point's first load axis value (sorting)
  std::string config;           ///< the point's other axis values (sorting)
  std::size_t config_rank = 0;  ///< the order in which the sweep first reached `config`
};

std::vector<RowSource> row_sources(const ReportInputs& inputs) {
  std::vector<RowSource> out;
  for (const auto& run : inputs.runs) {
    out.push_back({.name = run.name,
                   .sweep = "",
                   .point = nullptr,
                   .results = &run.results,
                   .load = std::nan(""),
                   .config = "",
                   .config_rank = 0});
  }
  for (const auto& s : inputs.sweeps) {
    std::vector<std::string> configs;
    for (const auto& point : s.sweep.at("points")) {
      const RunData* run = point_run(s, point.value("index", std::size_t{0}));
      RowSource r{.name = point_name(point),
                  .sweep = s.name,
                  .point = &point,
                  .results = run != nullptr ? &run->results : nullptr,
                  .load = std::nan(""),
                  .config = "",
                  .config_rank = 0};
      const json axes = point.value("axes", json::object());
      for (const auto& [axis, value] : axes.items()) {
        if ((axis == "max-concurrency" || axis == "request-rate") && std::isnan(r.load))
          r.load =
              value.is_number() ? value.get<double>() : std::numeric_limits<double>::infinity();
        else
          r.config += axis + "=" + value_text(value) + " ";
      }
      std::size_t rank = 0;
      while (rank < configs.size() && configs[rank] != r.config) ++rank;
      if (rank == configs.size())
        configs.push_back(r.config);
      r.config_rank = rank;
      out.push_back(std::move(r));
    }
  }
  return out;
}

/// The configuration cells of `r` (`kConfigColumns`), `differs` from the rows' differences.
std::vector<json> config_cells(const RowSource& r, const RunConfig& config, std::string differs) {
  static const json kNone = json::object();
  const json& res = r.results != nullptr ? *r.results : (r.point != nullptr ? *r.point : kNone);
  std::string verdict;
  for (const auto& b : run_verdict(r.results != nullptr ? *r.results : kNone, r.point).badges())
    verdict += (verdict.empty() ? "" : ", ") + b.text;
  const json completed_cell = cell(res, "completed");
  const double completed = completed_cell.is_number() ? completed_cell.get<double>() : 0.0;
  const auto per_request = [&](const char* key) {
    const auto it = res.find(key);
    return completed > 0 && it != res.end() && it->is_number() ? json(it->get<double>() / completed)
                                                               : json(nullptr);
  };
  const json& c = res.contains("config_effective") ? res["config_effective"] : kNone;
  return {verdict,
          std::move(differs),
          cell(res, "model_id"),
          cell(res, "backend"),
          cell(c, "dataset_name"),
          per_request("total_input_tokens"),
          per_request("total_output_tokens"),
          cell(res, "num_prompts"),
          cell(res, "request_rate"),
          cell(res, "max_concurrency"),
          std::isnan(config.gpus) ? json(nullptr) : json(config.gpus),
          cell(res, "date"),
          cell(res, "git_sha")};
}

/// The configurations of `rows` and their differences.
std::pair<std::vector<RunConfig>, std::vector<KnobDifference>> configs_of(
    const std::vector<RowSource>& rows) {
  std::vector<RunConfig> configs;
  configs.reserve(rows.size());
  for (const auto& r : rows)
    configs.push_back(r.results != nullptr ? run_config(*r.results) : RunConfig{});
  std::vector<const RunConfig*> with;  // rows without results (failed points) have no knobs
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].results != nullptr)
      with.push_back(&configs[i]);
  }
  auto diffs = knob_differences(with);
  // Per row: the differences re-indexed to every row ("" for a row without results).
  std::vector<KnobDifference> all = diffs;
  for (auto& d : all) {
    d.values.clear();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto it = configs[i].knobs.find(d.knob);
      d.values.push_back(rows[i].results == nullptr     ? std::string()
                         : it != configs[i].knobs.end() ? it->second
                                                        : std::string("unset"));
    }
  }
  return {std::move(configs), std::move(all)};
}

}  // namespace

namespace {

Table summary_table_of(const ReportInputs& inputs) {
  const auto axes = axis_columns(inputs);
  Table t;
  t.header = {"run", "sweep"};
  t.header.insert(t.header.end(), axes.begin(), axes.end());
  t.header.emplace_back("status");
  t.header.insert(t.header.end(), kConfigColumns.begin(), kConfigColumns.end());
  t.header.insert(t.header.end(), kSummaryColumns.begin(), kSummaryColumns.end());
  const auto rows = row_sources(inputs);
  const auto [configs, diffs] = configs_of(rows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowSource& r = rows[i];
    std::vector<json> row{r.name, r.sweep};
    for (const auto& axis : axes) {
      const json* values =
          r.point != nullptr && r.point->contains("axes") ? &(*r.point)["axes"] : nullptr;
      row.push_back(values != nullptr && values->contains(axis) ? axis_cell((*values)[axis])
                                                                : json(""));
    }
    // A sweep point's one verdict where its sweep wrote one (docs/sweep.md, "Verdict (one
    // per run and per point)"): never "ok" for a point the sweep found invalid.
    row.emplace_back(r.point != nullptr ? r.point->value("verdict", r.point->value("status", ""))
                                        : std::string("ok"));
    for (auto& c : config_cells(r, configs[i], describe_config(diffs, i, diffs.size())))
      row.push_back(std::move(c));
    for (const auto key : kSummaryColumns) {
      json v = r.results != nullptr ? cell(*r.results, key) : json(nullptr);
      if (v.is_null() && r.point != nullptr)
        v = cell(*r.point, key);
      row.push_back(std::move(v));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table compact_table_of(const ReportInputs& inputs) {
  auto rows = row_sources(inputs);
  // Sweep points by configuration, then load; runs first, in the order given.
  std::stable_sort(rows.begin(), rows.end(), [](const RowSource& a, const RowSource& b) {
    if (a.sweep != b.sweep)
      return a.sweep.empty() && !b.sweep.empty();
    if (a.config_rank != b.config_rank)
      return a.config_rank < b.config_rank;
    return a.load < b.load;
  });
  const auto [configs, diffs] = configs_of(rows);
  Table t;
  t.header = {"run"};
  if (!diffs.empty())
    t.header.emplace_back("differs");
  const std::vector<std::pair<std::string, std::string>> metrics{{"failed", "failed"},
                                                                 {"request_throughput", "req/s"},
                                                                 {"output_throughput", "out tok/s"},
                                                                 {"median_ttft_ms", "TTFT p50"},
                                                                 {"p99_ttft_ms", "TTFT p99"},
                                                                 {"p99_tpot_ms", "TPOT p99"},
                                                                 {"p99_itl_ms", "ITL p99"},
                                                                 {"p99_e2el_ms", "E2EL p99"}};
  t.header.emplace_back("verdict");
  for (const auto& [key, label] : metrics) t.header.push_back(label);
  // A number as a comment reads it: whole above 100, else as to_markdown writes it.
  const auto shown = [](json v) {
    if (v.is_number_float() && std::fabs(v.get<double>()) >= 100)
      return json(static_cast<std::int64_t>(std::llround(v.get<double>())));
    return v;
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowSource& r = rows[i];
    // A sweep point is named by its index; what it was is in `differs`.
    std::vector<json> row{r.point != nullptr ? r.name.substr(0, r.name.find(' ')) : r.name};
    if (!diffs.empty())
      row.emplace_back(describe_config(diffs, i, 3));
    // The verdict: only what is not healthy ("invalid, 20 spikes"), else "ok".
    std::string verdict;
    static const json kNone = json::object();
    for (const auto& b : run_verdict(r.results != nullptr ? *r.results : kNone, r.point).badges()) {
      if (b.tone != Tone::Good)
        verdict += (verdict.empty() ? "" : ", ") + b.text;
    }
    const std::string status =
        r.point != nullptr ? r.point->value("verdict", r.point->value("status", "")) : "ok";
    row.emplace_back(status != "ok" ? status : verdict.empty() ? std::string("ok") : verdict);
    for (const auto& [key, label] : metrics) {
      json v = r.results != nullptr ? cell(*r.results, key) : json(nullptr);
      if (v.is_null() && r.point != nullptr)
        v = cell(*r.point, key);
      row.push_back(shown(std::move(v)));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string to_compact_markdown_of(const ReportInputs& inputs) {
  const auto rows = row_sources(inputs);
  // What every row with results shares: its header lines with one text across the rows.
  std::vector<RunConfig> configs;
  for (const auto& r : rows) {
    if (r.results != nullptr)
      configs.push_back(run_config(*r.results));
  }
  std::string shared;
  if (!configs.empty()) {
    for (const auto& line : configs.front().lines) {
      if (line.key == "date" || line.key == "host")
        continue;
      bool same = true;
      for (const auto& c : configs) {
        same = same && std::any_of(c.lines.begin(), c.lines.end(), [&](const ConfigLine& l) {
                 return l.key == line.key && l.text == line.text;
               });
      }
      if (same)
        shared += fmt::format("{}**{}** {}", shared.empty() ? "" : " · ", line.label, line.text);
    }
  }
  std::string out = shared.empty() ? std::string() : shared + "\n\n";
  out += to_markdown(compact_table(inputs));
  for (const auto& s : inputs.sweeps) {
    std::vector<RunVerdict> verdicts;
    for (const auto& point : s.sweep.at("points")) {
      const RunData* run = point_run(s, point.value("index", std::size_t{0}));
      verdicts.push_back(run_verdict(run != nullptr ? run->results : json::object(), &point));
    }
    for (const auto& h : sweep_headlines(s.sweep, verdicts)) {
      if (h.key == "knee" || h.key == "slo" || h.key == "profile" || h.key == "slo_settings" ||
          h.key == "predict")
        out += fmt::format("\n- **{}** ({}): {}", h.title, s.name, h.text);
    }
  }
  return out.back() == '\n' ? out : out + "\n";
}

}  // namespace

Table records_table(const ReportInputs& inputs) {
  Table t;
  t.header = {"run",           "id",          "warmup",        "status",
              "http_status",   "scheduled_s", "sent_s",        "ttft_ms",
              "tpot_ms",       "itl_mean_ms", "e2el_ms",       "input_tokens",
              "output_tokens", "chunks",      "finish_reason", "error_message"};
  for (const auto& run : inputs.runs) add_records(run, t);
  for (const auto& s : inputs.sweeps) {
    for (const auto& run : s.points) add_records(run, t);
  }
  return t;
}

std::string to_csv(const Table& table) {
  std::string out;
  const auto line = [&out](const auto& cells, auto&& field) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0)
        out += ',';
      out += field(cells[i]);
    }
    out += '\n';
  };
  line(table.header, [](const std::string& h) { return csv_field(json(h)); });
  for (const auto& row : table.rows) line(row, [](const json& v) { return csv_field(v); });
  return out;
}

std::string to_markdown(const Table& table) {
  std::string out;
  const auto line = [&out](const auto& cells, auto&& field) {
    out += '|';
    for (const auto& c : cells) out += " " + field(c) + " |";
    out += '\n';
  };
  line(table.header, [](const std::string& h) { return markdown_field(json(h)); });
  out += '|';
  for (std::size_t i = 0; i < table.header.size(); ++i) out += "---|";
  out += '\n';
  for (const auto& row : table.rows) line(row, [](const json& v) { return markdown_field(v); });
  return out;
}

Table summary_table(const ReportInputs& inputs) {
  return detail::reading_files([&] { return summary_table_of(inputs); });
}

Table compact_table(const ReportInputs& inputs) {
  return detail::reading_files([&] { return compact_table_of(inputs); });
}

std::string to_compact_markdown(const ReportInputs& inputs) {
  return detail::reading_files([&] { return to_compact_markdown_of(inputs); });
}

namespace {

struct ExportFormatName {
  ExportFormat format = ExportFormat::Html;
  std::string_view name;
};

/// The one name table of `--format`: parsing, the "valid: ..." message and the help.
constexpr std::array<ExportFormatName, 3> kExportFormats{{
    {.format = ExportFormat::Html, .name = "html"},
    {.format = ExportFormat::Csv, .name = "csv"},
    {.format = ExportFormat::Markdown, .name = "markdown"},
}};

}  // namespace

std::string export_format_names() {
  std::string out;
  for (const auto& f : kExportFormats) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

ExportFormat parse_export_format(const std::string& text) {
  for (const auto& f : kExportFormats) {
    if (f.name == text)
      return f.format;
  }
  throw Exception(Error{fmt::format("unknown format '{}' (valid: {})", text, export_format_names()),
                        "--format", -1});
}

std::string export_text(const ReportInputs& inputs, ExportFormat format, bool per_request,
                        bool compact) {
  if (compact)
    return to_compact_markdown(inputs);
  const Table table = per_request ? records_table(inputs) : summary_table(inputs);
  return format == ExportFormat::Csv ? to_csv(table) : to_markdown(table);
}

}  // namespace llmbench::report
