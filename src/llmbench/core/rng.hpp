#pragma once
/// @file
/// Seeded random streams with our own transforms over `std::mt19937_64`, whose raw output sequence
/// the C++ standard fixes ([rand.predef]); `std::*_distribution` results differ between standard
/// libraries, so none are used (docs/architecture.md "Conventions the code relies on": randomness).

#include <cstdint>
#include <random>
#include <string_view>

namespace llmbench {

/// SplitMix64 finalizer (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a fast, well-mixed 64-bit hash step, also used for block hashes in the simulator.
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

/// Derives an independent 64-bit seed for one purpose ("arrivals", "lengths", "sampling") from
/// the master seed: SplitMix64 of (master XOR FNV-1a-64(purpose)). Deterministic everywhere.
std::uint64_t derive_seed(std::uint64_t master_seed, std::string_view purpose) noexcept;

/// One random stream. Not thread-safe: give each thread or purpose its own stream.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  /// Stream for `purpose` derived from `master_seed` (see `derive_seed`).
  Rng(std::uint64_t master_seed, std::string_view purpose)
      : engine_(derive_seed(master_seed, purpose)) {}

  /// Raw 64-bit output of mt19937_64.
  std::uint64_t next_u64() { return engine_(); }
  /// Uniform double in [0, 1) from the top 53 bits.
  double uniform01();
  /// Uniform double in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  /// Uniform integer in [lo, hi] inclusive (requires lo <= hi); floor of a scaled uniform, bias
  /// below 2^-53 relative.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  /// Exponential variate with the given rate (mean 1/rate) by inversion: -log(1-U)/rate.
  double exponential(double rate);
  /// Standard normal variate (Marsaglia polar method).
  double normal();
  /// Gamma variate with shape k > 0 and scale theta > 0 (mean k*theta, CV 1/sqrt(k)).
  /// Marsaglia & Tsang, "A simple method for generating gamma variables", ACM TOMS 26(3), 2000;
  /// for k < 1 uses the boost Gamma(k+1) * U^(1/k) from the same paper.
  double gamma(double shape, double scale);

 private:
  std::mt19937_64 engine_;
};

}  // namespace llmbench
