#include "llmbench/report/table_export.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/metrics/summary.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>

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

}  // namespace

Table summary_table(const ReportInputs& inputs) {
  const auto axes = axis_columns(inputs);
  Table t;
  t.header = {"run", "sweep"};
  t.header.insert(t.header.end(), axes.begin(), axes.end());
  t.header.emplace_back("status");
  t.header.insert(t.header.end(), kSummaryColumns.begin(), kSummaryColumns.end());
  const auto add = [&](const std::string& name, const std::string& sweep, const json* point,
                       const json* results) {
    std::vector<json> row{name, sweep};
    for (const auto& axis : axes) {
      const json* values =
          point != nullptr && point->contains("axes") ? &(*point)["axes"] : nullptr;
      row.push_back(values != nullptr && values->contains(axis) ? axis_cell((*values)[axis])
                                                                : json(""));
    }
    row.emplace_back(point != nullptr ? point->value("status", "") : std::string("ok"));
    for (const auto key : kSummaryColumns) {
      json v = results != nullptr ? cell(*results, key) : json(nullptr);
      if (v.is_null() && point != nullptr)
        v = cell(*point, key);
      row.push_back(std::move(v));
    }
    t.rows.push_back(std::move(row));
  };
  for (const auto& run : inputs.runs) add(run.name, "", nullptr, &run.results);
  for (const auto& s : inputs.sweeps) {
    for (const auto& point : s.sweep.at("points")) {
      const RunData* run = point_run(s, point.value("index", std::size_t{0}));
      add(point_name(point), s.name, &point, run != nullptr ? &run->results : nullptr);
    }
  }
  return t;
}

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

}  // namespace llmbench::report
