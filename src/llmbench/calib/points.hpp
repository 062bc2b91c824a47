#pragma once
/// @file
/// The evidence a calibration fits: measured points, each a workload (what load was put on the
/// server) and the figures measured under it. Points come from a team's own result files —
/// llmbench results (with their records when the records file sits beside them), `vllm bench
/// serve --save-result` JSON and SGLang `bench_serving` JSON or JSONL summaries — from a CSV of
/// published points (tests/data/calibration/README.md), or from live probes
/// (`calib::probe_plan`). docs/simulator.md "Calibration" describes the formats.

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::calib {

/// "Not reported" for a measured figure.
inline constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

/// The load of one point. Closed loop when `request_rate` is infinite (every request is ready at
/// once and at most `max_concurrency` are in flight: `vllm bench serve --request-rate inf
/// --max-concurrency C`), else Poisson arrivals at `request_rate`.
struct Workload {
  std::int64_t input_min = 1;  ///< prompt tokens, uniform integer in [input_min, input_max]
  std::int64_t input_max = 1;
  std::int64_t output_min = 1;  ///< output tokens (EOS ignored), uniform in [min, max]
  std::int64_t output_max = 1;
  std::int64_t num_prompts = 1;
  std::int64_t max_concurrency = 0;  ///< ≤ 0 = no cap
  double request_rate = std::numeric_limits<double>::infinity();
  /// Per-request lengths when the source lists them (records, `input_lens`); they replace the
  /// ranges above, request by request.
  std::vector<std::int64_t> input_lens;
  std::vector<std::int64_t> output_lens;
  std::uint64_t seed = 0;  ///< seeds the lengths drawn from the ranges
};

/// Figures of one point (milliseconds, seconds, tokens per second). `kMissing` where the source
/// did not report one.
struct Metrics {
  double ttft_mean_ms = kMissing;
  double ttft_median_ms = kMissing;
  double ttft_p99_ms = kMissing;
  double tpot_mean_ms = kMissing;
  double tpot_median_ms = kMissing;
  double tpot_p99_ms = kMissing;
  double e2e_mean_s = kMissing;
  /// Median inter-token latency: a decode step's time when most gaps are plain decode steps
  /// (the per-step evidence a mean TPOT mixes with prefill stalls).
  double itl_median_ms = kMissing;
  double output_tok_s_per_gpu = kMissing;  ///< output tokens / duration / GPUs
  double total_tok_s_per_gpu = kMissing;   ///< (input + output) tokens / duration / GPUs
};

/// One measured point.
struct Point {
  std::string label;  ///< "1024/1024 c8" (input/output/concurrency) unless the source names it
  /// Attributes for `--select` and `--holdout` (config, gpu, engine, engine_version, isl, osl,
  /// concurrency, date, base_url, file — the results file's name without its extension —, …),
  /// as strings.
  std::map<std::string, std::string> tags;
  Workload workload;
  Metrics measured;
  int num_gpus = 0;    ///< GPUs the per-GPU figures divide by; 0 = the engine spec's tp × dp
  std::string source;  ///< file and line, or URL
  /// llama.cpp: the KV cells each server slot still held from earlier runs when the point
  /// started, least recently used first (`chain_slot_history`); empty = a fresh server.
  std::vector<std::int64_t> slot_cells_before;
};

/// Reads a CSV of points (header row; columns of tests/data/calibration/README.md: gpu, engine,
/// engine_version, isl, osl, input_min, input_max, output_min, output_max, concurrency,
/// num_prompts, ttft_mean_ms, … , source_url; unknown columns become tags). Throws `Exception`
/// naming the file, line and column on a bad value or a missing required column.
std::vector<Point> read_points_csv(std::string_view text, const std::string& origin);

/// Reads one benchmark summary: a JSON object with vLLM's keys (`mean_ttft_ms`, `median_ttft_ms`,
/// `p99_ttft_ms`, `mean_tpot_ms`, …, `completed`, `duration`, `total_input_tokens`,
/// `total_output_tokens`, `max_concurrency`, `request_rate`), as `llmbench run/simulate`,
/// `vllm bench serve --save-result` and SGLang's `bench_serving` write; several for a JSONL file
/// (one per line). The workload comes from, in order: `input_lens` / `output_lens` arrays,
/// SGLang's `random_input_len` / `random_output_len` / `random_range_ratio`, llmbench's
/// `config_effective` (`random_input_len`, `random_output_len`, `random_range_ratio`), else
/// fixed lengths of the mean per request. Per-GPU throughput needs `num_gpus` (> 0) or is left for
/// the engine spec. Throws `Exception` naming the file (and line of a JSONL file).
std::vector<Point> read_summary_json(std::string_view text, const std::string& origin,
                                     int num_gpus);

/// Reads a points file by its content: a CSV (first line has commas and no '{') or summaries
/// (`read_summary_json`). For an llmbench results file whose `records_file` exists beside it, the
/// per-request lengths come from the records.
std::vector<Point> read_points_file(const std::string& path, int num_gpus);

/// A `key=value[,value…]` test on a point's tags (`--select`, `--holdout`).
struct Filter {
  std::string key;
  std::vector<std::string> values;
  /// True when the point has tag `key` equal to one of `values`; a value ending in '*' matches
  /// every tag that starts with the rest (`file=sweep-*`).
  [[nodiscard]] bool matches(const Point& p) const;
};
/// Parses "key=value[,value…]"; throws `Exception` with `flag` as the source otherwise.
Filter parse_filter(std::string_view text, const std::string& flag);

/// The points every filter of `select` matches (all of them, when `select` is empty).
std::vector<Point> select_points(const std::vector<Point>& points,
                                 const std::vector<Filter>& select);
/// Splits `points` into those no `holdout` filter matches (`fit`) and the rest (`held_out`).
void split_holdout(const std::vector<Point>& points, const std::vector<Filter>& holdout,
                   std::vector<Point>& fit, std::vector<Point>& held_out);

}  // namespace llmbench::calib
