#include "llmbench/report/report.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/metrics/catalog.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unistd.h>

namespace llmbench::report {

namespace {

using nlohmann::json;

constexpr std::size_t kWidth = 50;

using metrics::kLatencyMetrics;

/// This machine's name (gethostname); "" when it cannot be read.
std::string local_host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0)
    return "";
  return name.data();
}

// Python's "{:<40} {:<10}" of vLLM's result table, with the newline.
void line(std::string& out, std::string_view label, std::string_view value) {
  out += fmt::format("{:<40} {:<10}\n", label, value);
}
void line_int(std::string& out, std::string_view label, std::int64_t value) {
  line(out, label, fmt::format("{}", value));
}
// A metric with no samples (NaN) prints "n/a", never 0.
void line_float(std::string& out, std::string_view label, double value) {
  line(out, label, std::isnan(value) ? std::string("n/a") : fmt::format("{:.2f}", value));
}
// Python's "{s:{c}^{n}}": centered in kWidth, the odd fill character going to the right.
void section(std::string& out, std::string_view title, char fill) {
  const std::size_t pad = title.size() < kWidth ? kWidth - title.size() : 0;
  out.append(pad / 2, fill);
  out += title;
  out.append(pad - pad / 2, fill);
  out += '\n';
}

// mean/median/std/p<q>/min/max of one metric. The p<q> keys are those of `qs` when given (so
// every metric has the same keys; a percentile the stats lack is null), else the stats' own.
void add_stats(json& j, std::string_view key, const metrics::Stats& s,
               const std::vector<double>& qs) {
  using metrics::latency_key;
  j[latency_key("mean", key)] = finite_or_null(s.mean);
  j[latency_key("median", key)] = finite_or_null(s.median);
  j[latency_key("std", key)] = finite_or_null(s.stddev);
  if (qs.empty()) {
    for (const auto& [q, value] : s.percentiles) {
      j[latency_key(q, key)] = finite_or_null(value);
    }
  }
  for (double q : qs) {
    const auto it = std::find_if(s.percentiles.begin(), s.percentiles.end(),
                                 [q](const auto& p) { return p.first == q; });
    j[latency_key(q, key)] = it == s.percentiles.end() ? json(nullptr) : finite_or_null(it->second);
  }
  j[latency_key("min", key)] = finite_or_null(s.min);
  j[latency_key("max", key)] = finite_or_null(s.max);
}

}  // namespace

const std::vector<std::string_view>& percentile_metric_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    out.reserve(kLatencyMetrics.size());
    for (const auto& m : kLatencyMetrics) {
      out.push_back(m.key);
    }
    return out;
  }();
  return names;
}

void check_percentile_metrics(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (metrics::find_latency_metric(name) == nullptr) {
      throw Exception(Error{
          fmt::format("unknown metric '{}' (known: {})", name, metrics::latency_metric_names()),
          "--percentile-metrics"});
    }
  }
}

std::string percentile_label(double q) {
  return metrics::percentile_label(q);
}

std::string console_text(const metrics::Summary& s, const ConsoleOptions& options) {
  check_percentile_metrics(options.percentile_metrics);
  std::string out;
  section(out, " Serving Benchmark Result ", '=');
  line_int(out, "Successful requests:", static_cast<std::int64_t>(s.completed));
  line_int(out, "Failed requests:", static_cast<std::int64_t>(s.failed));
  if (options.max_concurrency) {
    line_int(out, "Maximum request concurrency:", *options.max_concurrency);
  }
  if (options.request_rate && std::isfinite(*options.request_rate)) {
    line_float(out, "Request rate configured (RPS):", *options.request_rate);
  }
  line_float(out, "Benchmark duration (s):", s.duration_s);
  line_int(out, "Total input tokens:", s.total_input_tokens);
  line_int(out, "Total generated tokens:", s.total_output_tokens);
  line_float(out, "Request throughput (req/s):", s.request_throughput);
  if (options.show_goodput) {
    line_float(out, "Request goodput (req/s):", s.request_goodput);
  }
  line_float(out, "Output token throughput (tok/s):", s.output_throughput);
  line_float(out, "Peak output token throughput (tok/s):", s.max_output_tokens_per_s);
  line_int(out, "Peak concurrent requests:", static_cast<std::int64_t>(s.max_concurrent_requests));
  line_float(out, "Total Token throughput (tok/s):", s.total_token_throughput);

  for (const auto& key : options.percentile_metrics) {
    const metrics::LatencyMetric& m = *metrics::find_latency_metric(key);
    const metrics::Stats& stats = s.*m.stats;
    section(out, m.header, '-');
    line_float(out, fmt::format("Mean {} (ms):", m.label), stats.mean);
    line_float(out, fmt::format("Median {} (ms):", m.label), stats.median);
    for (const auto& [q, value] : stats.percentiles) {
      // P50 is the median, printed once (as vLLM prints it).
      if (q == 50.0)
        continue;
      line_float(out, fmt::format("P{} {} (ms):", percentile_label(q), m.label), value);
    }
  }

  // llmbench's additions: what vLLM's table leaves out.
  if (!s.failures_by_kind.empty()) {
    section(out, "Failures by Kind", '-');
    for (const auto& [kind, count] : s.failures_by_kind) {
      line_int(out, fmt::format("Failed ({}):", kind), static_cast<std::int64_t>(count));
      // Why they failed: the most frequent messages, indented under their kind.
      const auto top = s.top_errors_by_kind.find(kind);
      if (top == s.top_errors_by_kind.end()) {
        continue;
      }
      for (const auto& m : top->second) {
        out += fmt::format("  {}x {}\n", m.count, m.message.empty() ? "(no message)" : m.message);
      }
    }
  }
  section(out, "Token Accounting", '-');
  // The two mismatch counts under the results JSON's names (token_count_mismatches is about
  // output tokens), so the console never shows one while the file holds the other.
  line_int(out, "Output token mismatches:", static_cast<std::int64_t>(s.token_count_mismatches));
  line_int(out, "Prompt token mismatches:", static_cast<std::int64_t>(s.prompt_token_mismatches));
  line_int(out, "Usage missing:", static_cast<std::int64_t>(s.usage_missing));
  if (s.requests_with_max_tokens > 0) {
    line_int(out, "Requested output tokens:", s.total_requested_output_tokens);
    line_int(out, "Finished before max_tokens:",
             static_cast<std::int64_t>(s.finished_before_max_tokens));
  }
  if (s.single_chunk_outputs > 0) {
    line_int(out,
             "Outputs in one chunk (no TPOT):", static_cast<std::int64_t>(s.single_chunk_outputs));
  }
  section(out, "Client Lateness", '-');
  line_float(out, "Median lateness (ms):", s.lateness_ms.median);
  // The highest percentile asked for (P99 with the defaults); the summary keeps no raw samples.
  if (!s.lateness_ms.percentiles.empty()) {
    const auto top =
        std::max_element(s.lateness_ms.percentiles.begin(), s.lateness_ms.percentiles.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    line_float(out, fmt::format("P{} lateness (ms):", percentile_label(top->first)), top->second);
  }
  line_float(out, "Max lateness (ms):", s.lateness_ms.max);
  // The wait for a slot under --max-concurrency (docs/metrics.md: slot − scheduled); only an open
  // loop with a cap has one, so the section is left out when no request waited.
  if (s.queue_wait_ms.count > 0 && s.queue_wait_ms.max > 0) {
    section(out, "Queue Wait", '-');
    line_float(out, "Mean queue wait (ms):", s.queue_wait_ms.mean);
    line_float(out, "Median queue wait (ms):", s.queue_wait_ms.median);
    line_float(out, "Max queue wait (ms):", s.queue_wait_ms.max);
  }
  if (!options.load_lines.empty()) {
    section(out, "Load Generator", '-');
    for (const auto& [label, value] : options.load_lines) {
      out += fmt::format("{:<40} {:<10}\n", label, value);
    }
  }
  out += std::string(kWidth, '=');
  out += '\n';
  return out;
}

std::vector<std::string> summary_warnings(const metrics::Summary& s) {
  std::vector<std::string> out;
  if (s.single_chunk_outputs > 0) {
    out.push_back(fmt::format(
        "{} of {} completed requests received all of their output (2 or more tokens) in one "
        "chunk: the stream was not incremental (a buffering proxy, or a server that does not "
        "stream), so their TPOT is undefined and left out of the TPOT figures",
        s.single_chunk_outputs, s.completed));
  }
  return out;
}

void print_console(std::FILE* out, const metrics::Summary& summary, const ConsoleOptions& options) {
  const std::string text = console_text(summary, options);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
  for (const auto& warning : summary_warnings(summary)) {
    log::warn("{}", warning);
  }
}

json results_json(const metrics::Summary& s, const RunInfo& info) {
  if (!info.extra.is_null() && !info.extra.is_object()) {
    throw Exception(Error{"must be a JSON object", "results extra"});
  }
  json j = json::object();
  // Run information (vLLM: date, endpoint_type, backend, model_id, tokenizer_id, num_prompts,
  // request_rate, burstiness, max_concurrency; the rest is llmbench's).
  j["date"] = info.date;
  j["endpoint_type"] =
      info.backend;  // vLLM writes both, endpoint_type "for backward compatibility"
  j["backend"] = info.backend;
  j["model_id"] = info.model_id;
  j["tokenizer_id"] = info.tokenizer_id;
  j["base_url"] = info.base_url;
  j["endpoint"] = info.endpoint;
  j["num_prompts"] = info.num_prompts;
  if (std::isinf(info.request_rate) && info.request_rate > 0) {
    j["request_rate"] = "inf";
  } else {
    j["request_rate"] = finite_or_null(info.request_rate);
  }
  j["burstiness"] = finite_or_null(info.burstiness);
  j["max_concurrency"] = info.max_concurrency < 0 ? json(nullptr) : json(info.max_concurrency);
  j["seed"] = info.seed;
  j["tool_version"] = info.tool_version;
  j["git_sha"] = info.git_sha;
  j["host"] = info.host.empty() ? local_host_name() : info.host;
  j["config_requested"] = info.config_requested;
  j["config_effective"] = info.config_effective;
  j["server_models"] = info.server_models;
  j["run_start_steady_ns"] = info.run_start_steady_ns;
  j["metric_percentiles"] = json::array();
  for (double q : info.percentiles) {
    j["metric_percentiles"].push_back(finite_or_null(q));
  }
  const bool has_slo = info.slo.ttft_ms || info.slo.tpot_ms || info.slo.e2el_ms;
  json slo = has_slo ? json::object() : json(nullptr);
  if (info.slo.ttft_ms) {
    slo["ttft"] = finite_or_null(*info.slo.ttft_ms);
  }
  if (info.slo.tpot_ms) {
    slo["tpot"] = finite_or_null(*info.slo.tpot_ms);
  }
  if (info.slo.e2el_ms) {
    slo["e2el"] = finite_or_null(*info.slo.e2el_ms);
  }
  j["goodput_slo_ms"] = slo;

  // Shared metrics, vLLM's keys.
  j["duration"] = finite_or_null(s.duration_s);
  j["completed"] = s.completed;
  j["total_input_tokens"] = s.total_input_tokens;
  j["total_output_tokens"] = s.total_output_tokens;
  j["request_throughput"] = finite_or_null(s.request_throughput);
  j["request_goodput"] = has_slo ? finite_or_null(s.request_goodput) : json(nullptr);
  j["output_throughput"] = finite_or_null(s.output_throughput);
  j["total_token_throughput"] = finite_or_null(s.total_token_throughput);
  j["max_output_tokens_per_s"] = finite_or_null(s.max_output_tokens_per_s);
  j["max_concurrent_requests"] = s.max_concurrent_requests;
  for (const auto& m : kLatencyMetrics) {
    add_stats(j, m.key, s.*m.stats, info.percentiles);
  }

  // llmbench's counts.
  j["total_requests"] = s.total;
  j["failed"] = s.failed;
  j["failures_by_kind"] = json::object();
  for (const auto& [kind, count] : s.failures_by_kind) {
    j["failures_by_kind"][kind] = count;
  }
  j["good_requests"] = s.good_requests;
  j["token_count_mismatches"] = s.token_count_mismatches;
  j["prompt_token_mismatches"] = s.prompt_token_mismatches;
  j["usage_missing"] = s.usage_missing;
  j["single_chunk_outputs"] = s.single_chunk_outputs;
  j["finished_before_max_tokens"] = s.finished_before_max_tokens;
  j["total_requested_output_tokens"] = s.total_requested_output_tokens;
  j["requests_with_max_tokens"] = s.requests_with_max_tokens;
  j["top_errors_by_kind"] = json::object();
  for (const auto& [kind, messages] : s.top_errors_by_kind) {
    json list = json::array();
    for (const auto& m : messages) {
      list.push_back(json{{"message", m.message}, {"count", m.count}});
    }
    j["top_errors_by_kind"][kind] = std::move(list);
  }

  if (info.extra.is_object()) {
    for (const auto& [key, value] : info.extra.items()) {
      j[key] = value;
    }
  }
  return j;
}

void write_json_file(const std::string& path, const nlohmann::json& document) {
  write_text_file(path,
                  document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                  "results");
}

void write_text_file(const std::string& path, std::string_view text, std::string_view what_file) {
  const std::string temp = fmt::format("{}.tmp.{}", path, static_cast<long>(::getpid()));
  auto fail = [&](std::string_view what, int error) {
    std::remove(temp.c_str());
    throw Exception(
        Error{fmt::format("cannot write {}: {}: {}", what_file, what, std::strerror(error)), path});
  };
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr) {
    fail(fmt::format("cannot create '{}'", temp), errno);
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size() &&
                       std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
  const int write_errno = errno;
  if (std::fclose(file) != 0 || !written) {
    fail("write failed", written ? errno : write_errno);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    fail(fmt::format("cannot rename '{}' to it", temp), errno);
  }
}

}  // namespace llmbench::report
