// `llmbench history --history PATH [list | trend METRIC | regress --baseline ID]`: the runs
// recorded with `run --history` / `sweep --history` (report/history.hpp), filtered by label,
// model and time; a metric's trend; and regressions against a baseline run with the statistics
// of `compare` (docs/compare.md "History"). `regress` exits 1 when a run regressed.

#include "llmbench/cli/commands.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/suggest.hpp"
#include "llmbench/report/history.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

namespace {

using report::records_reachable;
using report::summary_number;

struct HistoryFlags {
  std::string path;
  std::vector<std::string> action{"list"};
  report::HistoryFilter filter;
  std::int64_t baseline = 0;
  double min_change = 0.05;
};

std::string cell(double v) {
  return std::isnan(v) ? "n/a" : fmt::format("{:.2f}", v);
}

int list(const std::vector<report::HistoryEntry>& entries) {
  std::printf("%-4s %-20s %-11s %-12s %-18s %6s %6s %10s %10s %10s %10s %-8s %s\n", "id",
              "time (UTC)", "kind", "label", "model", "done", "failed", "ttft_ms", "tpot_ms",
              "p99_e2el", "out_tok/s", "git", "records");
  for (const auto& e : entries) {
    std::printf("%-4lld %-20s %-11s %-12s %-18s %6s %6s %10s %10s %10s %10s %-8s %s\n",
                static_cast<long long>(e.id), e.time_utc.c_str(), e.kind.c_str(), e.label.c_str(),
                e.model.c_str(), fmt::format("{:g}", summary_number(e, "completed")).c_str(),
                fmt::format("{:g}", summary_number(e, "failed")).c_str(),
                cell(summary_number(e, "mean_ttft_ms")).c_str(),
                cell(summary_number(e, "mean_tpot_ms")).c_str(),
                cell(summary_number(e, "p99_e2el_ms")).c_str(),
                cell(summary_number(e, "output_throughput")).c_str(),
                e.git_sha.substr(0, 8).c_str(), records_reachable(e) ? "yes" : "no");
  }
  return 0;
}

int trend(const std::vector<report::HistoryEntry>& entries, const std::string& metric) {
  bool any = false;
  for (const auto& e : entries) any = any || !std::isnan(summary_number(e, metric));
  if (!any) {
    const auto keys = report::summary_keys(entries);
    std::string hint = did_you_mean(metric, keys);
    if (hint.empty()) {
      hint = keys.empty() ? " (no run recorded)"
                          : fmt::format(
                                " ({} metrics recorded, such as mean_ttft_ms, p99_ttft_ms, "
                                "output_throughput, error_rate)",
                                keys.size());
    }
    throw Exception(Error{fmt::format("no run has '{}'{}", metric, hint), "trend", -1});
  }
  std::printf("%-4s %-20s %-12s %12s %10s %10s\n", "id", "time (UTC)", "label", metric.c_str(),
              "vs first", "vs prev");
  double first = std::nan("");
  double prev = std::nan("");
  for (const auto& e : entries) {
    const double v = summary_number(e, metric);
    if (std::isnan(first))
      first = v;
    const auto rel = [&](double base) {
      return std::isnan(base) || base == 0 || std::isnan(v)
                 ? std::string("-")
                 : fmt::format("{:+.1f}%", (v - base) / base * 100.0);
    };
    std::printf("%-4lld %-20s %-12s %12s %10s %10s\n", static_cast<long long>(e.id),
                e.time_utc.c_str(), e.label.c_str(), cell(v).c_str(), rel(first).c_str(),
                rel(prev).c_str());
    if (!std::isnan(v))
      prev = v;
  }
  return 0;
}

int regress(const report::History& history, const std::vector<report::HistoryEntry>& entries,
            const HistoryFlags& f) {
  const auto base = history.get(f.baseline);
  if (!base)
    throw Exception(Error{fmt::format("no run with id {}", f.baseline), "--baseline", -1});
  int regressed = 0;
  for (const auto& e : entries) {
    if (e.id == base->id)
      continue;
    const auto [found, full] = report::run_regressions(*base, e, f.min_change);
    std::string what;
    for (const auto& r : found) what += (what.empty() ? "" : ", ") + r;
    std::printf("run %lld (%s%s): %s [%s]\n", static_cast<long long>(e.id), e.time_utc.c_str(),
                e.label.empty() ? "" : (", " + e.label).c_str(),
                found.empty() ? "ok" : ("REGRESSED: " + what).c_str(),
                full ? "records: compare statistics" : "summary only: weaker rule");
    regressed += found.empty() ? 0 : 1;
  }
  std::printf("%d of %zu runs regressed against baseline run %lld\n", regressed,
              entries.size() - (entries.empty() ? 0 : 1), static_cast<long long>(base->id));
  return regressed > 0 ? 1 : 0;
}

int execute_history(const HistoryFlags& f) {
  if (f.path.empty())
    throw Exception(Error{"needs the database path", "--history", -1});
  if (!std::filesystem::exists(f.path))
    throw Exception(Error{"no such history database", f.path, -1});
  const report::History history(f.path);
  const auto entries = history.list(f.filter);
  const std::string& action = f.action.front();
  if (action == "list" && f.action.size() == 1)
    return list(entries);
  if (action == "trend" && f.action.size() == 2)
    return trend(entries, f.action[1]);
  if (action == "regress" && f.action.size() == 1) {
    if (f.baseline <= 0)
      throw Exception(
          Error{"regress needs --baseline ID (an id of `history list`)", "--baseline", -1});
    return regress(history, entries, f);
  }
  throw Exception(
      Error{"expected 'list', 'trend METRIC' or 'regress --baseline ID'", "history", -1});
}

}  // namespace

Command add_history_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "history", "Runs recorded with --history: list, a metric's trend, regressions");
  auto f = std::make_shared<HistoryFlags>();
  sub->add_option("ACTION", f->action, "list (default) | trend METRIC | regress --baseline ID");
  sub->add_option("--history", f->path, "The SQLite history database")->required();
  sub->add_option("--label", f->filter.label, "Only runs with this label");
  sub->add_option("--model", f->filter.model, "Only runs of this model");
  sub->add_option("--since", f->filter.since, "Only runs at or after this UTC time (ISO 8601)");
  sub->add_option("--until", f->filter.until, "Only runs before this UTC time (ISO 8601)");
  sub->add_option("--baseline", f->baseline, "regress: the id of the baseline run");
  sub->add_option("--min-change", f->min_change,
                  "regress: smallest relative change of a mean that counts (default 0.05)");
  return [f] { return execute_history(*f); };
}

}  // namespace llmbench::cli
