#pragma once
/// @file
/// Pure functions from `RequestRecord`s to the benchmark's numbers, exactly as
/// docs/metrics.md define them.

#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/statistics.hpp"
#include "llmbench/metrics/token_runs.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::metrics {

/// Service-level objectives for goodput (`--goodput ttft:MS tpot:MS e2el:MS`), in ms.
struct Slo {
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::optional<double> e2el_ms;
};

/// Parses "ttft:500 tpot:50 e2el:10000" items (one per vector element); throws `Exception` naming
/// `--goodput` and the bad item on an unknown key or a non-positive/non-numeric value.
Slo parse_slo(const std::vector<std::string>& items);

/// What TTFT is measured on (docs/metrics.md "Definitions"), stated in the results
/// (`ttft_basis`) and the report, since servers differ in what they send first: the first
/// event that carried generated output (text, a tool call, or tokens per its usage), from
/// `sent`; a role-only or empty-content first delta does not count, nor a stripped special token.
inline constexpr std::string_view kTtftBasis =
    "first output chunk carrying generated text or tokens, from sent (a role-only or "
    "empty-content first delta does not count)";

/// Per-request derived latencies in ms; NaN where undefined (e.g. TPOT with N < 2).
struct RequestLatency {
  double ttft_ms = kUndefined;        ///< first output chunk − sent
  double ttfat_ms = kUndefined;       ///< first answer chunk − sent (excludes reasoning)
  double ttft_sched_ms = kUndefined;  ///< first output chunk − scheduled (queue-inclusive)
  double e2el_ms = kUndefined;        ///< last output chunk − sent (done − sent if no output)
  double e2el_sched_ms = kUndefined;  ///< as e2el from scheduled
  double tpot_ms = kUndefined;        ///< (last − first output chunk) / (N − 1), N ≥ 2
  double lateness_ms = kUndefined;    ///< sent − slot (client lateness, docs/metrics.md)
  double queue_wait_ms = kUndefined;  ///< slot − scheduled (the wait behind --max-concurrency)
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
  /// Percentiles of each latency that depend on its sample count (`Stats::extra_percentiles`;
  /// the p99 intervals, app/tail_ci.hpp); none when empty.
  ExtraPercentiles extra_percentiles{};
};

/// One error message and how many failed requests carried it.
struct ErrorMessageCount {
  std::string message;  ///< `RequestRecord::error_message`, cut to `kErrorMessageChars` bytes
  std::size_t count = 0;
  bool operator==(const ErrorMessageCount&) const = default;
};

/// The longest error message kept in `Summary::top_errors_by_kind` (bytes, cut at a UTF-8
/// boundary); the records keep the whole message.
inline constexpr std::size_t kErrorMessageChars = 160;
/// How many messages per error kind `Summary::top_errors_by_kind` keeps.
inline constexpr std::size_t kTopErrorsPerKind = 3;

/// Everything the console and JSON reports print for a run.
struct Summary {
  std::size_t total = 0;      ///< non-warm-up requests recorded (completed + failed + cancelled)
  std::size_t completed = 0;  ///< ok non-warm-up requests
  std::size_t failed = 0;     ///< requests that failed (cancelled ones are not failures)
  /// Requests the client cancelled (an interrupt, the end of a `--duration` run): neither
  /// completed nor failed by the server, counted apart.
  std::size_t cancelled = 0;
  /// Completed requests the server closed normally with zero completion tokens (vLLM returns
  /// `finish_reason` stop and `usage.completion_tokens` 0 when the model stops at once): they
  /// count as completed and give no TTFT, TPOT or ITL.
  std::size_t zero_output_completions = 0;
  std::map<std::string, std::size_t> failures_by_kind;  ///< `to_string(ErrorKind)` → count
  /// `to_string(ErrorKind)` → its most frequent messages (at most `kTopErrorsPerKind`, the most
  /// frequent first, ties in message order), so a console shows why requests failed.
  std::map<std::string, std::vector<ErrorMessageCount>> top_errors_by_kind;
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
  /// Completed requests with N ≥ 2 whose whole output arrived in one chunk: their TPOT is
  /// undefined (no sample), and the stream was not incremental (a buffering proxy, a server
  /// that does not stream).
  std::size_t single_chunk_outputs = 0;
  std::size_t finished_before_max_tokens = 0;  ///< completed requests with N < `max_tokens`
  /// Σ `max_tokens` of the completed requests that asked for one, beside `total_output_tokens`
  /// (requested against delivered output length); `requests_with_max_tokens` of them.
  std::int64_t total_requested_output_tokens = 0;
  std::size_t requests_with_max_tokens = 0;  ///< completed requests whose `max_tokens` is known
  Stats ttft_ms, ttfat_ms, ttft_sched_ms, tpot_ms, itl_ms, inter_chunk_ms, e2el_ms, e2el_sched_ms,
      lateness_ms, queue_wait_ms;

  /// Field-by-field equality (doubles exactly; `Stats` as its `operator==` says), defaulted so a
  /// new field is compared without anyone listing it.
  bool operator==(const Summary&) const = default;
};

/// Computes the summary over `records` (warm-ups and failures excluded from latency and
/// throughput; failures counted by kind). Chunk tokens are read as assigned where the records
/// were made (`assign_chunk_tokens`: the load generator, `read_record_file`); one still unknown
/// counts as one token.
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
