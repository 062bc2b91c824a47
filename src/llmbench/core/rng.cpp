#include "llmbench/core/rng.hpp"

#include <cmath>

namespace llmbench {

std::uint64_t derive_seed(std::uint64_t master_seed, std::string_view purpose) noexcept {
  // FNV-1a 64-bit of the purpose string.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : purpose) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return splitmix64(master_seed ^ h);
}

double Rng::uniform01() {
  return static_cast<double>(engine_() >> 11U) * 0x1.0p-53;
}

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  const auto span = static_cast<double>(hi - lo) + 1.0;
  auto k = static_cast<std::int64_t>(std::floor(uniform01() * span));
  if (k > hi - lo) {
    k = hi - lo;
  }
  return lo + k;
}

double Rng::exponential(double rate) {
  return -std::log1p(-uniform01()) / rate;
}

double Rng::normal() {
  for (;;) {
    const double u = 2.0 * uniform01() - 1.0;
    const double v = 2.0 * uniform01() - 1.0;
    const double s = u * u + v * v;
    if (s > 0.0 && s < 1.0) {
      return u * std::sqrt(-2.0 * std::log(s) / s);
    }
  }
}

double Rng::gamma(double shape, double scale) {
  if (shape < 1.0) {
    const double u = uniform01();
    return gamma(shape + 1.0, scale) * std::pow(1.0 - u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = 1.0 - uniform01();  // (0, 1]
    if (u < 1.0 - 0.0331 * x * x * x * x ||
        std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) {
      return d * v * scale;
    }
  }
}

}  // namespace llmbench
