#include "llmbench/analysis/slo_search.hpp"

#include "llmbench/core/error.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

namespace llmbench::analysis {
namespace {

using ::testing::HasSubstr;

/// A server whose p99 TTFT is 100 + 50·load² ms and p99 TPOT 10 + 5·load ms; `calls` counts the
/// points measured.
SloMeasure synthetic(int& calls) {
  return [&calls](double load) -> std::optional<SloMeasurement> {
    ++calls;
    return SloMeasurement{
        .metrics = {{"p99_ttft_ms", 100 + 50 * load * load}, {"p99_tpot_ms", 10 + 5 * load}},
        .samples = 200};
  };
}

TEST(SloSearch, FindsTheHighestRateWithinTheResolution) {
  int calls = 0;
  const auto r = slo_search(parse_slo_constraints("p99_ttft_ms<=2000"),
                            SloSearchOptions{.lo = 1, .hi = 64}, synthetic(calls));
  const double truth = std::sqrt(1900.0 / 50.0);  // 6.164
  ASSERT_TRUE(r.best);
  ASSERT_TRUE(r.first_failing);
  EXPECT_TRUE(r.converged) << r.reason;
  EXPECT_LE(*r.best, truth);
  EXPECT_GT(*r.first_failing, truth);
  EXPECT_LE(*r.first_failing - *r.best, 0.05 * *r.best);
  EXPECT_GE(*r.best, 0.95 * truth);
  EXPECT_LE(r.points.size(), 10U);
  EXPECT_EQ(static_cast<std::size_t>(calls), r.points.size());
  EXPECT_EQ(r.points[0].load, 1);  // the bracket first
  EXPECT_EQ(r.points[1].load, 64);
  EXPECT_EQ(r.points[1].measurement.samples, 200U);
  EXPECT_THAT(r.reason, HasSubstr("within the resolution"));
}

TEST(SloSearch, EveryConstraintMustHold) {
  int calls = 0;
  // TTFT alone allows 6.16, TPOT <= 40 allows 6: the answer is within 5% below 6.
  const auto r = slo_search(parse_slo_constraints("p99_ttft_ms<=2000, p99_tpot_ms<=40"),
                            SloSearchOptions{.lo = 0.5, .hi = 32}, synthetic(calls));
  ASSERT_TRUE(r.best);
  EXPECT_LE(*r.best, 6.0);
  EXPECT_GE(*r.best, 6.0 * 0.95);
  EXPECT_TRUE(r.converged) << r.reason;
  EXPECT_LE(r.points.size(), 10U);
}

TEST(SloSearch, WholeNumberLoadsStopAtAWidthOfOne) {
  const SloMeasure linear = [](double c) -> std::optional<SloMeasurement> {
    return SloMeasurement{.metrics = {{"p99_ttft_ms", 20 * c}}, .samples = 50};
  };
  const auto r = slo_search(
      parse_slo_constraints("p99_ttft_ms<=1000"),
      SloSearchOptions{.lo = 1, .hi = 256, .resolution = 0.001, .integer = true}, linear);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(*r.best, 50);
  EXPECT_EQ(*r.first_failing, 51);
  EXPECT_TRUE(r.converged);
  for (const auto& p : r.points) EXPECT_EQ(p.load, std::round(p.load));
}

TEST(SloSearch, BudgetEndsASlowSearch) {
  int calls = 0;
  const auto r = slo_search(
      parse_slo_constraints("p99_ttft_ms<=2000"),
      SloSearchOptions{.lo = 1, .hi = 1000, .resolution = 1e-6, .max_points = 4}, synthetic(calls));
  EXPECT_EQ(calls, 4);
  EXPECT_FALSE(r.converged);
  EXPECT_THAT(r.reason, HasSubstr("budget (4) spent"));
  ASSERT_TRUE(r.best);
  EXPECT_LE(*r.best, std::sqrt(38.0));
}

TEST(SloSearch, RangeEndsDecideEarly) {
  int calls = 0;
  const auto low = slo_search(parse_slo_constraints("p99_ttft_ms<=100"),
                              SloSearchOptions{.lo = 1, .hi = 8}, synthetic(calls));
  EXPECT_FALSE(low.best);
  EXPECT_THAT(low.reason, HasSubstr("LO = 1 already misses"));
  EXPECT_EQ(low.points.size(), 1U);
  const auto high = slo_search(parse_slo_constraints("p99_ttft_ms<1e9"),
                               SloSearchOptions{.lo = 1, .hi = 8}, synthetic(calls));
  EXPECT_EQ(high.best, 8);
  EXPECT_THAT(high.reason, HasSubstr("at least HI"));
  // An undefined metric (no sample) never meets; a failed point neither.
  const SloMeasure undefined = [](double) -> std::optional<SloMeasurement> {
    return SloMeasurement{.metrics = {{"p99_ttft_ms", std::nan("")}}};
  };
  EXPECT_FALSE(
      slo_search(parse_slo_constraints("p99_ttft_ms<=1"), SloSearchOptions{}, undefined).best);
  // A stop request ends it with what was measured.
  const SloMeasure stop = [](double) -> std::optional<SloMeasurement> { return std::nullopt; };
  const auto stopped =
      slo_search(parse_slo_constraints("p99_ttft_ms<=1"), SloSearchOptions{}, stop);
  EXPECT_TRUE(stopped.stopped);
  EXPECT_TRUE(stopped.points.empty());
}

TEST(SloConstraints, ParseAndMargins) {
  const auto c = parse_slo_constraints("p99_ttft_ms<=2000,output_throughput>=100,p99_tpot_ms<80");
  ASSERT_EQ(c.size(), 3U);
  EXPECT_EQ(c[0].metric, "p99_ttft_ms");
  EXPECT_EQ(c[0].op, SloOp::Le);
  EXPECT_EQ(c[1].op, SloOp::Ge);
  EXPECT_EQ(c[2].op, SloOp::Lt);
  EXPECT_EQ(to_string(c[2]), "p99_tpot_ms<80");
  EXPECT_DOUBLE_EQ(slo_margin(c[0], 1500), 0.25);
  EXPECT_DOUBLE_EQ(slo_margin(c[1], 50), -0.5);
  EXPECT_TRUE(std::isinf(slo_margin(c[0], std::nan(""))));
}

TEST(SloConstraints, ErrorsNameTheFlagAndThePosition) {
  try {
    (void)parse_slo_constraints("p99_ttft_ms<=2000,p99_tpot_ms=80");
    FAIL() << "parsed";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--slo");
    EXPECT_EQ(e.error().offset, 18);
    EXPECT_THAT(e.error().message, HasSubstr("no comparison (valid: <=, >=, <, >"));
  }
  EXPECT_THROW((void)parse_slo_constraints("<=5"), Exception);
  EXPECT_THROW((void)parse_slo_constraints("p99_ttft_ms<=fast"), Exception);
  EXPECT_THROW((void)parse_slo_constraints("p99_ttft_ms<=1,"), Exception);
  EXPECT_THROW((void)slo_search(parse_slo_constraints("a<=1"), SloSearchOptions{.lo = 2, .hi = 1},
                                [](double) { return std::optional<SloMeasurement>{}; }),
               Exception);
}

TEST(SloAnswer, RoundedToTheResolutionWithItsBindingConstraint) {
  EXPECT_DOUBLE_EQ(round_to_resolution(21.3572, 0.05, false), 21);
  EXPECT_DOUBLE_EQ(round_to_resolution(2.13572, 0.05, false), 2.1);
  EXPECT_DOUBLE_EQ(round_to_resolution(213.572, 0.01, false), 213);
  EXPECT_DOUBLE_EQ(round_to_resolution(37, 0.05, true), 37);
  EXPECT_DOUBLE_EQ(round_to_resolution(370, 0.05, true), 370);
  int calls = 0;
  const SloMeasure measure = [&calls](double load) -> std::optional<SloMeasurement> {
    ++calls;
    return SloMeasurement{.metrics = {{"p99_ttft_ms", 100 + 50 * load * load},
                                      {"p99_tpot_ms", 10 + 5 * load},
                                      {"output_throughput", 100 * load},
                                      {"request_goodput", load}},
                          .samples = 400};
  };
  const auto constraints = parse_slo_constraints("p99_ttft_ms<=2000,p99_tpot_ms<=80");
  const auto r = slo_search(constraints, {.lo = 1, .hi = 10, .resolution = 0.05}, measure);
  ASSERT_TRUE(r.best);
  ASSERT_TRUE(r.answer_rounded);
  EXPECT_LE(*r.answer_rounded, *r.best);
  // 6.108 at 5%: 5% of it is 0.31, so tenths are the last digit the search vouches for.
  EXPECT_DOUBLE_EQ(*r.answer_rounded, std::floor(*r.best * 10) / 10);
  EXPECT_THAT(r.binding, ::testing::StartsWith("p99_ttft_ms<=2000 ("));  // TTFT binds, not TPOT
  EXPECT_FALSE(r.provisional);
  EXPECT_TRUE(r.non_monotonic.empty());
  const auto lines = slo_answer_lines(r, constraints, "request-rate");
  ASSERT_GE(lines.size(), 3U);
  EXPECT_THAT(lines[0], HasSubstr("highest request-rate meeting it: 6.1 (measured 6.1"));
  EXPECT_THAT(lines[1], HasSubstr("binding constraint: p99_ttft_ms<=2000"));
  EXPECT_THAT(lines[2], HasSubstr("at the answer: output tok/s "));
  EXPECT_THAT(lines[2], HasSubstr("goodput req/s "));
}

TEST(SloAnswer, InvalidPointsMakeItProvisionalAndDisorderIsReported) {
  // Points shorter than the validity rule, and a noisy server: 21.99 misses, 27.7 meets.
  const SloMeasure measure = [](double load) -> std::optional<SloMeasurement> {
    const bool meets = load < 21.9 || load > 27;
    return SloMeasurement{.metrics = {{"p99_ttft_ms", meets ? 1000.0 : 3000.0}},
                          .samples = 50,
                          .valid = false,
                          .invalid_reasons = {"measured for 5.00 s, under the minimum 10 s"}};
  };
  SloSearchResult r;
  r.points = {
      SloPoint{.load = 21.36, .measurement = *measure(21.36), .margin = 0.5, .meets = true},
      SloPoint{.load = 21.99, .measurement = *measure(21.99), .margin = -0.5, .meets = false},
      SloPoint{.load = 27.7, .measurement = *measure(27.7), .margin = 0.5, .meets = true}};
  r.best = 21.36;
  r.first_failing = 21.99;
  explain_slo_answer(r, parse_slo_constraints("p99_ttft_ms<=2000"),
                     {.lo = 1, .hi = 30, .resolution = 0.05});
  EXPECT_DOUBLE_EQ(*r.answer_rounded, 21);
  ASSERT_EQ(r.non_monotonic.size(), 1U);
  EXPECT_EQ(r.non_monotonic[0], "27.7 meets every constraint but the lower load 21.99 misses one");
  EXPECT_TRUE(r.provisional);
  ASSERT_EQ(r.provisional_reasons.size(), 2U);
  EXPECT_THAT(r.provisional_reasons[0], HasSubstr("the answer (21.36) is invalid: measured for"));
  EXPECT_EQ(r.binding, "p99_ttft_ms<=2000 (1000 at the answer, 3000 at 21.99)");
}

}  // namespace
}  // namespace llmbench::analysis
