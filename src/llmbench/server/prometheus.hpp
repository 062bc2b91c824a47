#pragma once
/// @file
/// Prometheus text exposition (format 0.0.4, prometheus.io/docs/instrumenting/exposition_formats)
/// for the built-in server's `/metrics`: lock-free histograms with fixed bucket bounds and
/// writers for `# HELP` / `# TYPE` families. Bucket bounds of vLLM V1's histograms
/// (`vllm/v1/metrics/loggers.py`; docs/simulator.md "Sources", Prometheus metrics) are constants
/// here.

#include "llmbench/core/clock.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::server {

/// `vllm:time_to_first_token_seconds` bucket upper bounds (seconds).
inline constexpr double kTtftBuckets[] = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                          0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                          20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
/// `vllm:inter_token_latency_seconds` (and the deprecated `vllm:time_per_output_token_seconds`,
/// `vllm:request_time_per_output_token_seconds`) bucket upper bounds (seconds).
inline constexpr double kItlBuckets[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                         0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
/// `vllm:e2e_request_latency_seconds` and the queue/inference/prefill/decode time histograms.
inline constexpr double kRequestLatencyBuckets[] = {
    0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
    30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
/// vLLM's `build_1_2_5_buckets(max_value)` (`vllm/v1/metrics/loggers.py`): 1, 2, 5, 10, 20, 50,
/// … while ≤ `max_value` (empty when `max_value` < 1). vLLM passes `max_model_len` for
/// `vllm:request_prompt_tokens`, `vllm:request_generation_tokens` and
/// `vllm:request_params_max_tokens`.
std::vector<double> buckets_1_2_5(std::int64_t max_value);

/// `vllm:iteration_tokens_total` (tokens per engine step).
inline constexpr double kIterationTokenBuckets[] = {1,   8,    16,   32,   64,   128,  256,
                                                    512, 1024, 2048, 4096, 8192, 16384};

/// Buckets of llmbench:engine_step_lateness_seconds (how late the real-time engine applied a
/// step's end, s): 0.5 ms to 2.5 s, for telling a keeping-up server from an overloaded one.
inline constexpr double kStepLatenessBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                  0.05,   0.1,   0.25,   0.5,   1.0,  2.5};

/// A Prometheus histogram over integer observations in a fixed unit (ns for latencies, tokens
/// for counts): one atomic counter per bucket plus `+Inf`, an atomic sum. `observe` is lock-free
/// and may be called from any thread; a concurrent `write` may see a count one ahead of the sum.
class Histogram {
 public:
  /// `bounds` are upper bounds in exposition units (ascending); an observation `v` (in units)
  /// counts as `v × unit_seconds` exposition units, e.g. unit 1e-9 for ns observed, seconds
  /// exposed; 1 for plain counts.
  Histogram(std::span<const double> bounds, double unit);
  /// Adds one observation of `value` units.
  void observe(std::int64_t value) noexcept;
  /// Total observations.
  [[nodiscard]] std::uint64_t count() const noexcept;
  /// Appends `name_bucket{labels,le="…"} N` lines (cumulative, ending with `le="+Inf"`), then
  /// `name_sum{labels} S` and `name_count{labels} N`. `labels` is the label list without braces
  /// (`model_name="m"`), possibly empty.
  void write(std::string& out, std::string_view name, std::string_view labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::int64_t> bounds_units_;  ///< largest value (units) that falls in bucket i
  double unit_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  ///< non-cumulative, last = +Inf
  std::atomic<std::int64_t> sum_{0};
};

/// One finished request as vLLM V1's per-request stats see it (`FinishedRequestStats`;
/// docs/design/metrics.md intervals QUEUED → SCHEDULED → first NEW_TOKENS → last NEW_TOKENS):
/// instants on the steady clock (ns) and token counts.
struct RequestTimes {
  TimeNs queued_ns = 0;       ///< entered the engine's queue
  TimeNs scheduled_ns = 0;    ///< first scheduled (later preemptions do not move it)
  TimeNs first_token_ns = 0;  ///< first output token produced
  TimeNs last_token_ns = 0;   ///< last output token produced
  std::int64_t prompt_tokens = 0;
  std::int64_t generation_tokens = 0;
  std::int64_t max_tokens = 0;  ///< the request's output limit (`max_tokens` or the default)
  /// Prompt tokens served from the prefix cache (engine timing); -1 when the timing has no cache.
  std::int64_t cached_tokens = -1;
};

/// vLLM V1's per-request histograms, observed once per finished request (`observe`, any
/// thread): `vllm:request_queue_time_seconds` (scheduled − queued),
/// `vllm:request_prefill_time_seconds` (first token − scheduled),
/// `vllm:request_decode_time_seconds` (last − first token),
/// `vllm:request_inference_time_seconds` (last token − scheduled), all on
/// `kRequestLatencyBuckets`; `vllm:request_prompt_tokens`, `vllm:request_generation_tokens` and
/// `vllm:request_params_max_tokens` on `buckets_1_2_5(max_model_len)`. Negative intervals (clock
/// quirks) are observed as 0.
struct RequestHistograms {
  /// `max_model_len`: the largest token bucket bound (vLLM's choice).
  explicit RequestHistograms(std::int64_t max_model_len);
  void observe(const RequestTimes& times) noexcept;
  /// Appends the seven families (`# HELP`, `# TYPE`, samples) with label list `labels`.
  void write(std::string& out, std::string_view labels) const;

  Histogram queue;
  Histogram prefill;
  Histogram decode;
  Histogram inference;
  Histogram prompt_tokens;
  Histogram generation_tokens;
  Histogram max_tokens;
};

/// Escapes a label value (`\` → `\\`, `"` → `\"`, newline → `\n`).
std::string prometheus_label_value(std::string_view text);

/// Appends `# HELP name help` and `# TYPE name type`.
void append_family_header(std::string& out, std::string_view name, std::string_view type,
                          std::string_view help);

/// Appends one sample line `name{labels} value` (value printed with up to 17 significant
/// digits, integers without a decimal point).
void append_sample(std::string& out, std::string_view name, std::string_view labels, double value);

}  // namespace llmbench::server
