#include "llmbench/core/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace llmbench {
namespace {

TEST(Rng, SameSeedSameStream) {
  Rng a(42, "arrivals");
  Rng b(42, "arrivals");
  Rng c(42, "lengths");
  EXPECT_EQ(a.next_u64(), b.next_u64());
  EXPECT_NE(Rng(42, "arrivals").next_u64(), c.next_u64());
}

TEST(Rng, Mt19937_64ReferenceValue) {
  // [rand.predef]: the 10000th output of a default-constructed mt19937_64 is 9981545732273789042.
  Rng r(5489U);
  std::uint64_t v = 0;
  for (int i = 0; i < 10000; ++i) {
    v = r.next_u64();
  }
  EXPECT_EQ(v, 9981545732273789042ULL);
}

TEST(Rng, UniformIntStaysInRange) {
  Rng r(7);
  for (int i = 0; i < 10000; ++i) {
    const auto v = r.uniform_int(-3, 5);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 5);
  }
}

TEST(Rng, GammaMeanAndCv) {
  for (const double k : {0.5, 1.0, 4.0}) {
    Rng r(1234, "gamma");
    const int n = 200000;
    double sum = 0;
    double sum2 = 0;
    for (int i = 0; i < n; ++i) {
      const double x = r.gamma(k, 2.0);
      sum += x;
      sum2 += x * x;
    }
    const double mean = sum / n;
    const double var = sum2 / n - mean * mean;
    EXPECT_NEAR(mean, 2.0 * k, 0.02 * 2.0 * k) << "k=" << k;
    EXPECT_NEAR(std::sqrt(var) / mean, 1.0 / std::sqrt(k), 0.02) << "k=" << k;
  }
}

TEST(Rng, ExponentialMean) {
  Rng r(99);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    sum += r.exponential(4.0);
  }
  EXPECT_NEAR(sum / n, 0.25, 0.005);
}

}  // namespace
}  // namespace llmbench
