#include "llmbench/analysis/queue_fit.hpp"

#include <fmt/format.h>

#include <cmath>

namespace llmbench::analysis {
namespace {

std::vector<std::pair<double, double>> positive(const std::vector<std::pair<double, double>>& in) {
  std::vector<std::pair<double, double>> out;
  for (const auto& [x, y] : in) {
    if (std::isfinite(x) && std::isfinite(y) && x > 0 && y > 0)
      out.emplace_back(x, y);
  }
  return out;
}

template <typename Predict>
double rms_relative(const std::vector<std::pair<double, double>>& pts, Predict&& predict) {
  double sum = 0;
  for (const auto& [x, y] : pts) {
    const double e = (predict(x) - y) / y;
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(pts.size()));
}

}  // namespace

QueueFit fit_mm1_latency(const std::vector<std::pair<double, double>>& points) {
  QueueFit f;
  const auto pts = positive(points);
  f.points = pts.size();
  if (pts.size() < 2) {
    f.reason = "needs at least 2 points with throughput and latency > 0";
    return f;
  }
  // Least squares of y = 1/L on x = X: y = c0 + c1·x.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, l] : pts) {
    sx += x;
    sy += 1 / l;
    sxx += x * x;
    sxy += x / l;
  }
  const double n = static_cast<double>(pts.size());
  const double den = n * sxx - sx * sx;
  if (!(std::abs(den) > 0)) {
    f.reason = "the points share one throughput";
    return f;
  }
  const double c1 = (n * sxy - sx * sy) / den;
  const double c0 = (sy - c1 * sx) / n;
  if (!(c0 > 0) || !(c1 < 0)) {
    f.reason = "latency does not rise with throughput: no finite saturation";
    return f;
  }
  f.a = 1 / c0;
  f.b = -c0 / c1;
  f.rms_relative_error = rms_relative(pts, [&](double x) { return f.a / (1 - x / f.b); });
  f.ok = std::isfinite(f.rms_relative_error);
  if (!f.ok)
    f.reason = "a point is at or beyond the fitted saturation";
  return f;
}

QueueFit fit_knee_model(const std::vector<std::pair<double, double>>& points) {
  QueueFit f;
  const auto pts = positive(points);
  f.points = pts.size();
  if (pts.size() < 2) {
    f.reason = "needs at least 2 points with queue depth and throughput > 0";
    return f;
  }
  double best_sse = std::numeric_limits<double>::infinity();
  for (int i = 1; i < 1000; ++i) {
    const double rho = i / 1000.0;
    // X = μ·g(Q): least squares μ = Σ g·X / Σ g².
    double sgx = 0, sgg = 0;
    for (const auto& [q, x] : pts) {
      const double g = (1 - rho) / (1 + q * (1 - rho));
      sgx += g * x;
      sgg += g * g;
    }
    const double mu = sgx / sgg;
    double sse = 0;
    for (const auto& [q, x] : pts) {
      const double e = mu * (1 - rho) / (1 + q * (1 - rho)) - x;
      sse += e * e;
    }
    if (sse < best_sse) {
      best_sse = sse;
      f.a = mu;
      f.b = rho;
    }
  }
  f.rms_relative_error =
      rms_relative(pts, [&](double q) { return f.a * (1 - f.b) / (1 + q * (1 - f.b)); });
  f.ok = std::isfinite(f.rms_relative_error);
  return f;
}

bool within_bound(const QueueFit& fit) noexcept {
  return fit.ok && fit.rms_relative_error <= kFitErrorBound;
}

std::string fits_line(const QueueFit& mm1, const QueueFit& knee_model, bool verbose) {
  std::vector<std::string> found;
  std::vector<std::string> missed;
  const auto error = [](const QueueFit& f) {
    return f.ok ? fmt::format("{:.1f}%", 100 * f.rms_relative_error) : f.reason;
  };
  const double bound = 100 * kFitErrorBound;
  if (within_bound(mm1)) {
    found.push_back(
        verbose ? fmt::format("M/M/1 fit: L0 {:.1f} ms, Xmax {:.2f} req/s (rms error {:.1f}%)",
                              mm1.a, mm1.b, 100 * mm1.rms_relative_error)
                : fmt::format("M/M/1 within {:g}%, Xmax {:.2f} req/s", bound, mm1.b));
  } else {
    missed.push_back("M/M/1 " + error(mm1));
  }
  if (within_bound(knee_model)) {
    found.push_back(
        verbose ? fmt::format("knee-model fit: mu {:.2f}, rho {:.3f} (rms error {:.1f}%)",
                              knee_model.a, knee_model.b, 100 * knee_model.rms_relative_error)
                : fmt::format("knee model within {:g}%", bound));
  } else {
    missed.push_back("knee model " + error(knee_model));
  }
  std::string line = "queue fits: ";
  for (std::size_t i = 0; i < found.size(); ++i) line += (i > 0 ? "; " : "") + found[i];
  if (found.empty()) {
    line += fmt::format("no fit within {:g}%", bound);
  } else if (verbose && !missed.empty()) {
    line += fmt::format("; no fit within {:g}%", bound);
  }
  if (verbose && !missed.empty()) {
    std::string why;
    for (const auto& m : missed) why += (why.empty() ? "" : ", ") + m;
    line += fmt::format(" ({})", why);
  }
  return line;
}

}  // namespace llmbench::analysis
