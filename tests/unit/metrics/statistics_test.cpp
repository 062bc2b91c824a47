#include "llmbench/metrics/statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace llmbench::metrics {
namespace {

// --- percentile_sorted: numpy.percentile(a, q) default method="linear" -----------------------

TEST(Percentile, FourElements) {
  const std::vector<double> a{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile_sorted(a, 50), 2.5);   // rank 1.5
  EXPECT_DOUBLE_EQ(percentile_sorted(a, 90), 3.7);   // rank 2.7
  EXPECT_DOUBLE_EQ(percentile_sorted(a, 99), 3.97);  // rank 2.97
  EXPECT_DOUBLE_EQ(percentile_sorted(a, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(a, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(a, 25), 1.75);  // rank 0.75
}

TEST(Percentile, SingleElement) {
  EXPECT_DOUBLE_EQ(percentile_sorted({10}, 0), 10.0);
  EXPECT_DOUBLE_EQ(percentile_sorted({10}, 50), 10.0);
  EXPECT_DOUBLE_EQ(percentile_sorted({10}, 99.9), 10.0);
}

TEST(Percentile, ThreeElementsAfterSorting) {
  // describe() sorts [3, 1, 2] → [1, 2, 3]; q=25 → rank 0.5 → 1.5.
  const Stats s = describe({3, 1, 2}, {25, 75});
  EXPECT_DOUBLE_EQ(s.percentiles[0].second, 1.5);
  EXPECT_DOUBLE_EQ(s.percentiles[1].second, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.0);
}

TEST(Percentile, SevenElementsFractionalQ) {
  const std::vector<double> a{10, 20, 30, 40, 50, 60, 70};
  EXPECT_NEAR(percentile_sorted(a, 33.3), 29.98, 1e-12);  // rank 0.333·6 = 1.998
  EXPECT_NEAR(percentile_sorted(a, 99.9), 69.94, 1e-12);  // rank 5.994
  EXPECT_DOUBLE_EQ(percentile_sorted(a, 50), 40.0);       // rank 3 exactly
  EXPECT_NEAR(percentile_sorted(a, 10), 16.0, 1e-12);     // rank 0.6
}

TEST(Percentile, TwoElementsAndEmpty) {
  EXPECT_DOUBLE_EQ(percentile_sorted({0, 100}, 1), 1.0);
  EXPECT_DOUBLE_EQ(percentile_sorted({0, 100}, 62.5), 62.5);
  EXPECT_TRUE(std::isnan(percentile_sorted({}, 50)));
}

TEST(Percentile, RepeatedValuesAndNegative) {
  const std::vector<double> a{-5, -5, 0, 5, 5};
  EXPECT_DOUBLE_EQ(percentile_sorted(a, 30), -4.0);  // rank 1.2 → -5 + 5·0.2
  EXPECT_DOUBLE_EQ(percentile_sorted(a, 80), 5.0);   // rank 3.2 between 5 and 5
}

TEST(Describe, MeanStdMinMax) {
  const Stats s = describe({2, 4, 4, 4, 5, 5, 7, 9}, {50, 99});
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.stddev, 2.0);  // population std (ddof=0)
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.percentiles[1].second, 8.86);  // rank 6.93 → 7 + 2·0.93
}

TEST(Describe, SelectionEqualsFullSortOnRandomSamples) {
  // describe() reads the percentile ranks from the sorted distinct values and their counts; every
  // value must equal the interpolation over the fully sorted sample, for sizes that hit rank edge
  // cases and samples with many ties (simulated ITLs repeat the same step times).
  std::uint64_t x = 12345;
  const auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  const std::vector<double> qs{0, 1, 25, 50, 90, 95, 99, 99.9, 100};
  for (const std::size_t n : {1u, 2u, 3u, 10u, 101u, 1000u, 4097u}) {
    for (const std::uint64_t distinct : {3ULL, 1ULL << 30}) {
      std::vector<double> v(n);
      for (auto& e : v) e = static_cast<double>(next() % distinct) * 0.25;
      const Stats s = describe(v, qs);
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(s.median, percentile_sorted(sorted, 50)) << n;
      EXPECT_EQ(s.min, sorted.front()) << n;
      EXPECT_EQ(s.max, sorted.back()) << n;
      ASSERT_EQ(s.percentiles.size(), qs.size());
      for (std::size_t i = 0; i < qs.size(); ++i) {
        EXPECT_EQ(s.percentiles[i].first, qs[i]);
        EXPECT_EQ(s.percentiles[i].second, percentile_sorted(sorted, qs[i]))
            << "n=" << n << " q=" << qs[i];
      }
    }
  }
}

TEST(Describe, LargeSamplesEqualTheFullSort) {
  // Large samples (the sizes where an earlier bucket-selection path took over) must give exactly
  // the values of the fully sorted sample: with heavy ties, negative values, one far outlier,
  // all values equal, and an infinite value.
  std::uint64_t x = 987654321;
  const auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  const std::vector<double> qs{0, 0.1, 1, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100};
  enum class Shape { Ties, Wide, Negative, Outlier, AllEqual, Infinite };
  for (const std::size_t n : {16384u, 16385u, 100003u}) {
    for (const Shape shape : {Shape::Ties, Shape::Wide, Shape::Negative, Shape::Outlier,
                              Shape::AllEqual, Shape::Infinite}) {
      std::vector<double> v(n);
      for (auto& e : v) {
        switch (shape) {
          case Shape::Ties:
            e = 40.0 + static_cast<double>(next() % 7) * 0.125;
            break;
          case Shape::Wide:
            e = static_cast<double>(next() % (1ULL << 30)) * 1e-3;
            break;
          case Shape::Negative:
            e = static_cast<double>(next() % 20001) - 10000.5;
            break;
          case Shape::Outlier:
            e = static_cast<double>(next() % 1000) * 0.01;
            break;
          case Shape::AllEqual:
            e = 12.5;
            break;
          case Shape::Infinite:
            e = static_cast<double>(next() % 100);
            break;
        }
      }
      if (shape == Shape::Outlier)
        v[n / 2] = 1e12;
      if (shape == Shape::Infinite)
        v[n / 3] = std::numeric_limits<double>::infinity();
      const Stats s = describe(v, qs);
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      const auto label = testing::Message() << "n=" << n << " shape=" << static_cast<int>(shape);
      EXPECT_EQ(s.median, percentile_sorted(sorted, 50)) << label;
      ASSERT_EQ(s.percentiles.size(), qs.size());
      for (std::size_t i = 0; i < qs.size(); ++i) {
        // Both NaN where the interpolation meets inf − inf (q = 100 of the infinite sample).
        const double want = percentile_sorted(sorted, qs[i]);
        const double got = s.percentiles[i].second;
        EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
            << label << " q=" << qs[i] << ": " << got << " vs " << want;
      }
    }
  }
}

TEST(Describe, TinyRangeOnALargeSample) {
  // max − min = 1e-305, a range where scaling by 1 / (max − min) overflows (an earlier bucket
  // path got p0 as the max and p100 as the min here).
  std::vector<double> v(16384);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i % 2 == 0 ? 0.0 : 1e-305;
  const Stats s = describe(v, {0, 50, 100});
  EXPECT_EQ(s.percentiles[0].second, 0.0);
  EXPECT_EQ(s.percentiles[1].second, 5e-306);  // ranks 8191 and 8192: (0 + 1e-305) / 2
  EXPECT_EQ(s.percentiles[2].second, 1e-305);
}

TEST(Describe, ManyPercentilesOnALargeSample) {
  // 400 percentiles on a large sample still give the sorted sample's values.
  std::vector<double> v(50000);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>((i * 7919) % v.size()) * 0.5;
  std::vector<double> qs;
  for (int i = 0; i < 400; ++i) qs.push_back(i * 0.25);
  const Stats s = describe(v, qs);
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(s.percentiles.size(), qs.size());
  for (std::size_t i = 0; i < qs.size(); ++i)
    EXPECT_EQ(s.percentiles[i].second, percentile_sorted(sorted, qs[i])) << qs[i];
}

TEST(Describe, MeanAndStdAreNumpysBitForBit) {
  // numpy sums pairwise within blocks of 8,192 values, not one by one. Reference: numpy 1.24.2,
  // float(np.mean(v)).hex() and float(np.std(v)).hex() of the same Python list (x ← x·a + c mod
  // 2^64 from 12345, u = (x >> 11)·2^-53, v = u³·1000). A running sum gives another mean at
  // 1,000 and 20,000 values, and pairwise summation without the blocks another at 20,000.
  struct Case {
    std::size_t n;
    double mean;
    double std;
  };
  for (const Case c : {Case{7, 0x1.1f098d70c255fp+8, 0x1.12ff0eafb6221p+8},
                       Case{100, 0x1.0c00318401c29p+8, 0x1.2adad78dcaddcp+8},
                       Case{1000, 0x1.07bcbf63e6419p+8, 0x1.2912039f5c5acp+8},
                       Case{20000, 0x1.f87d6f58f3f78p+7, 0x1.1c839eb6c7495p+8}}) {
    std::uint64_t x = 12345;
    std::vector<double> v(c.n);
    for (auto& e : v) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const double u = static_cast<double>(x >> 11) * 0x1p-53;
      e = u * u * u * 1000.0;
    }
    const Stats s = describe(v, {});
    EXPECT_EQ(s.mean, c.mean) << c.n;
    EXPECT_EQ(s.stddev, c.std) << c.n;
  }
}

TEST(Describe, InPlaceWithTheSumsOfTheOriginalOrderEqualsDescribe) {
  // describe_in_place reads the sums taken before the values were reordered (the order
  // numpy sums in), and selects the percentiles from the values in any order.
  std::uint64_t x = 777;
  const std::vector<double> qs{50, 90, 99, 99.9};
  for (const std::size_t n : {1u, 9u, 20000u}) {
    std::vector<double> v(n);
    for (auto& e : v) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const double u = static_cast<double>(x >> 11) * 0x1p-53;
      e = u * u * u * 1000.0;
    }
    const Stats expected = describe(v, qs);
    const SampleSums sums = sample_sums(v);
    std::reverse(v.begin(), v.end());
    std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 3), v.end());
    EXPECT_TRUE(describe_in_place(v, sums, qs) == expected) << n;
    EXPECT_EQ(v.size(), n);
  }
  std::vector<double> none;
  EXPECT_TRUE(describe_in_place(none, sample_sums(none), qs) == describe({}, qs));
}

TEST(Describe, WeightedFromPiecesOrFromOneListEqualsDescribe) {
  // describe_weighted sums the sample in numpy's blocks of 8,192: from pieces (gathered into
  // blocks) or from one list (summed where it lies), the result is describe's, bit for bit.
  std::uint64_t x = 4242;
  const std::vector<double> qs{50, 90, 99};
  for (const std::size_t n : {1u, 9u, 20000u, 24576u}) {
    std::vector<double> v(n);
    for (auto& e : v) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      e = static_cast<double>((x >> 40) % 5000) / 7.0;  // repeats, as a window's gaps do
    }
    std::map<double, std::size_t> counts;
    for (const double e : v) ++counts[e];
    const std::vector<std::pair<double, std::size_t>> distinct(counts.begin(), counts.end());
    const Stats expected = describe(v, qs);
    EXPECT_TRUE(describe_weighted(v, distinct, qs) == expected) << n;
    // Pieces of 8,192 + 100 + 8,092 + 8,192 + the rest: some fill a block exactly, some cross
    // a block's end.
    const auto pieces = [&](const auto& emit) {
      std::size_t at = 0;
      for (const std::size_t len : {8192u, 100u, 8092u, 8192u}) {
        const std::size_t take = std::min(len, n - at);
        emit(v.data() + at, take);
        at += take;
      }
      emit(v.data() + at, n - at);
    };
    EXPECT_TRUE(describe_weighted(pieces, distinct, qs) == expected) << n;
  }
}

TEST(Describe, EmptyIsUndefinedNotZero) {
  // A metric with no samples is undefined (n/a, JSON null), never 0.
  const Stats s = describe({}, {50, 99});
  EXPECT_EQ(s.count, 0u);
  EXPECT_TRUE(std::isnan(s.mean));
  EXPECT_TRUE(std::isnan(s.median));
  EXPECT_TRUE(std::isnan(s.stddev));
  EXPECT_TRUE(std::isnan(s.min));
  EXPECT_TRUE(std::isnan(s.max));
  ASSERT_EQ(s.percentiles.size(), 2u);
  EXPECT_EQ(s.percentiles[1].first, 99.0);
  EXPECT_TRUE(std::isnan(s.percentiles[1].second));
}

TEST(Describe, ExtraPercentilesDependOnTheCountAndChangeNothingElse) {
  // The extra percentiles (asked per sample size, as the p99 intervals' ranks are) are selected
  // in the same pass: each equals the full sort's, and the reported statistics are those of a
  // describe without them.
  std::uint64_t x = 424242;
  const auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  const std::vector<double> qs{50, 90, 99};
  std::size_t asked_for = 0;
  const ExtraPercentiles extra = [&](std::size_t n) {
    asked_for = n;
    return std::vector<double>{99, 100.0 * static_cast<double>(n - 2) / static_cast<double>(n - 1),
                               12.5};
  };
  for (const std::size_t n : {3u, 10u, 1000u, 200001u}) {
    std::vector<double> v(n);
    for (auto& e : v) e = static_cast<double>(next() % 5000) * 0.001;
    const Stats with = describe(v, qs, extra);
    EXPECT_EQ(asked_for, n);
    Stats without = describe(v, qs);
    EXPECT_TRUE(without.extra_percentiles.empty());
    EXPECT_FALSE(with == without);
    without.extra_percentiles = with.extra_percentiles;
    EXPECT_TRUE(with == without) << n;
    std::sort(v.begin(), v.end());
    const std::vector<double> asked = extra(n);
    ASSERT_EQ(with.extra_percentiles.size(), asked.size());
    for (std::size_t i = 0; i < asked.size(); ++i) {
      EXPECT_EQ(with.extra_percentiles[i].first, asked[i]);
      EXPECT_EQ(with.extra_percentiles[i].second, percentile_sorted(v, asked[i])) << n;
    }
  }
  asked_for = 0;
  EXPECT_TRUE(describe({}, qs, extra).extra_percentiles.empty());  // nothing asked of no sample
  EXPECT_EQ(asked_for, 0u);
}

TEST(StatsEquality, NanEqualsNanAndEveryFieldCounts) {
  EXPECT_TRUE(describe({}, {50}) == describe({}, {50}));
  EXPECT_FALSE(describe({}, {50}) == describe({}, {90}));
  const Stats a = describe({1, 2, 3}, {50});
  Stats b = a;
  EXPECT_TRUE(a == b);
  b.stddev = 0.5;
  EXPECT_FALSE(a == b);
  b = a;
  b.percentiles[0].second = 2.5;
  EXPECT_FALSE(a == b);
}

}  // namespace
}  // namespace llmbench::metrics
