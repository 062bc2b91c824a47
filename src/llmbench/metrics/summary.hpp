#pragma once
/// @file
/// Pure functions from `RequestRecord`s to the benchmark's numbers, exactly as DESIGN.md §3 and
/// docs/metrics.md define them.

#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/token_runs.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::metrics {

/// Percentile of an ascending-sorted sample with linear interpolation between order statistics,
/// numpy's default (`numpy.percentile(a, q, method="linear")`): rank = (n-1)·q/100, value =
/// a[floor] + (a[ceil]-a[floor])·frac. `q` in [0, 100]. Returns NaN for an empty sample.
double percentile_sorted(const std::vector<double>& sorted, double q);

/// Distribution summary of one metric. Std is the population standard deviation (numpy.std,
/// ddof=0, as vLLM reports it). All fields are 0 and `count` 0 for an empty sample.
struct Stats {
  std::size_t count = 0;
  double mean = 0, median = 0, std = 0, min = 0, max = 0;
  std::vector<std::pair<double, double>> percentiles;  ///< (q, value) in the order asked
};

/// Summarizes `values` (any order) at the percentiles `qs` (each in [0, 100]). O(n): the
/// percentile ranks are found by selection (`std::nth_element`), not a full sort, with the same
/// values `percentile_sorted` gives on the sorted sample.
Stats describe(std::vector<double> values, const std::vector<double>& qs);

/// Service-level objectives for goodput (`--goodput ttft:MS tpot:MS e2el:MS`), in ms.
struct Slo {
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::optional<double> e2el_ms;
};

/// Parses "ttft:500 tpot:50 e2el:10000" items (one per vector element); throws `Exception` naming
/// `--goodput` and the bad item on an unknown key or a non-positive/non-numeric value.
Slo parse_slo(const std::vector<std::string>& items);

/// Fills `Chunk::tokens` where unknown (-1) so the chunks sum to the request's output token count
/// N (server usage if present, else `output_tokens_local`, else one token per chunk). Unknown
/// chunks share what known chunks leave by their byte counts (largest-remainder rounding, at least
/// one token per chunk when possible); this is an estimate until a local tokenizer counts them.
void assign_chunk_tokens(RequestRecord& record);

/// Output token count N used by every metric: `output_tokens` (server usage) when ≥ 0, else
/// `output_tokens_local`, else the sum of chunk tokens (unknown chunks count 1).
std::int64_t output_token_count(const RequestRecord& record) noexcept;

/// Per-request derived latencies in ms; NaN where undefined (e.g. TPOT with N < 2).
struct RequestLatency {
  double ttft_ms;        ///< first output chunk − sent
  double ttfat_ms;       ///< first answer chunk − sent (excludes reasoning)
  double ttft_sched_ms;  ///< first output chunk − scheduled (queue-inclusive)
  double e2el_ms;        ///< last output chunk − sent (done − sent if no output)
  double e2el_sched_ms;  ///< as e2el from scheduled
  double tpot_ms;        ///< (last − first output chunk) / (N − 1), N ≥ 2
  double lateness_ms;    ///< sent − scheduled
};

/// Computes the per-request latencies of one completed record.
RequestLatency request_latency(const RequestRecord& record) noexcept;

/// Appends this record's per-token ITL samples (ms) to `out`: for each chunk after the first, its
/// gap to the previous chunk divided evenly over its tokens, one sample per token.
void append_itl_ms(const RequestRecord& record, std::vector<double>& out);
/// Appends the raw gaps between consecutive output chunks (ms), one per chunk after the first.
void append_inter_chunk_ms(const RequestRecord& record, std::vector<double>& out);

/// Options for `summarize`.
struct SummaryOptions {
  std::vector<double> percentiles{50, 90, 95, 99};  ///< `--metric-percentiles`
  Slo slo;                                          ///< `--goodput`
};

/// Everything the console and JSON reports print for a run.
struct Summary {
  std::size_t total = 0;      ///< non-warm-up requests recorded
  std::size_t completed = 0;  ///< ok non-warm-up requests
  std::size_t failed = 0;
  std::map<std::string, std::size_t> failures_by_kind;  ///< `to_string(ErrorKind)` → count
  double duration_s = 0;  ///< first send → last completion over non-warm-up requests
  std::int64_t total_input_tokens = 0;            ///< Σ input tokens of completed requests (usage,
                                                  ///< else the local count, else prompt_len)
  std::int64_t total_output_tokens = 0;           ///< Σ N of completed requests
  double request_throughput = 0;                  ///< completed / duration (req/s)
  double output_throughput = 0;                   ///< Σ N / duration (tok/s)
  double total_token_throughput = 0;              ///< (Σ input + Σ N) / duration (tok/s)
  std::size_t good_requests = 0;                  ///< completed requests meeting every SLO
  double request_goodput = 0;                     ///< good / duration (req/s)
  double max_output_tokens_per_s = 0;             ///< peak of output tokens in 1 s windows
  std::size_t max_concurrent_requests = 0;        ///< peak of requests in flight (sent..done)
  std::size_t token_count_mismatches = 0;         ///< server usage ≠ local count, both known
  std::size_t usage_missing = 0;                  ///< completed requests without server usage
  std::size_t output_tokens_counted_locally = 0;  ///< of those, N from the `--tokenizer` count
  std::size_t prompt_token_mismatches = 0;  ///< server `prompt_tokens` ≠ `input_tokens_local`
  Stats ttft_ms, ttfat_ms, ttft_sched_ms, tpot_ms, itl_ms, inter_chunk_ms, e2el_ms, e2el_sched_ms,
      lateness_ms;
};

/// Computes the summary over `records` (warm-ups and failures excluded from latency and
/// throughput; failures counted by kind).
Summary summarize(const std::vector<RequestRecord>& records, const SummaryOptions& options);

/// `summarize(expanded, options)` where `expanded` is `records` with `tokens` appended to their
/// chunks (`expand_token_runs`), computed without building the chunks and bit-identical to it.
/// The ITL percentiles come from the grids' gaps and how many requests' runs span each one (plus
/// the gaps between one request's runs); the ITL mean and std are summed in numpy's order over
/// the gaps streamed request by request, as `describe` sums the expanded list. Time O(records +
/// runs + grid instants + tokens), memory O(records + runs + grid instants): a simulation of
/// millions of tokens is summarized without its 24 bytes per token of chunks. `records` must carry
/// no chunks of their own; throws `Exception` as `check_token_runs` does, or when one does.
Summary summarize(const std::vector<RequestRecord>& records, const TokenRuns& tokens,
                  const SummaryOptions& options);

}  // namespace llmbench::metrics
