#include "llmbench/app/compare_report.hpp"

#include "llmbench/app/what_if.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/core/name_table.hpp"
#include "llmbench/metrics/catalog.hpp"

#include <fmt/core.h>

#include <array>
#include <cmath>
#include <utility>

namespace llmbench::app {

namespace {

using nlohmann::json;

/// The one name table of `CompareFormat`.
constexpr auto kFormats = make_name_table<CompareFormat>({
    {CompareFormat::Text, "text"},
    {CompareFormat::Markdown, "markdown"},
    {CompareFormat::Json, "json"},
});

/// How a metric is printed: label, unit and factor from its value.
struct Display {
  std::string_view label;
  std::string_view unit;
  double factor;
};

Display display(analysis::Metric metric) noexcept {
  using analysis::Metric;
  // A latency prints as the metric catalog names it (the console table's labels), in ms.
  if (const auto* latency = metrics::find_latency_metric(analysis::to_string(metric)))
    return {latency->label, "ms", 1.0};
  switch (metric) {
    case Metric::Ttft:
    case Metric::Tpot:
    case Metric::Itl:
    case Metric::E2el:
      break;
    case Metric::ErrorRate:
      return {"Error rate", "%", 100.0};
    case Metric::OutputThroughput:
      return {"Output throughput", "tok/s", 1.0};
    case Metric::RequestThroughput:
      return {"Request throughput", "req/s", 1.0};
  }
  return {"?", "", 1.0};
}

std::string number(double v, bool sign = false) {
  if (std::isnan(v))
    return "n/a";
  return sign ? fmt::format("{:+.2f}", v) : fmt::format("{:.2f}", v);
}

std::string percent(double v) {
  return std::isnan(v) ? "n/a" : fmt::format("{:+.1f}%", v * 100.0);
}

std::string p_value(double p) {
  if (std::isnan(p))
    return "-";
  return p < 1e-4 ? std::string("<0.0001") : fmt::format("{:.4f}", p);
}

std::string describe(const CompareInput& input) {
  return fmt::format("{} ({}, {} requests)", input.path, to_string(input.format),
                     input.samples.failed.size());
}

/// One table row's cells.
std::vector<std::string> row_cells(const analysis::MetricComparison& m,
                                   const analysis::StatisticComparison& s, bool first) {
  const Display d = display(m.metric);
  return {first ? fmt::format("{} ({})", d.label, d.unit) : "",
          std::string(analysis::to_string(s.statistic)),
          number(s.a * d.factor),
          number(s.b * d.factor),
          number(s.difference * d.factor, true),
          percent(s.relative),
          std::isnan(s.ci.low) ? "n/a"
                               : fmt::format("[{}, {}]", number(s.ci.low * d.factor, true),
                                             number(s.ci.high * d.factor, true)),
          first ? p_value(m.p_adjusted) : "",
          first ? (m.verdict == analysis::Verdict::TooFewSamples
                       ? fmt::format("too few samples to test (smallest attainable p {:.3f})",
                                     m.min_attainable_p)
                       : std::string(analysis::to_string(m.verdict)))
                : ""};
}

constexpr std::array<std::string_view, 9> kHeader{
    "metric", "stat", "A", "B", "B-A", "rel", "95% CI of B-A", "p (Holm)", "verdict"};

void append_table(std::string& out, const std::vector<std::vector<std::string>>& rows,
                  bool markdown) {
  if (markdown) {
    out += "|";
    for (const auto& h : kHeader) out += fmt::format(" {} |", h);
    out += "\n|";
    for (std::size_t i = 0; i < kHeader.size(); ++i) out += i < 2 || i == 8 ? "---|" : "---:|";
    out += "\n";
    for (const auto& row : rows) {
      out += "|";
      for (const auto& cell : row) out += fmt::format(" {} |", cell);
      out += "\n";
    }
    return;
  }
  std::vector<std::size_t> width(kHeader.size());
  for (std::size_t i = 0; i < kHeader.size(); ++i) width[i] = kHeader[i].size();
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  const auto line = [&](const auto& cells) {
    std::string l;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string_view cell = cells[i];
      l += (i < 2 || i == 8) ? fmt::format("{:<{}}", cell, width[i])
                             : fmt::format("{:>{}}", cell, width[i]);
      if (i + 1 < cells.size())
        l += "  ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(kHeader);
  for (const auto& row : rows) line(row);
}

}  // namespace

CompareFormat compare_format_from_string(std::string_view name) {
  if (const auto format = kFormats.find(name))
    return *format;
  throw Exception(
      Error{fmt::format("unknown format '{}' (valid: {})", name, valid_compare_formats()),
            "--format", -1});
}

std::string valid_compare_formats() {
  return kFormats.names();
}

bool gates_passed(const std::vector<RunComparison>& comparisons) {
  for (const auto& c : comparisons) {
    for (const auto& g : c.gates) {
      if (!g.passed)
        return false;
    }
  }
  return true;
}

std::string compare_text(const std::vector<RunComparison>& comparisons,
                         const analysis::CompareOptions& options, bool markdown) {
  std::string out;
  for (const auto& c : comparisons) {
    out += markdown
               ? fmt::format("### {} against baseline {}\n\n", c.b->path, c.a->path)
               : fmt::format("Baseline A: {}\nB:          {}\n", describe(*c.a), describe(*c.b));
    if (markdown) {
      out += fmt::format("A: {}  \nB: {}\n\n", describe(*c.a), describe(*c.b));
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& m : c.metrics) {
      for (std::size_t i = 0; i < m.statistics.size(); ++i) {
        rows.push_back(row_cells(m, m.statistics[i], i == 0));
      }
    }
    append_table(out, rows, markdown);
    if (c.what_if)
      out += fmt::format("\n{}: {}\n", markdown ? "**Bottleneck**" : "Bottleneck",
                         c.what_if->statement);
    if (!c.gates.empty()) {
      std::size_t failed = 0;
      for (const auto& g : c.gates) failed += g.passed ? 0 : 1;
      out += failed == 0 ? "\nGate: PASS\n"
                         : fmt::format("\nGate: FAIL ({} of {} failed)\n", failed, c.gates.size());
      for (const auto& g : c.gates) out += fmt::format("{}{}\n", markdown ? "- " : "  ", g.message);
    }
    out += "\n";
  }
  out += fmt::format(
      "{} bootstrap resamples of blocks of {} consecutive requests (seed {}), {:g}% percentile "
      "intervals; Mann-Whitney p-values over block means, Holm-adjusted over the rank-tested "
      "metrics; significant: p < {:g} and the mean's interval excludes 0 (docs/compare.md)\n",
      options.bootstrap.resamples,
      options.block_requests > 0 ? std::to_string(options.block_requests) : std::string("sqrt(n)"),
      options.bootstrap.seed, options.bootstrap.confidence * 100, options.alpha);
  return out;
}

json compare_json(const std::vector<RunComparison>& comparisons,
                  const analysis::CompareOptions& options) {
  json doc{{"options",
            {{"resamples", options.bootstrap.resamples},
             {"confidence", options.bootstrap.confidence},
             {"alpha", options.alpha},
             {"block_requests", options.block_requests},
             {"seed", options.bootstrap.seed}}}};
  const auto input_json = [](const CompareInput& in) {
    return json{{"path", in.path},
                {"format", to_string(in.format)},
                {"requests", in.samples.failed.size()}};
  };
  if (!comparisons.empty())
    doc["baseline"] = input_json(*comparisons.front().a);
  json list = json::array();
  for (const auto& c : comparisons) {
    json entry = input_json(*c.b);
    json metrics = json::array();
    for (const auto& m : c.metrics) {
      json stats = json::array();
      for (const auto& s : m.statistics) {
        stats.push_back({{"statistic", analysis::to_string(s.statistic)},
                         {"a", finite_or_null(s.a)},
                         {"b", finite_or_null(s.b)},
                         {"difference", finite_or_null(s.difference)},
                         {"relative", finite_or_null(s.relative)},
                         {"ci_low", finite_or_null(s.ci.low)},
                         {"ci_high", finite_or_null(s.ci.high)}});
      }
      metrics.push_back(
          {{"metric", analysis::to_string(m.metric)},
           {"unit", m.metric == analysis::Metric::ErrorRate ? std::string_view("fraction")
                                                            : display(m.metric).unit},
           {"units_a", m.units_a},
           {"units_b", m.units_b},
           {"u", finite_or_null(m.rank.u)},
           {"z", finite_or_null(m.rank.z)},
           {"p_value", finite_or_null(m.rank.p_value)},
           {"p_adjusted", finite_or_null(m.p_adjusted)},
           {"min_attainable_p", finite_or_null(m.min_attainable_p)},
           {"verdict", analysis::to_string(m.verdict)},
           {"statistics", std::move(stats)}});
    }
    entry["metrics"] = std::move(metrics);
    json gates = json::array();
    for (const auto& g : c.gates) {
      gates.push_back({{"gate", g.gate.text},
                       {"measured", finite_or_null(g.measured)},
                       {"limit", finite_or_null(g.limit)},
                       {"passed", g.passed},
                       {"message", g.message}});
    }
    entry["gates"] = std::move(gates);
    entry["what_if"] = c.what_if ? what_if_json(*c.what_if) : json(nullptr);
    list.push_back(std::move(entry));
  }
  doc["comparisons"] = std::move(list);
  doc["gates_passed"] = gates_passed(comparisons);
  return doc;
}

}  // namespace llmbench::app
