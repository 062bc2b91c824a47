#pragma once
/// @file
/// Fits the simulator's free parameters to measured points (docs/simulator.md "Calibration"):
/// a Levenberg–Marquardt least-squares fit in log-parameter space of the relative errors
/// ln(predicted / measured) of TPOT, mean and median TTFT and output tokens/s per GPU, with a weak
/// prior pulling each efficiency toward its datasheet default. After the fit, a parameter whose
/// posterior spread stays wide (the points barely move it, or another parameter moves them the
/// same way) is reported as not identified and goes back to its default; the others are fitted
/// again without it.

#include "llmbench/calib/predict.hpp"
#include "llmbench/sim/engine_spec.hpp"

#include <array>
#include <functional>
#include <string_view>
#include <vector>

namespace llmbench::calib {

/// The free parameters a calibration can fit, with one name table (`kParamNames`; the names are
/// the calibration file's `cost_model` and `serving` field names).
enum class Param {
  Compute,            ///< η_F
  Memory,             ///< η_M
  Attention,          ///< η_attn (relative to the linear layers)
  StepOverhead,       ///< T_step0, µs
  RequestOverhead,    ///< τ_req, µs per scheduled sequence per step
  ApiOverhead,        ///< α, µs per request before the engine
  FirstStepOverhead,  ///< W, µs on the engine's first step
  /// τ_exp, µs per MoE layer and hit expert on multi-token steps (llama.cpp's per-expert MoE
  /// batches, `sim::Efficiency::moe_expert_overhead_us`); fitted only for the llamacpp family
  /// with an MoE model, left out of the fit elsewhere.
  MoeExpertOverhead,
  /// τ_vec, µs per shared-window score (cell × head × layer) of a one-token micro-batch
  /// (llama.cpp's CPU matrix-vector path, `sim::Efficiency::vec_score_overhead_us`); fitted only
  /// for the llamacpp family on a CPU host, left out of the fit elsewhere.
  VecScoreOverhead,
};
inline constexpr std::array<std::pair<Param, std::string_view>, 9> kParamNames{{
    {Param::Compute, "compute"},
    {Param::Memory, "memory"},
    {Param::Attention, "attention"},
    {Param::StepOverhead, "step_overhead_us"},
    {Param::RequestOverhead, "request_overhead_us"},
    {Param::ApiOverhead, "api_overhead_us"},
    {Param::FirstStepOverhead, "first_step_overhead_us"},
    {Param::MoeExpertOverhead, "moe_expert_overhead_us"},
    {Param::VecScoreOverhead, "vec_score_overhead_us"},
}};
/// The name of `p` in `kParamNames`.
std::string_view to_string(Param p) noexcept;
/// Parses a parameter name; throws `Exception` (source `--fit`) listing the names otherwise.
Param parse_param(std::string_view name);

/// False when `p` cannot change a prediction of `spec`: τ_exp (`Param::MoeExpertOverhead`)
/// outside the llamacpp family or for a dense model, τ_vec (`Param::VecScoreOverhead`) outside
/// the llamacpp family or on a GPU (`sim::HardwareProfile::cpu` false). `fit` leaves such
/// parameters out.
bool applies_to(const sim::EngineSpec& spec, Param p) noexcept;

/// `p`'s value in `spec` (efficiencies in (0, 1], overheads in µs).
double get_param(const sim::EngineSpec& spec, Param p) noexcept;
/// Sets `p` in `spec` (the efficiency, or the engine's serving overheads).
void set_param(sim::EngineSpec& spec, Param p, double value) noexcept;

/// How to fit.
struct FitOptions {
  /// The parameters to fit; the others keep the spec's values. Those that cannot act on the
  /// start spec (`applies_to`) are left out.
  std::vector<Param> params{Param::Compute,           Param::Memory,
                            Param::Attention,         Param::StepOverhead,
                            Param::RequestOverhead,   Param::ApiOverhead,
                            Param::FirstStepOverhead, Param::MoeExpertOverhead,
                            Param::VecScoreOverhead};
  /// Weights of the metrics in the least-squares sum (TPOT and throughput count most; p99 TTFT
  /// and E2E are reported, not fitted).
  double weight_tpot = 1.0;
  double weight_output = 1.0;
  double weight_ttft_mean = 0.7;
  double weight_ttft_median = 0.7;
  /// Median ITL, where the points have it (llmbench and vLLM results): a decode step's time,
  /// which tells the per-sequence step cost from prefill stalls that a mean TPOT mixes.
  double weight_itl_median = 0.7;
  /// Assumed relative noise of a measured figure (5 %), which scales the posterior spread.
  double noise = 0.05;
  /// A parameter is identified when its posterior standard deviation in ln units is below this
  /// (0.35: the data pin it within about ±40 %).
  double identified_sigma = 0.35;
  int max_iterations = 30;
  /// Points simulated at once (threads) per evaluation.
  int jobs = 1;
  /// Called after each accepted step with the iteration and the weighted sum of squares.
  std::function<void(int, double)> progress;
};

/// One fitted parameter.
struct ParamResult {
  Param param = Param::Memory;
  double initial = 0;      ///< value before the fit (the profile's or the calibration's)
  double value = 0;        ///< fitted value, or `initial` when not identified
  double log_sigma = 0;    ///< posterior standard deviation of ln(value)
  bool identified = true;  ///< false: the data could not pin it; `value` is the default
};

/// The outcome of a fit.
struct FitResult {
  sim::EngineSpec spec;  ///< the start spec with the fitted parameters
  std::vector<ParamResult> params;
  std::vector<PointResult> points;  ///< the fit points with their final predictions
  int evaluations = 0;              ///< simulations of the whole point set
  double cost = 0;                  ///< final weighted sum of squared log errors (priors included)
};

/// Fits `options.params` of `start` to `points` (at least one). Throws `Exception` when no point
/// has any of the fitted metrics.
FitResult fit(const sim::EngineSpec& start, const std::vector<Point>& points,
              const FitOptions& options);

/// Predicts every point with `spec` (simulations run on `jobs` threads).
std::vector<PointResult> predict_all(const sim::EngineSpec& spec, const std::vector<Point>& points,
                                     bool held_out, int jobs);

}  // namespace llmbench::calib
