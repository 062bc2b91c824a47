#pragma once
/// @file
/// What the server said it was doing during a run: its Prometheus `/metrics` scraped on a
/// thread of its own (`ServerMetricsSampler`), every series kept raw, and the engine-specific
/// names of vLLM, SGLang, TGI, llama.cpp and `llmbench serve` mapped to common concepts
/// (`kConceptNames`, `kMetricMap`) with counters as increases over the run. The metric names
/// come from each engine's public metric reference: vLLM docs "Production Metrics" (V1 and the
/// V0 names still served by older builds), SGLang docs "Production Metrics", TGI docs
/// "Reference / Metrics", llama.cpp `tools/server/README.md` "GET /metrics"; `llmbench serve`'s
/// are in src/llmbench/server/handlers.cpp and engine_timing.cpp (vLLM's names plus
/// `llmbench:` ones). docs/telemetry.md has the table. Tests:
/// tests/unit/telemetry/server_metrics_test.cpp (recorded expositions in data/ and a live
/// `llmbench serve`).

#include "llmbench/core/clock.hpp"
#include "llmbench/http/client.hpp"
#include "llmbench/http/url.hpp"
#include "llmbench/telemetry/detail/periodic_thread.hpp"
#include "llmbench/telemetry/prometheus.hpp"
#include "llmbench/telemetry/series_stats.hpp"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace llmbench::telemetry {

/// The serving engine a `/metrics` body looks like (by its metric-name prefixes).
enum class Engine : std::uint8_t { Unknown, Vllm, Sglang, Tgi, LlamaCpp, Llmbench };

/// Each `Engine`'s name in results and messages.
struct EngineName {
  Engine engine;
  std::string_view name;
};
inline constexpr std::array<EngineName, 6> kEngineNames{{
    {.engine = Engine::Unknown, .name = "unknown"},
    {.engine = Engine::Vllm, .name = "vllm"},
    {.engine = Engine::Sglang, .name = "sglang"},
    {.engine = Engine::Tgi, .name = "tgi"},
    {.engine = Engine::LlamaCpp, .name = "llamacpp"},
    {.engine = Engine::Llmbench, .name = "llmbench"},
}};

/// The name of `engine` ("vllm", ...).
[[nodiscard]] std::string_view engine_name(Engine engine) noexcept;

/// A common concept the engines' metrics map to.
enum class Concept : std::uint8_t {
  Running,             ///< requests in the running batch now (gauge)
  Waiting,             ///< requests queued, not yet scheduled (gauge)
  KvCacheUsage,        ///< fraction of KV-cache blocks/tokens in use, 0..1 (gauge)
  BatchSize,           ///< sequences in the current forward batch (gauge)
  PrefixCacheQueries,  ///< prefix-cache lookups, in tokens (counter)
  PrefixCacheHits,     ///< prefix-cache hits, in tokens (counter)
  PrefixCacheHitRate,  ///< the engine's own hit-rate gauge, 0..1 (SGLang, vLLM V0)
  Preemptions,         ///< requests preempted (counter)
  SpecDraftTokens,     ///< speculative tokens proposed (counter)
  SpecAcceptedTokens,  ///< speculative tokens accepted (counter)
  SpecAcceptLength,    ///< mean accepted length per verify step (gauge, SGLang)
  PromptTokens,        ///< prompt tokens processed (counter)
  GenerationTokens,    ///< output tokens generated (counter)
};
inline constexpr std::size_t kConceptCount = 13;

/// How the samples of one metric (several label sets: models, ranks) combine into the concept.
enum class Combine : std::uint8_t { Sum, Mean };

/// One row per `Concept`: its results key, whether it is a counter, and how series combine.
struct ConceptInfo {
  Concept concept_id;
  std::string_view name;
  bool counter;
  Combine combine;
};
inline constexpr std::array<ConceptInfo, kConceptCount> kConceptNames{{
    {.concept_id = Concept::Running, .name = "running", .counter = false, .combine = Combine::Sum},
    {.concept_id = Concept::Waiting, .name = "waiting", .counter = false, .combine = Combine::Sum},
    {.concept_id = Concept::KvCacheUsage,
     .name = "kv_cache_usage",
     .counter = false,
     .combine = Combine::Mean},
    {.concept_id = Concept::BatchSize,
     .name = "batch_size",
     .counter = false,
     .combine = Combine::Sum},
    {.concept_id = Concept::PrefixCacheQueries,
     .name = "prefix_cache_queries",
     .counter = true,
     .combine = Combine::Sum},
    {.concept_id = Concept::PrefixCacheHits,
     .name = "prefix_cache_hits",
     .counter = true,
     .combine = Combine::Sum},
    {.concept_id = Concept::PrefixCacheHitRate,
     .name = "prefix_cache_hit_rate",
     .counter = false,
     .combine = Combine::Mean},
    {.concept_id = Concept::Preemptions,
     .name = "preemptions",
     .counter = true,
     .combine = Combine::Sum},
    {.concept_id = Concept::SpecDraftTokens,
     .name = "spec_decode_draft_tokens",
     .counter = true,
     .combine = Combine::Sum},
    {.concept_id = Concept::SpecAcceptedTokens,
     .name = "spec_decode_accepted_tokens",
     .counter = true,
     .combine = Combine::Sum},
    {.concept_id = Concept::SpecAcceptLength,
     .name = "spec_decode_accept_length",
     .counter = false,
     .combine = Combine::Mean},
    {.concept_id = Concept::PromptTokens,
     .name = "prompt_tokens",
     .counter = true,
     .combine = Combine::Sum},
    {.concept_id = Concept::GenerationTokens,
     .name = "generation_tokens",
     .counter = true,
     .combine = Combine::Sum},
}};

/// The row of `kConceptNames` for `c`.
[[nodiscard]] const ConceptInfo& concept_info(Concept c) noexcept;

/// One engine metric (a sample name, so a histogram's `_sum` can be named) and the concept it
/// feeds. Where several names feed one concept, the first present in an exposition wins (so
/// vLLM's `kv_cache_usage_perc` and the older `gpu_cache_usage_perc` served side by side are
/// not counted twice).
struct MetricMapping {
  std::string_view metric;
  Engine engine;
  Concept concept_id;
};
inline constexpr MetricMapping kMetricMap[] = {
    // vLLM V1 (docs "Production Metrics"; the V0 names after them). llmbench serve uses these.
    {.metric = "vllm:num_requests_running", .engine = Engine::Vllm, .concept_id = Concept::Running},
    {.metric = "vllm:num_requests_waiting", .engine = Engine::Vllm, .concept_id = Concept::Waiting},
    {.metric = "vllm:kv_cache_usage_perc",
     .engine = Engine::Vllm,
     .concept_id = Concept::KvCacheUsage},
    {.metric = "vllm:gpu_cache_usage_perc",
     .engine = Engine::Vllm,
     .concept_id = Concept::KvCacheUsage},
    {.metric = "vllm:prefix_cache_queries_total",
     .engine = Engine::Vllm,
     .concept_id = Concept::PrefixCacheQueries},
    {.metric = "vllm:prefix_cache_hits_total",
     .engine = Engine::Vllm,
     .concept_id = Concept::PrefixCacheHits},
    {.metric = "vllm:gpu_prefix_cache_hit_rate",
     .engine = Engine::Vllm,
     .concept_id = Concept::PrefixCacheHitRate},
    {.metric = "vllm:num_preemptions_total",
     .engine = Engine::Vllm,
     .concept_id = Concept::Preemptions},
    {.metric = "vllm:spec_decode_num_draft_tokens_total",
     .engine = Engine::Vllm,
     .concept_id = Concept::SpecDraftTokens},
    {.metric = "vllm:spec_decode_num_accepted_tokens_total",
     .engine = Engine::Vllm,
     .concept_id = Concept::SpecAcceptedTokens},
    {.metric = "vllm:prompt_tokens_total",
     .engine = Engine::Vllm,
     .concept_id = Concept::PromptTokens},
    {.metric = "vllm:generation_tokens_total",
     .engine = Engine::Vllm,
     .concept_id = Concept::GenerationTokens},
    // SGLang (docs "Production Metrics"): token_usage is the KV pool's used fraction.
    {.metric = "sglang:num_running_reqs", .engine = Engine::Sglang, .concept_id = Concept::Running},
    {.metric = "sglang:num_queue_reqs", .engine = Engine::Sglang, .concept_id = Concept::Waiting},
    {.metric = "sglang:token_usage", .engine = Engine::Sglang, .concept_id = Concept::KvCacheUsage},
    {.metric = "sglang:cache_hit_rate",
     .engine = Engine::Sglang,
     .concept_id = Concept::PrefixCacheHitRate},
    {.metric = "sglang:spec_accept_length",
     .engine = Engine::Sglang,
     .concept_id = Concept::SpecAcceptLength},
    {.metric = "sglang:prompt_tokens_total",
     .engine = Engine::Sglang,
     .concept_id = Concept::PromptTokens},
    {.metric = "sglang:generation_tokens_total",
     .engine = Engine::Sglang,
     .concept_id = Concept::GenerationTokens},
    // TGI (docs "Reference / Metrics"): one continuous batch, so its size is also "running";
    // token counts from the histograms' sums.
    {.metric = "tgi_batch_current_size", .engine = Engine::Tgi, .concept_id = Concept::Running},
    {.metric = "tgi_batch_current_size", .engine = Engine::Tgi, .concept_id = Concept::BatchSize},
    {.metric = "tgi_queue_size", .engine = Engine::Tgi, .concept_id = Concept::Waiting},
    {.metric = "tgi_request_input_length_sum",
     .engine = Engine::Tgi,
     .concept_id = Concept::PromptTokens},
    {.metric = "tgi_request_generated_tokens_sum",
     .engine = Engine::Tgi,
     .concept_id = Concept::GenerationTokens},
    // llama.cpp server (tools/server/README.md "GET /metrics").
    {.metric = "llamacpp:requests_processing",
     .engine = Engine::LlamaCpp,
     .concept_id = Concept::Running},
    {.metric = "llamacpp:requests_deferred",
     .engine = Engine::LlamaCpp,
     .concept_id = Concept::Waiting},
    {.metric = "llamacpp:kv_cache_usage_ratio",
     .engine = Engine::LlamaCpp,
     .concept_id = Concept::KvCacheUsage},
    {.metric = "llamacpp:n_busy_slots_per_decode",
     .engine = Engine::LlamaCpp,
     .concept_id = Concept::BatchSize},
    {.metric = "llamacpp:prompt_tokens_total",
     .engine = Engine::LlamaCpp,
     .concept_id = Concept::PromptTokens},
    {.metric = "llamacpp:tokens_predicted_total",
     .engine = Engine::LlamaCpp,
     .concept_id = Concept::GenerationTokens},
};

/// A "counter" that is a since-start ratio of two counters: llama.cpp's
/// `llamacpp:n_busy_slots_per_decode` is n_busy_slots_total / n_decode_total (its README:
/// "Average number of busy slots per llama_decode() call"), so its value is the mean over the
/// server's whole life, runs before this one included. Its numerator is recovered as ratio ×
/// denominator and both are differenced between scrapes: the run's mean batch is Δnumerator /
/// Δdenominator, each scrape interval's is the same over that interval.
struct RatioCounter {
  std::string_view ratio;        ///< the exposed ratio
  std::string_view denominator;  ///< the counter it divides by
  Concept concept_id;            ///< the concept it feeds (differenced)
};
inline constexpr RatioCounter kRatioCounters[] = {
    {.ratio = "llamacpp:n_busy_slots_per_decode",
     .denominator = "llamacpp:n_decode_total",
     .concept_id = Concept::BatchSize},
};

/// The engine an exposition looks like: `llmbench` when any sample is named `llmbench:*`
/// (`llmbench serve` with the engine model; with fixed timing it serves vLLM names only and
/// reads as `vllm`), else the engine whose prefix (`vllm:`, `sglang:`, `tgi_`, `llamacpp:`) the
/// most samples carry; Unknown when none does.
[[nodiscard]] Engine detect_engine(const Exposition& exposition);

/// Each concept's value in one exposition (indexed by `Concept`), NaN where no mapped metric is
/// present; `sources[i]` names the metric it came from ("" when none).
struct ConceptValues {
  std::array<double, kConceptCount> values{};
  std::array<std::string_view, kConceptCount> sources{};
};

/// Maps one exposition through `kMetricMap` (the samples of the chosen metric combined by the
/// concept's `Combine`).
[[nodiscard]] ConceptValues map_concepts(const Exposition& exposition);

/// The scrapes of one run: times (absolute steady-clock ns, the base of `RunClock`), every raw
/// series by `Sample::series_key()` (NaN where a scrape lacked it), and the mapped concepts.
/// Not thread-safe; the sampler fills it on its thread and hands it over after `stop()`.
struct ServerMetricsSeries {
  std::vector<TimeNs> t_ns;
  std::map<std::string, std::vector<double>> raw;
  std::map<std::string, MetricType> raw_types;  ///< series key → its family's type
  std::array<std::vector<double>, kConceptCount> concepts;
  std::array<std::string, kConceptCount> concept_sources;  ///< the last metric each came from
  Engine engine = Engine::Unknown;
  std::int64_t failures = 0;  ///< scrapes that failed (transport, HTTP status or parse)
  std::string last_error;     ///< the last failure, for the one warning
  /// How long each scrape took, request to last byte (ns; 0 when not measured).
  std::vector<TimeNs> latency_ns;
  /// The interval asked for (ms; 0 = unknown): a scrape that took more than half of it is
  /// `late` (its gauges could be from any moment of that long a span).
  double asked_interval_ms = 0;
  /// Per `kRatioCounters` entry present: the recovered numerator and the denominator per
  /// scrape (NaN where a scrape lacked them).
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> ratio_counters;

  /// Appends one successful scrape taken at `t_ns_abs` that took `latency_ns` to answer.
  void add(TimeNs t_ns_abs, const Exposition& exposition, TimeNs latency = 0);
  /// True when scrape `i` took more than half the asked interval.
  [[nodiscard]] bool late(std::size_t i) const noexcept;
};

/// How the scrapes kept to the interval asked (docs/telemetry.md "Late scrapes"): the gaps
/// between consecutive scrape starts and the scrapes that answered late.
struct ScrapeTiming {
  double asked_ms = 0;
  double median_gap_ms = std::numeric_limits<double>::quiet_NaN();
  double p90_gap_ms = std::numeric_limits<double>::quiet_NaN();
  double median_latency_ms = std::numeric_limits<double>::quiet_NaN();
  std::int64_t late_scrapes = 0;  ///< took more than half the asked interval
  /// The achieved interval was far above the one asked: median gap > 1.5 × asked.
  bool interval_late = false;
  std::string warning{};  ///< one sentence when `interval_late` or any scrape was late, else ""
};

/// The timing of `series`' scrapes.
[[nodiscard]] ScrapeTiming scrape_timing(const ServerMetricsSeries& series);

/// The summary of one concept over the run: the stats of a gauge, the increase (and its rate
/// over the scraped span) of a counter.
struct ConceptSummary {
  const ConceptInfo* info = nullptr;
  std::string source{};  ///< the engine metric it was read from
  SeriesStats gauge{};   ///< gauges only
  double increase = std::numeric_limits<double>::quiet_NaN();    ///< counters only
  double rate_per_s = std::numeric_limits<double>::quiet_NaN();  ///< increase / scraped span
  /// A concept from a `RatioCounter`: Δnumerator / Δdenominator over the run (the run's own
  /// mean, whatever ran before it); NaN otherwise. `gauge` then holds the per-interval means.
  double run_mean = std::numeric_limits<double>::quiet_NaN();
};

/// The server-metrics summary: the engine, scrape counts, each concept present, and two ratios
/// of counter increases (NaN when the denominator did not move).
struct ServerMetricsSummary {
  Engine engine = Engine::Unknown;
  std::int64_t scrapes = 0;
  std::int64_t failures = 0;
  std::vector<ConceptSummary> concepts;
  /// Δ prefix_cache_hits / Δ prefix_cache_queries (token-weighted, as vLLM counts both).
  double prefix_cache_hit_rate = std::numeric_limits<double>::quiet_NaN();
  /// Δ spec_decode_accepted_tokens / Δ spec_decode_draft_tokens.
  double spec_decode_acceptance_rate = std::numeric_limits<double>::quiet_NaN();
  ScrapeTiming timing;  ///< the achieved interval and the late scrapes
};

/// Summarizes `series` (all of it).
[[nodiscard]] ServerMetricsSummary summarize_server_metrics(const ServerMetricsSeries& series);

/// The results JSON `telemetry.server_metrics` object: url, engine, interval, scrape and failure
/// counts, `t_ms` (times relative to `run_start_ns`, ms), `series` (each concept present),
/// `raw` (every raw series, NaN as null), `counter_increases` (each raw counter's increase), and
/// `summary` (per concept: gauge stats or increase and rate, `mean_over_run` for a ratio
/// counter; the two ratios), `timing` (asked and achieved interval, late scrapes) and `late`
/// (per scrape: its gauges are marked as taken late).
[[nodiscard]] nlohmann::json server_metrics_json(const ServerMetricsSeries& series,
                                                 const ServerMetricsSummary& summary,
                                                 TimeNs run_start_ns);

/// What to scrape and how often.
struct ScrapeOptions {
  http::Url url;           ///< the server; its path (`Url::path_prefix`) is the metrics path
  std::string url_text{};  ///< as typed, for messages and results
  std::chrono::milliseconds interval{500};
  std::chrono::milliseconds timeout{2000};  ///< one scrape, connect to last byte
  http::ClientOptions client{};             ///< TLS settings and headers of the run
};

/// GETs `options.url` every `interval` on its own thread, from `start()` until `stop()` (which
/// takes one last scrape so counter increases cover the whole run). A failed scrape is counted,
/// not fatal. `start`/`stop` from one controlling thread; the series is read after `stop()`.
class ServerMetricsSampler {
 public:
  explicit ServerMetricsSampler(ScrapeOptions options);
  ~ServerMetricsSampler();
  ServerMetricsSampler(const ServerMetricsSampler&) = delete;
  ServerMetricsSampler& operator=(const ServerMetricsSampler&) = delete;
  ServerMetricsSampler(ServerMetricsSampler&&) = delete;
  ServerMetricsSampler& operator=(ServerMetricsSampler&&) = delete;

  /// Takes the first scrape now and starts the thread.
  void start();
  /// Stops the thread after one final scrape. Idempotent.
  void stop();
  /// The scrapes so far (valid after `stop()`).
  [[nodiscard]] const ServerMetricsSeries& series() const noexcept { return series_; }
  [[nodiscard]] const ScrapeOptions& options() const noexcept { return options_; }

  /// One scrape: GET, parse, append (or count the failure). Public for tests and `doctor`.
  void scrape_once();

 private:
  ScrapeOptions options_;
  ServerMetricsSeries series_;
  detail::PeriodicThread periodic_;
};

}  // namespace llmbench::telemetry
