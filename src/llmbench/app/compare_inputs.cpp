#include "llmbench/app/compare_inputs.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/name_table.hpp"
#include "llmbench/metrics/record_file.hpp"

#include <fmt/core.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

namespace llmbench::app {

namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr auto kFormatNames = make_name_table<InputFormat>({
    {InputFormat::LlmbenchRecords, "llmbench records"},
    {InputFormat::LlmbenchDetailed, "llmbench detailed arrays"},
    {InputFormat::Vllm, "vllm bench serve"},
});

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Exception(Error{what, path, -1});
}

/// The array at `key`, of `n` entries when `n` is given; throws naming the file and key.
const json& array_at(const json& doc, std::string_view key, const std::string& path,
                     std::optional<std::size_t> n = std::nullopt) {
  const auto it = doc.find(key);
  if (it == doc.end()) {
    fail(path, fmt::format("key '{}' missing (a vLLM result needs `vllm bench serve "
                           "--save-result --save-detailed`; an llmbench result its records "
                           "file or --save-detailed)",
                           key));
  }
  if (!it->is_array())
    fail(path, fmt::format("'{}' is not an array", key));
  if (n && it->size() != *n)
    fail(path, fmt::format("'{}' has {} entries, 'ttfts' has {}", key, it->size(), *n));
  return *it;
}

/// A number in seconds as ms; null is undefined (NaN). Throws naming key and index.
double ms_at(const json& array, std::size_t i, std::string_view key, const std::string& path) {
  const json& v = array[i];
  if (v.is_null())
    return kNaN;
  if (!v.is_number())
    fail(path, fmt::format("'{}'[{}] is not a number", key, i));
  return v.get<double>() * 1000.0;
}

/// The optional array `key` (of `n` entries), or null.
const json* optional_array(const json& doc, std::string_view key, const std::string& path,
                           std::size_t n) {
  return doc.contains(key) ? &array_at(doc, key, path, n) : nullptr;
}

json read_json(const std::string& path) {
  auto text = read_file(path);
  if (!text)
    fail(path, "cannot read: " + text.error().message);
  json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded())
    fail(path, "not valid JSON (nor a records .jsonl)");
  if (!doc.is_object())
    fail(path, "not a JSON object (a results file is one object)");
  return doc;
}

}  // namespace

std::string_view to_string(InputFormat format) noexcept {
  return kFormatNames.name(format);
}

analysis::RunSamples samples_from_arrays(const json& doc, const std::string& path) {
  const json& ttfts = array_at(doc, "ttfts", path);
  const std::size_t n = ttfts.size();
  const json& itls = array_at(doc, "itls", path, n);
  const json& output_lens = array_at(doc, "output_lens", path, n);
  const json& errors = array_at(doc, "errors", path, n);
  const json* latencies = optional_array(doc, "latencies", path, n);
  const json* e2els = optional_array(doc, "e2els", path, n);
  const json* tpots = optional_array(doc, "tpots", path, n);
  const auto duration = doc.find("duration");
  if (duration == doc.end() || !duration->is_number())
    fail(path, "key 'duration' (s) missing or not a number");
  analysis::RunSamples run;
  run.duration_s = duration->get<double>();
  for (std::size_t i = 0; i < n; ++i) {
    const bool failed = errors[i].is_string() && !errors[i].get<std::string>().empty();
    if (!output_lens[i].is_number_integer())
      fail(path, fmt::format("'output_lens'[{}] is not an integer", i));
    const auto len = output_lens[i].get<std::int64_t>();
    if (!itls[i].is_array())
      fail(path, fmt::format("'itls'[{}] is not an array", i));
    std::vector<double> gaps;
    for (std::size_t k = 0; k < itls[i].size(); ++k) {
      gaps.push_back(ms_at(itls[i], k, fmt::format("itls[{}]", i), path));
    }
    const double ttft = ms_at(ttfts, i, "ttfts", path);
    double latency = latencies ? ms_at(*latencies, i, "latencies", path) : kNaN;
    if (std::isnan(latency) && !std::isnan(ttft))
      latency = ttft + std::accumulate(gaps.begin(), gaps.end(), 0.0);
    double tpot = tpots ? ms_at(*tpots, i, "tpots", path) : kNaN;
    if (!tpots && len >= 2)
      tpot = (latency - ttft) / static_cast<double>(len - 1);
    const double e2el = e2els ? ms_at(*e2els, i, "e2els", path) : latency;
    run.failed.push_back(failed);
    run.ttft_ms.push_back(failed ? kNaN : ttft);
    run.tpot_ms.push_back(failed ? kNaN : tpot);
    run.e2el_ms.push_back(failed ? kNaN : e2el);
    run.itl_ms.push_back(failed ? std::vector<double>{} : std::move(gaps));
    run.output_tokens.push_back(failed ? 0 : len);
  }
  return run;
}

CompareInput read_compare_input(const std::string& path) {
  namespace fs = std::filesystem;
  CompareInput input{.path = path};
  if (fs::path(path).extension() == ".jsonl") {
    input.samples = analysis::run_samples(metrics::read_record_file(path).records);
    return input;
  }
  input.results = read_json(path);
  const json& doc = input.results;
  const bool llmbench = doc.contains("tool_version") && doc.contains("records_file");
  if (llmbench && doc["records_file"].is_string() &&
      !doc["records_file"].get<std::string>().empty()) {
    const fs::path records = fs::path(path).parent_path() / doc["records_file"].get<std::string>();
    if (fs::exists(records)) {
      input.samples = analysis::run_samples(metrics::read_record_file(records.string()).records);
      return input;
    }
  }
  if (!doc.contains("ttfts")) {
    fail(path, llmbench ? "its records file was not found beside it and it has no --save-detailed "
                          "arrays (key 'ttfts' missing)"
                        : "neither an llmbench result (no 'records_file') nor a `vllm bench serve "
                          "--save-result --save-detailed` result (key 'ttfts' missing)");
  }
  input.format = llmbench ? InputFormat::LlmbenchDetailed : InputFormat::Vllm;
  input.samples = samples_from_arrays(doc, path);
  return input;
}

}  // namespace llmbench::app
