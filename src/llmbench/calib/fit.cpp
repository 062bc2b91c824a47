#include "llmbench/calib/fit.hpp"

#include "llmbench/core/error.hpp"

#include <boost/numeric/ublas/lu.hpp>
#include <boost/numeric/ublas/matrix.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace llmbench::calib {

namespace {

namespace ublas = boost::numeric::ublas;

/// Bounds and prior of a parameter. Efficiencies and per-step costs are fitted as ln(value); the
/// serving overheads (α, W) linearly in units of the points' typical TTFT, since 0 is a natural
/// value for them and ln(value) has no gradient while they are small against TTFT.
struct Range {
  double lo = 0;
  double hi = 0;
  double prior_sigma = 1;  ///< θ units: 1 (an e-fold) for efficiencies, datasheet defaults inform
  double start_if_zero = 0;
  bool linear = false;  ///< θ = value / scale instead of ln(value)
};

Range range_of(Param p) noexcept {
  switch (p) {
    // Wide bounds: an engine's kernels can reach only a few per cent of a datasheet peak
    // (llama.cpp's F16 MoE prefill on an H100 reaches about 2 % of the dense BF16 peak,
    // docs/calibration.md); within them a prior of about a factor of two (0.7 e-folds) around the
    // datasheet default (for attention: the linear layers' efficiency) keeps a well-served engine
    // near its datasheet.
    case Param::Compute:
      return {0.002, 1.0, 0.7, 0.45, false};
    case Param::Memory:
      return {0.01, 1.0, 0.7, 0.8, false};
    case Param::Attention:
      return {0.01, 10.0, 0.7, 1.0, false};
    case Param::StepOverhead:
      return {1, 1e6, 3.0, 2000, false};
    case Param::RequestOverhead:
      return {0.01, 1e5, 3.0, 5, false};
    case Param::ApiOverhead:
      return {0, 1e3, 30.0, 0.3, true};
    case Param::FirstStepOverhead:
      return {0, 1e3, 30.0, 1.0, true};
    case Param::MoeExpertOverhead:
      return {0.01, 1e5, 3.0, 20, false};
    // A score's matrix-vector call: about a hundred cycles (a call, a SIMD reduction, a scalar
    // tail), 0.05 µs, within a wide prior.
    case Param::VecScoreOverhead:
      return {1e-5, 10, 3.0, 0.05, false};
  }
  return {};
}

/// Parameter ↔ θ, with `scale` (µs) the unit of the linear ones.
struct Coordinates {
  double scale = 1;
  [[nodiscard]] double to_theta(Param p, double value) const {
    const Range r = range_of(p);
    if (r.linear)
      return std::clamp(value > 0 ? value / scale : r.start_if_zero, r.lo, r.hi);
    const double v = value > 0 ? value : r.start_if_zero;
    return std::log(std::clamp(v, r.lo, r.hi));
  }
  [[nodiscard]] double prior_theta(Param p, double value) const {
    return range_of(p).linear ? value / scale : to_theta(p, value);
  }
  [[nodiscard]] double to_value(Param p, double theta) const {
    return range_of(p).linear ? theta * scale : std::exp(theta);
  }
};

double clamp_theta(Param p, double theta) {
  const Range r = range_of(p);
  if (r.linear)
    return std::clamp(theta, r.lo, r.hi);
  return std::clamp(theta, std::log(r.lo), std::log(r.hi));
}

/// The unit of the linear parameters: the median of the points' measured TTFT (median, else
/// mean), µs; 100 ms when none is known.
double ttft_scale_us(const std::vector<Point>& points) {
  std::vector<double> ttft;
  for (const auto& p : points) {
    double v = p.measured.ttft_median_ms;
    if (std::isnan(v))
      v = p.measured.ttft_mean_ms;
    if (v > 0)
      ttft.push_back(v * 1e3);
  }
  if (ttft.empty())
    return 1e5;
  std::nth_element(ttft.begin(), ttft.begin() + static_cast<std::ptrdiff_t>(ttft.size() / 2),
                   ttft.end());
  return ttft[ttft.size() / 2];
}

/// The fitted metrics with their weights.
std::vector<std::pair<Metric, double>> weighted_metrics(const FitOptions& o) {
  return {{Metric::Tpot, o.weight_tpot},
          {Metric::OutputPerGpu, o.weight_output},
          {Metric::TtftMean, o.weight_ttft_mean},
          {Metric::TtftMedian, o.weight_ttft_median},
          {Metric::ItlMedian, o.weight_itl_median}};
}

/// Solves (A) x = b for a small dense system (LU with partial pivoting, Boost.uBLAS); false when
/// singular.
bool solve(ublas::matrix<double> a, ublas::vector<double>& b) {
  ublas::permutation_matrix<std::size_t> pm(a.size1());
  if (ublas::lu_factorize(a, pm) != 0)
    return false;
  ublas::lu_substitute(a, pm, b);
  return std::all_of(b.begin(), b.end(), [](double x) { return std::isfinite(x); });
}

/// The least-squares problem: data residuals (weighted ln errors over the assumed noise) and
/// prior residuals ((θ − θ₀) / σ_prior).
class Problem {
 public:
  Problem(const sim::EngineSpec& start, const std::vector<Point>& points, const FitOptions& o,
          std::vector<Param> params, std::vector<double> prior_theta, Coordinates coords)
      : coords_(coords),
        start_(start),
        points_(points),
        o_(o),
        params_(std::move(params)),
        prior_(std::move(prior_theta)),
        metrics_(weighted_metrics(o)) {}

  [[nodiscard]] sim::EngineSpec spec_at(const std::vector<double>& theta) const {
    sim::EngineSpec s = start_;
    for (std::size_t i = 0; i < params_.size(); ++i)
      set_param(s, params_[i], coords_.to_value(params_[i], theta[i]));
    return s;
  }

  /// Residuals at `theta`; the point predictions go to `results` when given.
  std::vector<double> residuals(const std::vector<double>& theta,
                                std::vector<PointResult>* results = nullptr) {
    ++evaluations_;
    std::vector<PointResult> pr = predict_all(spec_at(theta), points_, false, o_.jobs);
    std::vector<double> r;
    for (const auto& p : pr) {
      for (const auto& [m, w] : metrics_) {
        const double meas = metric_value(p.point.measured, m);
        if (std::isnan(meas) || !(meas > 0))
          continue;
        const double pred = metric_value(p.predicted, m);
        const double err = pred > 0 ? std::clamp(std::log(pred / meas), -5.0, 5.0) : 5.0;
        r.push_back(w * err / o_.noise);
      }
    }
    for (std::size_t i = 0; i < params_.size(); ++i)
      r.push_back((theta[i] - prior_[i]) / prior_sigma(params_[i]));
    if (results != nullptr)
      *results = std::move(pr);
    return r;
  }

  [[nodiscard]] const std::vector<Param>& params() const noexcept { return params_; }
  [[nodiscard]] int evaluations() const noexcept { return evaluations_; }
  /// `range_of(p).prior_sigma`, but a weak prior (3 e-folds) for attention over llama.cpp's
  /// shared KV window: its score and softmax path without flash attention has no datasheet
  /// analogue near the linear layers' rate (docs/calibration.md).
  [[nodiscard]] double prior_sigma(Param p) const noexcept {
    if (p == Param::Attention && start_.engine.slot_cache)
      return 3.0;
    return range_of(p).prior_sigma;
  }
  [[nodiscard]] const Coordinates& coords() const noexcept { return coords_; }

 private:
  Coordinates coords_;
  const sim::EngineSpec& start_;
  const std::vector<Point>& points_;
  const FitOptions& o_;
  std::vector<Param> params_;
  std::vector<double> prior_;
  std::vector<std::pair<Metric, double>> metrics_;
  int evaluations_ = 0;
};

/// The per-request API overhead and first-step warm-up the points suggest: α ≈ 0.7 × the smallest
/// median (else mean) TTFT, W ≈ (mean − median TTFT) / (concurrency / prompts) over the closed
/// loops that report both (the first wave, concurrency / prompts of the requests, carries W), the
/// median of those; others at the spec's values. In θ units.
std::vector<double> theta_start_guess(const std::vector<Param>& params, const Coordinates& coords,
                                      const std::vector<Point>& points,
                                      const sim::EngineSpec& spec) {
  double min_ttft = std::numeric_limits<double>::infinity();
  std::vector<double> warmups;
  for (const auto& p : points) {
    const double median = p.measured.ttft_median_ms;
    const double mean = p.measured.ttft_mean_ms;
    const double ttft = std::isnan(median) ? mean : median;
    if (ttft > 0)
      min_ttft = std::min(min_ttft, ttft);
    const Workload& w = p.workload;
    if (mean > 0 && median > 0 && w.max_concurrency > 0 && w.num_prompts > 0) {
      const double first_wave = static_cast<double>(std::min(w.max_concurrency, w.num_prompts)) /
                                static_cast<double>(w.num_prompts);
      warmups.push_back(std::max(0.0, mean - median) / first_wave);
    }
  }
  std::sort(warmups.begin(), warmups.end());
  std::vector<double> theta;
  for (const Param p : params) {
    double value = get_param(spec, p);
    if (p == Param::ApiOverhead && std::isfinite(min_ttft))
      value = 0.7 * min_ttft * 1e3;
    if (p == Param::FirstStepOverhead && !warmups.empty())
      value = warmups[warmups.size() / 2] * 1e3;
    theta.push_back(coords.to_theta(p, value));
  }
  return theta;
}

double sum_sq(const std::vector<double>& r) {
  double s = 0;
  for (const double x : r) s += x * x;
  return s;
}

/// Forward-difference Jacobian of the residuals (step 0.05 in ln units, backward at the upper
/// bound).
ublas::matrix<double> jacobian(Problem& prob, const std::vector<double>& theta,
                               const std::vector<double>& r0) {
  const std::size_t n = prob.params().size();
  ublas::matrix<double> j(r0.size(), n);
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<double> t = theta;
    double h = 0.05;
    if (clamp_theta(prob.params()[k], t[k] + h) != t[k] + h)
      h = -h;
    t[k] += h;
    const std::vector<double> r = prob.residuals(t);
    for (std::size_t i = 0; i < r0.size(); ++i) j(i, k) = (r[i] - r0[i]) / h;
  }
  return j;
}

/// Levenberg–Marquardt from `theta` (in place); returns the final cost.
double levenberg_marquardt(Problem& prob, std::vector<double>& theta, const FitOptions& o) {
  const std::size_t n = theta.size();
  std::vector<double> r = prob.residuals(theta);
  double cost = sum_sq(r);
  double lambda = 1e-2;
  for (int iter = 0; iter < o.max_iterations && n > 0; ++iter) {
    const ublas::matrix<double> j = jacobian(prob, theta, r);
    const ublas::matrix<double> a = ublas::prod(ublas::trans(j), j);
    ublas::vector<double> rv(r.size());
    std::copy(r.begin(), r.end(), rv.begin());
    const ublas::vector<double> g = ublas::prod(ublas::trans(j), rv);
    bool accepted = false;
    double step_max = 0;
    for (int attempt = 0; attempt < 8 && !accepted; ++attempt) {
      ublas::matrix<double> damped = a;
      for (std::size_t k = 0; k < n; ++k) damped(k, k) += lambda * (a(k, k) + 1e-6);
      ublas::vector<double> delta = -g;
      if (!solve(damped, delta)) {
        lambda *= 10;
        continue;
      }
      std::vector<double> trial = theta;
      step_max = 0;
      for (std::size_t k = 0; k < n; ++k) {
        trial[k] = clamp_theta(prob.params()[k], theta[k] + std::clamp(delta(k), -2.0, 2.0));
        step_max = std::max(step_max, std::abs(trial[k] - theta[k]));
      }
      std::vector<double> rt = prob.residuals(trial);
      const double ct = sum_sq(rt);
      if (ct < cost) {
        const double gain = (cost - ct) / std::max(cost, 1e-12);
        theta = std::move(trial);
        r = std::move(rt);
        cost = ct;
        lambda = std::max(lambda / 3, 1e-7);
        accepted = true;
        if (o.progress)
          o.progress(iter, cost);
        if (gain < 1e-4 || step_max < 1e-3)
          return cost;
      } else {
        lambda *= 4;
      }
    }
    if (!accepted)
      break;
  }
  return cost;
}

/// Posterior standard deviations of θ: sqrt(diag((JᵀJ)⁻¹)) with the prior rows in J.
std::vector<double> posterior_sigma(Problem& prob, const std::vector<double>& theta) {
  const std::size_t n = theta.size();
  std::vector<double> out(n, 1e9);
  if (n == 0)
    return out;
  const std::vector<double> r = prob.residuals(theta);
  const ublas::matrix<double> j = jacobian(prob, theta, r);
  const ublas::matrix<double> a = ublas::prod(ublas::trans(j), j);
  for (std::size_t k = 0; k < n; ++k) {
    ublas::vector<double> e(n, 0.0);
    e(k) = 1;
    if (solve(a, e))
      out[k] = std::sqrt(std::max(e(k), 0.0));
  }
  return out;
}

}  // namespace

std::string_view to_string(Param p) noexcept {
  for (const auto& [param, name] : kParamNames) {
    if (param == p)
      return name;
  }
  return "?";
}

Param parse_param(std::string_view name) {
  std::string known;
  for (const auto& [param, n] : kParamNames) {
    if (n == name)
      return param;
    known += known.empty() ? std::string(n) : ", " + std::string(n);
  }
  throw Exception(
      Error{fmt::format("unknown parameter '{}' (known: {})", name, known), "--fit", -1});
}

bool applies_to(const sim::EngineSpec& spec, Param p) noexcept {
  if (p == Param::MoeExpertOverhead)
    return spec.family == sim::EngineFamily::Llamacpp && spec.model.is_moe();
  if (p == Param::VecScoreOverhead)
    return spec.family == sim::EngineFamily::Llamacpp && spec.gpu.cpu;
  return true;
}

double get_param(const sim::EngineSpec& s, Param p) noexcept {
  switch (p) {
    case Param::Compute:
      return s.efficiency.compute;
    case Param::Memory:
      return s.efficiency.memory;
    case Param::Attention:
      return s.efficiency.attention;
    case Param::StepOverhead:
      return s.efficiency.step_overhead_us;
    case Param::RequestOverhead:
      return s.efficiency.request_overhead_us;
    case Param::ApiOverhead:
      return s.engine.overheads.api_overhead_us;
    case Param::FirstStepOverhead:
      return s.engine.overheads.first_step_overhead_us;
    case Param::MoeExpertOverhead:
      return s.efficiency.moe_expert_overhead_us;
    case Param::VecScoreOverhead:
      return s.efficiency.vec_score_overhead_us;
  }
  return 0;
}

void set_param(sim::EngineSpec& s, Param p, double value) noexcept {
  switch (p) {
    case Param::Compute:
      s.efficiency.compute = value;
      return;
    case Param::Memory:
      s.efficiency.memory = value;
      return;
    case Param::Attention:
      s.efficiency.attention = value;
      return;
    case Param::StepOverhead:
      s.efficiency.step_overhead_us = value;
      return;
    case Param::RequestOverhead:
      s.efficiency.request_overhead_us = value;
      return;
    case Param::ApiOverhead:
      s.engine.overheads.api_overhead_us = value;
      return;
    case Param::FirstStepOverhead:
      s.engine.overheads.first_step_overhead_us = value;
      return;
    case Param::MoeExpertOverhead:
      s.efficiency.moe_expert_overhead_us = value;
      return;
    case Param::VecScoreOverhead:
      s.efficiency.vec_score_overhead_us = value;
      return;
  }
}

std::vector<PointResult> predict_all(const sim::EngineSpec& spec, const std::vector<Point>& points,
                                     bool held_out, int jobs) {
  std::vector<PointResult> out(points.size());
  const auto work = [&](std::size_t first, std::size_t step) {
    for (std::size_t i = first; i < points.size(); i += step) {
      out[i].point = points[i];
      out[i].predicted = predict(spec, points[i]);
      out[i].held_out = held_out;
    }
  };
  const auto threads = static_cast<std::size_t>(std::clamp(jobs, 1, 64));
  if (threads == 1 || points.size() < 2) {
    work(0, 1);
    return out;
  }
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < std::min(threads, points.size()); ++t)
    pool.emplace_back(work, t, std::min(threads, points.size()));
  for (auto& th : pool) th.join();
  return out;
}

FitResult fit(const sim::EngineSpec& start, const std::vector<Point>& points,
              const FitOptions& options) {
  const auto metrics = weighted_metrics(options);
  const bool any = std::any_of(points.begin(), points.end(), [&](const Point& p) {
    return std::any_of(metrics.begin(), metrics.end(), [&](const auto& m) {
      return !std::isnan(metric_value(p.measured, m.first));
    });
  });
  if (!any)
    throw Exception(Error{"no point has a TPOT, TTFT or throughput figure to fit", "calibrate"});
  FitResult result;
  result.spec = start;
  std::vector<Param> free;
  for (const Param p : options.params) {
    if (applies_to(start, p))
      free.push_back(p);
  }
  std::vector<ParamResult> report;
  report.reserve(free.size());
  for (const Param p : free)
    report.push_back(ParamResult{p, get_param(start, p), get_param(start, p), 0, true});
  int evaluations = 0;
  const Coordinates coords{ttft_scale_us(points)};
  std::vector<double> theta, prior;
  for (const Param p : free) {
    theta.push_back(coords.to_theta(p, get_param(start, p)));
    prior.push_back(coords.prior_theta(p, get_param(start, p)));
  }
  Problem prob(start, points, options, free, prior, coords);
  double cost = levenberg_marquardt(prob, theta, options);
  // A second start from the overheads the points suggest (`theta_start_guess`): slow prefill and
  // large per-request overheads can explain the same TTFTs; the fit keeps the start that ends
  // lower.
  std::vector<double> other = theta_start_guess(free, coords, points, start);
  if (other != theta) {
    const double other_cost = levenberg_marquardt(prob, other, options);
    if (other_cost < cost) {
      theta = std::move(other);
      cost = other_cost;
    }
  }
  // Which parameters the points pin: a posterior spread below `identified_sigma`, or, for a wide
  // one (a partner parameter moves the points the same way), a fit that worsens by more than two
  // noise units squared (Δχ² > 4) when it goes back to its default. The others go back to their
  // defaults together, greedily from the least missed, as long as all of them cost the fit no
  // more than Δχ² = 4; then the rest are fitted again once.
  const std::vector<double> sigma = posterior_sigma(prob, theta);
  const auto reset_theta = [&](std::size_t i) {
    return coords.prior_theta(free[i], report[i].initial);
  };
  std::vector<std::pair<double, std::size_t>> wide;  // (Δχ² alone, index)
  for (std::size_t i = 0; i < free.size(); ++i) {
    report[i].value = coords.to_value(free[i], theta[i]);
    // A linear parameter's spread relative to its value (or to a tenth of the TTFT scale near 0).
    report[i].log_sigma = range_of(free[i]).linear ? sigma[i] / std::max(theta[i], 0.1) : sigma[i];
    if (report[i].log_sigma < options.identified_sigma)
      continue;
    std::vector<double> alone = theta;
    alone[i] = reset_theta(i);
    wide.emplace_back(sum_sq(prob.residuals(alone)) - cost, i);
  }
  std::sort(wide.begin(), wide.end());
  std::vector<double> reset = theta;
  std::vector<bool> dropped(free.size(), false);
  for (const auto& [alone_cost, i] : wide) {
    if (alone_cost > 4.0)
      break;
    std::vector<double> trial = reset;
    trial[i] = reset_theta(i);
    if (sum_sq(prob.residuals(trial)) - cost > 4.0)
      continue;
    reset = std::move(trial);
    dropped[i] = true;
  }
  std::vector<Param> keep;
  std::vector<double> keep_theta, keep_prior;
  for (std::size_t i = 0; i < free.size(); ++i) {
    report[i].identified = !dropped[i];
    if (dropped[i]) {
      report[i].value = report[i].initial;  // the data could not pin it: back to the default
      continue;
    }
    keep.push_back(free[i]);
    keep_theta.push_back(theta[i]);
    keep_prior.push_back(prior[i]);
  }
  evaluations += prob.evaluations();
  if (keep.size() == free.size() || keep.empty()) {
    result.spec = prob.spec_at(theta);
  } else {
    Problem again(start, points, options, keep, keep_prior, coords);
    levenberg_marquardt(again, keep_theta, options);
    result.spec = again.spec_at(keep_theta);
    evaluations += again.evaluations();
    for (std::size_t k = 0, i = 0; i < free.size(); ++i) {
      if (!dropped[i])
        report[i].value = coords.to_value(free[i], keep_theta[k++]);
    }
  }
  result.params = std::move(report);
  result.points = predict_all(result.spec, points, false, options.jobs);
  result.evaluations = evaluations + 1;
  // The cost without the priors, for reporting.
  double data_cost = 0;
  for (const auto& p : result.points) {
    for (const auto& [m, w] : metrics) {
      const double e =
          relative_error(metric_value(p.predicted, m), metric_value(p.point.measured, m));
      if (!std::isnan(e)) {
        const double l = std::log1p(std::max(e, -0.99));
        data_cost += w * w * l * l;
      }
    }
  }
  result.cost = data_cost;
  return result;
}

}  // namespace llmbench::calib
