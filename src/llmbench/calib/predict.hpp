#pragma once
/// @file
/// A point's workload run through the simulated engine, and the errors of the prediction against
/// what was measured (docs/simulator.md "Calibration").

#include "llmbench/calib/points.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/engine_spec.hpp"

#include <array>
#include <string_view>
#include <vector>

namespace llmbench::calib {

/// The requests of `w`: lengths from its lists, else drawn uniformly from its ranges (seeded by
/// `w.seed`); arrival 0 for a closed loop, Poisson arrivals at `w.request_rate` otherwise.
std::vector<sim::SimRequest> requests_for(const Workload& w);

/// llama-server keeps every slot's last prompt in its KV cache between runs, and each step's
/// attention spans those cells (docs/simulator.md "llama.cpp's shared KV window"), so a point
/// depends on what ran before it on the same server. For points that carry the server's
/// `base_url` tag, in `date` order (ties keep the given order), sets `slot_cells_before` to the
/// cells `num_slots` slots hold after the earlier points of that server, each of their requests
/// taking the least recently used slot and leaving prompt + output − 1 cells (`sim::SlotCache`);
/// the first point of each server starts fresh. Points without `base_url` or `date` start fresh.
void chain_slot_history(std::vector<Point>& points, std::int64_t num_slots);

/// Simulates `point`'s workload on `spec` (a fresh engine, as a benchmark run starts on a warm but
/// idle server, whose llama.cpp slots hold `point.slot_cells_before`) and returns the same figures
/// the point reports. Per-GPU throughput divides by `point.num_gpus`, or the spec's tp × dp when 0.
Metrics predict(const sim::EngineSpec& spec, const Point& point);

/// The figures a calibration compares, with one name table (`kMetricNames`).
enum class Metric { TtftMean, TtftMedian, TtftP99, Tpot, OutputPerGpu, E2eMean, ItlMedian };
/// Name, display name of each `Metric`.
inline constexpr std::array<std::pair<Metric, std::string_view>, 7> kMetricNames{{
    {Metric::TtftMean, "ttft_mean"},
    {Metric::TtftMedian, "ttft_median"},
    {Metric::TtftP99, "ttft_p99"},
    {Metric::Tpot, "tpot"},
    {Metric::OutputPerGpu, "output_tok_s_per_gpu"},
    {Metric::E2eMean, "e2e_mean"},
    {Metric::ItlMedian, "itl_median"},
}};
/// The name of `m` in `kMetricNames`.
std::string_view to_string(Metric m) noexcept;

/// `m` of `x`; TPOT is the mean when reported, else the median (InferenceX and SGLang report
/// both, some sources only one). `kMissing` when absent.
double metric_value(const Metrics& x, Metric m) noexcept;

/// Signed relative error (predicted − measured) / measured; `kMissing` when either is missing or
/// measured is 0.
double relative_error(double predicted, double measured) noexcept;

/// A point with its prediction.
struct PointResult {
  Point point;
  Metrics predicted;
  bool held_out = false;  ///< judged only, never fitted on
};

/// Mean absolute percentage error of metric `m` over `results` (points where both sides have it),
/// in percent; `kMissing` when no point has it. `count` (optional) receives how many points.
double mape(const std::vector<PointResult>& results, Metric m, std::size_t* count = nullptr);

}  // namespace llmbench::calib
