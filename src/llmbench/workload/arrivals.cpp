#include "llmbench/workload/arrivals.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmbench::workload {
namespace {

/// Draws arrival times one by one. Gaps follow vLLM `bench serve`: with request rate λ and
/// burstiness k, gap ~ Gamma(shape k, scale 1/(λk)) (mean 1/λ, CV 1/√k); k = 1 is a Poisson
/// process (exponential gaps, drawn by inversion). Times are accumulated in seconds as doubles
/// and rounded to the nearest nanosecond, so rounding never accumulates.
class ArrivalGenerator {
 public:
  explicit ArrivalGenerator(const ArrivalOptions& options)
      : rate_(options.request_rate), k_(options.burstiness), rng_(options.seed, "arrivals") {
    if (std::isnan(rate_)) {
      throw Exception(Error{"request rate is NaN", "--request-rate", -1});
    }
    if (!(k_ > 0.0)) {
      throw Exception(Error{fmt::format("must be > 0 (or inf), got {}", k_), "--burstiness", -1});
    }
    all_at_once_ = std::isinf(rate_) || rate_ <= 0.0;
  }

  /// The next arrival time in ns (0 for the first).
  TimeNs next() {
    const std::int64_t i = index_++;
    if (all_at_once_ || i == 0) {
      return 0;
    }
    if (std::isinf(k_)) {
      // Constant spacing: t_i = i / rate, computed directly.
      return to_ns(static_cast<double>(i) / rate_);
    }
    const double gap = k_ == 1.0 ? rng_.exponential(rate_) : rng_.gamma(k_, 1.0 / (rate_ * k_));
    elapsed_s_ += gap;
    return to_ns(elapsed_s_);
  }

 private:
  static TimeNs to_ns(double seconds) {
    const double ns = std::round(seconds * 1e9);
    // Far beyond any run; saturate rather than overflow.
    if (ns >= static_cast<double>(std::numeric_limits<TimeNs>::max())) {
      return std::numeric_limits<TimeNs>::max();
    }
    return static_cast<TimeNs>(ns);
  }

  double rate_;
  double k_;
  Rng rng_;
  bool all_at_once_ = false;
  std::int64_t index_ = 0;
  double elapsed_s_ = 0.0;
};

}  // namespace

std::vector<TimeNs> arrival_times(std::int64_t count, const ArrivalOptions& options) {
  if (count < 0) {
    throw Exception(fmt::format("arrival count must be >= 0, got {}", count));
  }
  ArrivalGenerator gen(options);
  std::vector<TimeNs> times;
  times.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    times.push_back(gen.next());
  }
  return times;
}

std::vector<TimeNs> arrival_times_until(TimeNs duration_ns, std::int64_t max_count,
                                        const ArrivalOptions& options) {
  if (max_count < 0) {
    throw Exception(fmt::format("arrival max count must be >= 0, got {}", max_count));
  }
  ArrivalGenerator gen(options);
  std::vector<TimeNs> times;
  while (static_cast<std::int64_t>(times.size()) < max_count) {
    const TimeNs t = gen.next();
    if (t >= duration_ns) {
      break;
    }
    times.push_back(t);
  }
  return times;
}

std::vector<TimeNs> dataset_arrivals(const std::vector<Sample>& samples, std::size_t first,
                                     std::int64_t count) {
  std::vector<TimeNs> out;
  if (first >= samples.size() || samples[first].arrival_ns < 0 || count <= 0) {
    return out;
  }
  const std::size_t end = first + std::min(static_cast<std::size_t>(count), samples.size() - first);
  const TimeNs t0 = samples[first].arrival_ns;
  out.reserve(end - first);
  for (std::size_t i = first; i < end; ++i) {
    const TimeNs t = samples[i].arrival_ns;
    if (t < t0 || (!out.empty() && t - t0 < out.back())) {
      throw Exception(Error{fmt::format("sample {} ({}) has no arrival time or comes before the "
                                        "one before it",
                                        i, samples[i].source_id),
                            "--dataset-path", -1});
    }
    out.push_back(t - t0);
  }
  return out;
}

}  // namespace llmbench::workload
