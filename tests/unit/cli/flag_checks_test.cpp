// Bad input gets a clear error naming the flag: the checks of flag_checks.hpp
// and flag_parsing.hpp, the unsigned-flag check at parse time, and the exit-code mapping.

#include "llmbench/cli/flag_checks.hpp"

#include "llmbench/app/resources.hpp"
#include "llmbench/cli/cli.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"
#include "llmbench/core/error.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmbench::cli {
namespace {

template <typename Fn>
std::string error_source(Fn&& fn) {
  try {
    fn();
  } catch (const Exception& e) {
    return e.error().source;
  }
  return "";
}

TEST(FlagChecks, EngineFlags) {
  EngineFlags f;
  EXPECT_EQ(error_source([&] { check_engine_flags(f, ""); }), "");
  f.block_size = -16;
  EXPECT_EQ(error_source([&] { check_engine_flags(f, ""); }), "--block-size");
  EXPECT_EQ(error_source([&] { check_engine_flags(f, "server-"); }), "--server-block-size");
  f.block_size = 0;  // the attention kind's default
  f.step_overhead_us = -1;
  EXPECT_EQ(error_source([&] { check_engine_flags(f, ""); }), "--step-overhead-us");
  f.step_overhead_us = INFINITY;
  EXPECT_EQ(error_source([&] { check_engine_flags(f, ""); }), "--step-overhead-us");
  f.step_overhead_us = 0;
  EXPECT_EQ(error_source([&] { check_engine_flags(f, ""); }), "");
  f.compute_efficiency = NAN;
  EXPECT_EQ(error_source([&] { check_engine_flags(f, ""); }), "--compute-efficiency");
}

TEST(FlagChecks, MaxModelLenZeroIsAnErrorOnlyWhenGiven) {
  ServeFlags f;
  EXPECT_EQ(error_source([&] { check_serve_flags(f, ""); }), "");  // unset = profile's default
  f.max_model_len = 0;
  EXPECT_EQ(error_source([&] { check_serve_flags(f, ""); }), "--max-model-len");
  f.max_model_len = -3;
  EXPECT_EQ(error_source([&] { check_serve_flags(f, "server-"); }), "--server-max-model-len");
  f.max_model_len = 1;
  EXPECT_EQ(error_source([&] { check_serve_flags(f, ""); }), "");
}

TEST(FlagChecks, PlanSizes) {
  EXPECT_EQ(error_source([] { check_plan_flags(0, std::nullopt, std::nullopt); }), "");
  EXPECT_EQ(error_source([] { check_plan_flags(-1, std::nullopt, std::nullopt); }), "--block-size");
  EXPECT_EQ(error_source([] { check_plan_flags(0, -1.0, std::nullopt); }), "--activation-peak-gib");
  EXPECT_EQ(error_source([] { check_plan_flags(0, 2.0, -0.5); }), "--non-torch-gib");
  EXPECT_EQ(error_source([] { check_plan_flags(0, 0.0, 0.0); }), "");
}

TEST(FlagChecks, MemoryBudget) {
  workload::DatasetOptions d;
  d.kind = workload::DatasetKind::Random;
  d.random_input_len = 1024;
  d.random_output_len = 128;
  // 8 B per prompt token, 48 per output token, 2 KiB per request.
  EXPECT_EQ(app::bytes_per_request_estimate(d), 8 * 1024 + 48 * 128 + 2048);
  const std::int64_t gib16 = std::int64_t{16} << 30;
  EXPECT_EQ(error_source([&] { app::check_memory_budget(100'000'000, d, gib16); }),
            "--num-prompts");
  EXPECT_EQ(error_source([&] { app::check_memory_budget(100'000, d, gib16); }), "");
  EXPECT_EQ(error_source([&] { app::check_memory_budget(100'000'000, d, 0); }), "");  // unknown
  EXPECT_GT(app::physical_memory_bytes(), 0);
}

TEST(FlagParsing, RateOverflowIsNotInfinity) {
  EXPECT_TRUE(std::isinf(parse_positive_or_inf("inf", "--request-rate")));
  EXPECT_DOUBLE_EQ(parse_positive_or_inf("1e300", "--request-rate"), 1e300);
  try {
    (void)parse_positive_or_inf("1e400", "--request-rate");
    FAIL() << "1e400 accepted";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--request-rate");
    EXPECT_NE(e.error().message.find("too large"), std::string::npos);
  }
}

TEST(FlagParsing, RangeCheckRejectsNan) {
  EXPECT_EQ(error_source([] { require_in_range(NAN, 0, 1, "--x", "in [0, 1]"); }), "--x");
  EXPECT_EQ(error_source([] { require_in_range(1, 0, 1, "--x", "in [0, 1]"); }), "");
}

/// Parses `args` as `run`'s flags; returns the CLI11 error text ("" when accepted).
std::string parse_run(const std::vector<std::string>& args, RunFlags& f) {
  CLI::App app;
  add_run_flags(app, f);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  f.given = given_flags(app);
  return "";
}

TEST(FlagParsing, NegativeSeedDoesNotWrap) {
  RunFlags f;
  const std::string err = parse_run({"--seed", "-1"}, f);
  EXPECT_NE(err.find("--seed"), std::string::npos) << err;
  EXPECT_NE(err.find("non-negative integer"), std::string::npos) << err;
  RunFlags g;
  EXPECT_EQ(parse_run({"--seed", "18446744073709551615"}, g), "");
  EXPECT_EQ(g.seed, std::numeric_limits<std::uint64_t>::max());
  RunFlags h;
  EXPECT_NE(parse_run({"--seed", "18446744073709551616"}, h), "");
}

TEST(FlagParsing, GivenFlagsAreTheOnesOnTheCommandLine) {
  RunFlags f;
  ASSERT_EQ(parse_run({"--num-prompts", "5", "--server-tp", "2", "--quiet"}, f), "");
  EXPECT_EQ(f.given, (std::vector<std::string>{"--num-prompts", "--quiet", "--server-tp"}));
  EXPECT_TRUE(was_given(f, "--server-tp"));
  EXPECT_FALSE(was_given(f, "--seed"));
}

TEST(ExitCodes, ErrorsMapToTheirCode) {
  EXPECT_EQ(run_guarded([] { return 0; }), 0);
  EXPECT_EQ(run_guarded([] { return 1; }), 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_guarded([]() -> int { throw Exception(Error{"bad", "--flag", -1}); }), 2);
  EXPECT_EQ(run_guarded([]() -> int { throw std::bad_alloc(); }), 3);
  EXPECT_EQ(run_guarded([]() -> int { throw std::logic_error("bug"); }), 3);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("llmbench: error: --flag: bad\n"), std::string::npos) << err;
  EXPECT_NE(err.find("llmbench: internal error: out of memory"), std::string::npos) << err;
  EXPECT_NE(err.find("llmbench: internal error: bug\n"), std::string::npos) << err;
}

}  // namespace
}  // namespace llmbench::cli
