#pragma once
/// @file
/// The data the HTML report embeds (docs/report.md "Embedded data"): from the runs and sweeps
/// of `ReportInputs`, the summary rows, latency CDFs and histograms (TTFT, TPOT, ITL, E2EL, as
/// docs/metrics.md defines them), input and output length histograms, the time windows, a
/// per-request timeline, the simulator's engine timeline, and per sweep the throughput-latency
/// points with knee, SLO bounds and Pareto frontier. Pure: no I/O.

#include "llmbench/report/inputs.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace llmbench::report {

/// How much of each run the report carries.
struct ReportOptions {
  std::string title = "llmbench report";
  std::size_t max_timeline_requests = 3000;  ///< per run; beyond it an even sample is drawn
  std::size_t max_cdf_points = 400;          ///< per metric and run
  std::size_t histogram_bins = 40;
};

/// The per-request samples of one run (completed, non-warm-up requests only, as
/// `metrics::summarize` counts them), from its records or else from `--save-detailed`'s arrays
/// of the results JSON (`ttfts`, `tpots`, `e2els`, `itls` in seconds; `input_lens`,
/// `output_lens`; entries whose `errors` is not "" are skipped). Latencies in ms.
struct RunSamples {
  std::vector<double> ttft_ms;
  std::vector<double> tpot_ms;  ///< requests with N ≥ 2 in more than one chunk
  std::vector<double> itl_ms;   ///< one per token after the first (`metrics::append_itl_ms`)
  std::vector<double> e2el_ms;
  std::vector<double> input_tokens;
  std::vector<double> output_tokens;
  std::string source;  ///< "records", "detailed arrays" or "none"
};

/// `RunSamples` of `run`.
RunSamples run_samples(const RunData& run);

/// An empirical CDF: `x` ascending, `p[i]` the fraction of samples ≤ x[i].
struct Cdf {
  std::vector<double> x;
  std::vector<double> p;
};

/// The CDF of `values` (any order; non-finite values dropped) at most `max_points` (≥ 2) points
/// of distinct x: every sample when there are no more than that, else the order statistics at
/// evenly spaced ranks, the minimum and maximum always among them; p is the fraction of all
/// samples ≤ x (equal values counted together). Empty for no samples.
Cdf empirical_cdf(std::vector<double> values, std::size_t max_points);

/// Histograms of several samples over shared bins, so that they overlay.
struct Histogram {
  std::vector<double> edges;                   ///< bins + 1 ascending edges
  std::vector<std::vector<double>> fractions;  ///< per sample: fraction of it in each bin
  std::vector<std::size_t> above;              ///< per sample: values above the last edge
  std::vector<std::size_t> counts;             ///< per sample: its size
};

/// `bins` equal bins from the smallest value of all samples to the largest of the samples'
/// `clip_percentile` percentiles (100: their maximum), so a long tail does not squeeze the body
/// into one bin; values above are counted in `above`. When every value is equal there is one bin
/// of width 1 around it. Bin i is [edges[i], edges[i+1]), the last bin closed. Empty edges when
/// there is no sample at all.
Histogram shared_histogram(const std::vector<const std::vector<double>*>& samples, std::size_t bins,
                           double clip_percentile);

/// Indices of an even sample of `n` items, at most `max` of them: all when n ≤ max, else
/// floor(i·n/max) for i < max (ascending, first item included).
std::vector<std::size_t> even_sample(std::size_t n, std::size_t max);

/// The embedded data document: `title`, `generator` {tool, version, git_sha}, `runs` (the runs of
/// `inputs`, then every sweep's points, each with name, source, group, kind, config {lines, gpus},
/// verdict {badges, headlines}, load_span, telemetry, summary, samples_from, cdf, windows,
/// timeline, sim_timeline, by_turn, turn_finding, notes, and for runs given together `differs`),
/// `comparison` (runs given together: text, knobs, changes; null for one), `histograms` (ttft,
/// tpot, itl, e2el, input_tokens, output_tokens: edges and per-run fractions), `sweeps`
/// (`detail::sweep_data`). Field by field in docs/report.md "Embedded data". Throws `Exception`
/// when a file's value has an unexpected type (`detail::reading_files`).
nlohmann::json report_data(const ReportInputs& inputs, const ReportOptions& options);

}  // namespace llmbench::report
