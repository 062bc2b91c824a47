#include "llmbench/sim/comm_model.hpp"

#include "llmbench/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace llmbench::sim {

namespace {

/// Largest relative error and sum of squared relative errors of `p` over `points`.
std::pair<double, double> errors_of(const CommPiece& p, std::span<const CollectiveTiming> points) {
  double worst = 0;
  double sse = 0;
  for (const auto& t : points) {
    const double e = (p.time_us(static_cast<double>(t.bytes)) - t.mean_us) / t.mean_us;
    worst = std::max(worst, std::abs(e));
    sse += e * e;
  }
  return {worst, sse};
}

/// One DP state: pieces so far, their largest error and summed squared error, and the split.
struct Cover {
  double worst = std::numeric_limits<double>::infinity();
  double sse = std::numeric_limits<double>::infinity();
  std::size_t from = 0;  ///< where the last piece starts
  [[nodiscard]] bool better_than(const Cover& o) const noexcept {
    return std::tie(worst, sse) < std::tie(o.worst, o.sse);
  }
};

}  // namespace

double CommPiece::bandwidth_gb_s() const noexcept {
  // us_per_byte µs per byte = 1 / (us_per_byte · 1e3) GB/s.
  return us_per_byte > 0 ? 1.0 / (us_per_byte * 1e3) : std::numeric_limits<double>::infinity();
}

double CommCurve::time_us(double bytes) const noexcept {
  LLMBENCH_ASSERT(!pieces.empty(), "a communication curve needs a piece");
  for (std::size_t i = 0; i + 1 < pieces.size(); ++i) {
    const double handover = std::sqrt(static_cast<double>(pieces[i].max_bytes) *
                                      static_cast<double>(pieces[i + 1].min_bytes));
    if (bytes <= handover)
      return pieces[i].time_us(bytes);
  }
  return pieces.back().time_us(bytes);
}

double CommCurve::max_error() const noexcept {
  double worst = 0;
  for (const auto& p : pieces) worst = std::max(worst, p.max_error);
  return worst;
}

CommPiece fit_line(std::span<const CollectiveTiming> points) {
  LLMBENCH_ASSERT(points.size() >= 2, "a line needs two sizes");
  CommPiece p;
  p.min_bytes = points.front().bytes;
  p.max_bytes = points.front().bytes;
  for (const auto& t : points) {
    LLMBENCH_ASSERT(t.mean_us > 0 && t.bytes > 0, "a timing needs a size and a positive time");
    p.min_bytes = std::min(p.min_bytes, t.bytes);
    p.max_bytes = std::max(p.max_bytes, t.bytes);
  }
  // Weighted least squares with w = 1/t² on sizes scaled to (0, 1] (conditioning), then the
  // slope scaled back: the normal equations of Σ w (a + b·x − t)².
  const double scale = static_cast<double>(p.max_bytes);
  double sw = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
  for (const auto& t : points) {
    const double w = 1.0 / (t.mean_us * t.mean_us);
    const double x = static_cast<double>(t.bytes) / scale;
    sw += w;
    sx += w * x;
    sxx += w * x * x;
    sy += w * t.mean_us;
    sxy += w * x * t.mean_us;
  }
  const double det = sw * sxx - sx * sx;
  double a = det > 0 ? (sxx * sy - sx * sxy) / det : -1;
  double b = det > 0 ? (sw * sxy - sx * sy) / det : -1;
  if (a < 0) {  // through the origin: pure bandwidth
    a = 0;
    b = sxy / sxx;
  } else if (b < 0) {  // no growth with the size: pure latency
    b = 0;
    a = sy / sw;
  }
  p.latency_us = a;
  p.us_per_byte = b / scale;
  p.max_error = errors_of(p, points).first;
  return p;
}

CommCurve fit_curve(std::span<const CollectiveTiming> points, const CommFitOptions& options) {
  const std::size_t n = points.size();
  LLMBENCH_ASSERT(n >= 2, "a curve needs two sizes");
  const std::size_t most = std::max<std::size_t>(
      1, std::min<std::size_t>(static_cast<std::size_t>(std::max(1, options.max_pieces)), n / 2));
  // best[k][j]: the best cover of the first j points by k pieces of ≥ 2 points each.
  std::vector<std::vector<Cover>> best(most + 1, std::vector<Cover>(n + 1));
  best[0][0] = Cover{.worst = 0, .sse = 0, .from = 0};
  for (std::size_t k = 1; k <= most; ++k) {
    for (std::size_t j = 2 * k; j <= n; ++j) {
      for (std::size_t i = 2 * (k - 1); i + 2 <= j; ++i) {
        const Cover& before = best[k - 1][i];
        if (!std::isfinite(before.worst))
          continue;
        const auto [worst, sse] =
            errors_of(fit_line(points.subspan(i, j - i)), points.subspan(i, j - i));
        const Cover c{.worst = std::max(before.worst, worst), .sse = before.sse + sse, .from = i};
        if (c.better_than(best[k][j]))
          best[k][j] = c;
      }
    }
  }
  // The fewest pieces within the tolerance, else the cover with the smallest largest error.
  std::size_t chosen = 1;
  for (std::size_t k = 1; k <= most; ++k) {
    if (best[k][n].worst <= options.tolerance) {
      chosen = k;
      break;
    }
    if (best[k][n].better_than(best[chosen][n]))
      chosen = k;
  }
  CommCurve curve;
  for (std::size_t k = chosen, j = n; k > 0; --k) {
    const std::size_t i = best[k][j].from;
    curve.pieces.push_back(fit_line(points.subspan(i, j - i)));
    j = i;
  }
  std::reverse(curve.pieces.begin(), curve.pieces.end());
  return curve;
}

double fit_error(const CommCurve& curve, const CollectiveTiming& point) noexcept {
  return (curve.time_us(static_cast<double>(point.bytes)) - point.mean_us) / point.mean_us;
}

std::vector<CommFit> fit_comm(std::span<const CollectiveTiming> timings,
                              const CommFitOptions& options) {
  std::vector<CommFit> fits;
  const auto same = [](const CommFit& f, const CollectiveTiming& t) {
    return f.collective == t.collective && f.dtype == t.dtype && f.gpus == t.gpus;
  };
  for (const auto& t : timings) {
    auto it = std::find_if(fits.begin(), fits.end(), [&](const CommFit& f) { return same(f, t); });
    if (it == fits.end()) {
      fits.push_back(CommFit{.collective = t.collective, .dtype = t.dtype, .gpus = t.gpus});
      it = std::prev(fits.end());
    }
    it->points.push_back(t);
  }
  std::erase_if(fits, [](const CommFit& f) { return f.points.size() < 2; });
  for (auto& f : fits) {
    std::sort(
        f.points.begin(), f.points.end(),
        [](const CollectiveTiming& a, const CollectiveTiming& b) { return a.bytes < b.bytes; });
    f.line = fit_line(f.points);
    f.curve = fit_curve(f.points, options);
  }
  return fits;
}

const CommFit* CommModel::find(Collective c, int gpus,
                               std::span<const CommDtype> preference) const noexcept {
  for (const CommDtype d : preference) {
    for (const auto& f : fits) {
      if (f.collective == c && f.gpus == gpus && f.dtype == d)
        return &f;
    }
  }
  return nullptr;
}

std::vector<int> CommModel::gpu_counts(Collective c) const {
  std::vector<int> out;
  for (const auto& f : fits) {
    if (f.collective == c)
      out.push_back(f.gpus);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

CommTerms comm_terms(const CommModel& model, int tp, int ep) {
  CommTerms t;
  if (tp > 1) {
    if (const CommFit* f = model.find(Collective::AllReduce, tp, kAllReduceDtypes))
      t.all_reduce = f->curve;
  }
  if (ep > 1) {
    if (const CommFit* f = model.find(Collective::AllToAll, ep, kAllToAllDtypes))
      t.all_to_all = f->curve;
  }
  return t;
}

}  // namespace llmbench::sim
