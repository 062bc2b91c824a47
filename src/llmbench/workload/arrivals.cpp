#include "llmbench/workload/arrivals.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

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

/// The rate of request `i` of `count` under the ramp of `o` (ArrivalOptions::ramp_up).
double ramp_rate(const ArrivalOptions& o, std::int64_t i, std::int64_t count) {
  const double progress =
      static_cast<double>(i) / static_cast<double>(std::max<std::int64_t>(count - 1, 1));
  if (o.ramp_up == RampUp::Linear)
    return o.ramp_up_start_rps + (o.ramp_up_end_rps - o.ramp_up_start_rps) * progress;
  return o.ramp_up_start_rps * std::pow(o.ramp_up_end_rps / o.ramp_up_start_rps, progress);
}

std::vector<TimeNs> ramp_arrival_times(std::int64_t count, const ArrivalOptions& o) {
  const bool exponential = o.ramp_up == RampUp::Exponential;
  if (!(o.ramp_up_end_rps > 0) || !(o.ramp_up_start_rps >= 0) || std::isinf(o.ramp_up_end_rps) ||
      (exponential && !(o.ramp_up_start_rps > 0))) {
    throw Exception(
        Error{fmt::format("needs finite rates with end > 0 and start {} 0 (got start "
                          "{}, end {})",
                          exponential ? ">" : ">=", o.ramp_up_start_rps, o.ramp_up_end_rps),
              "--ramp-up-strategy", -1});
  }
  if (!(o.burstiness > 0.0)) {
    throw Exception(
        Error{fmt::format("must be > 0 (or inf), got {}", o.burstiness), "--burstiness", -1});
  }
  Rng rng(o.seed, "arrivals");
  std::vector<TimeNs> times;
  times.reserve(static_cast<std::size_t>(count));
  double elapsed_s = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    if (i > 0) {
      const double rate = ramp_rate(o, i, count);
      const double k = o.burstiness;
      elapsed_s += std::isinf(k) ? 1.0 / rate
                   : k == 1.0    ? rng.exponential(rate)
                                 : rng.gamma(k, 1.0 / (rate * k));
    }
    times.push_back(static_cast<TimeNs>(std::llround(elapsed_s * 1e9)));
  }
  return times;
}

}  // namespace

RampUp parse_ramp_up(std::string_view name) {
  if (const auto ramp = kRampUpNames.find(name))
    return *ramp;
  throw Exception(Error{fmt::format("unknown strategy '{}'; valid: {}", name, kRampUpNames.names()),
                        "--ramp-up-strategy", -1});
}

std::vector<TimeNs> arrival_times(std::int64_t count, const ArrivalOptions& options) {
  if (count < 0) {
    throw Exception(fmt::format("arrival count must be >= 0, got {}", count));
  }
  if (options.ramp_up != RampUp::None) {
    return ramp_arrival_times(count, options);
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
  if (options.ramp_up != RampUp::None) {
    throw Exception(Error{"ramps over --num-prompts requests: give --num-prompts, not --duration",
                          "--ramp-up-strategy", -1});
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
