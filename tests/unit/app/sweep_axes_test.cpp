#include "llmbench/app/sweep_axes.hpp"

#include "llmbench/core/error.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace llmbench::app {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> texts(const SweepAxis& axis) {
  std::vector<std::string> out;
  for (const auto& v : axis.values) out.push_back(v.text);
  return out;
}

/// The error of parsing `text` (its message and offset); fails the test when it parses.
Error error_of(const std::string& text) {
  try {
    (void)parse_sweep_axis(text);
  } catch (const Exception& e) {
    return e.error();
  }
  ADD_FAILURE() << "'" << text << "' parsed";
  return Error{};
}

TEST(SweepAxes, ListsAndRanges) {
  EXPECT_THAT(texts(parse_sweep_axis("max-concurrency=1,2,4,8")), ElementsAre("1", "2", "4", "8"));
  EXPECT_THAT(texts(parse_sweep_axis("max-concurrency=1:256:x2")),
              ElementsAre("1", "2", "4", "8", "16", "32", "64", "128", "256"));
  EXPECT_THAT(texts(parse_sweep_axis("max-concurrency=1:10:+3")), ElementsAre("1", "4", "7", "10"));
  // A range stops at the last value not above HI; items mix.
  EXPECT_THAT(texts(parse_sweep_axis("max-concurrency=3:20:x2,64")),
              ElementsAre("3", "6", "12", "64"));
  // Real steps are printed short: 0.1 + 2 x 0.1 is "0.3".
  EXPECT_THAT(texts(parse_sweep_axis("request-rate=0.1:0.5:+0.1")),
              ElementsAre("0.1", "0.2", "0.3", "0.4", "0.5"));
  const auto rate = parse_sweep_axis("request-rate=2.5,inf");
  EXPECT_EQ(rate.axis, Axis::RequestRate);
  EXPECT_DOUBLE_EQ(rate.values[0].number, 2.5);
  EXPECT_TRUE(std::isinf(rate.values[1].number));
  EXPECT_THAT(texts(parse_sweep_axis("scheduler=vllm-v1,dynamic")),
              ElementsAre("vllm-v1", "dynamic"));
  EXPECT_THAT(texts(parse_sweep_axis("gpu-memory-utilization=0.5:0.9:+0.2")),
              ElementsAre("0.5", "0.7", "0.9"));
}

TEST(SweepAxes, SearchRangeStandsAlone) {
  const auto axis = parse_sweep_axis("request-rate=1:64");
  EXPECT_TRUE(axis.values.empty());
  ASSERT_TRUE(axis.search_range);
  EXPECT_DOUBLE_EQ(axis.search_range->first, 1);
  EXPECT_DOUBLE_EQ(axis.search_range->second, 64);
  EXPECT_THAT(error_of("request-rate=1:64,80").message, HasSubstr("must stand alone"));
}

TEST(SweepAxes, ErrorsNameTheFlagTheTextAndThePosition) {
  const Error unknown = error_of("max-concurency=1,2");
  EXPECT_EQ(unknown.source, "--sweep");
  EXPECT_EQ(unknown.offset, 0);
  EXPECT_THAT(unknown.message, HasSubstr("unknown axis 'max-concurency'"));
  EXPECT_THAT(unknown.message, HasSubstr("valid: max-concurrency, request-rate, max-num-seqs"));
  EXPECT_THAT(unknown.message, HasSubstr("'max-concurency=1,2'"));

  const Error bad_item = error_of("max-concurrency=1,2,x,8");
  EXPECT_EQ(bad_item.offset, 20);  // the 'x'
  EXPECT_THAT(bad_item.message, HasSubstr("'x' is not a whole number >= 1"));

  EXPECT_EQ(error_of("max-concurrency=1,,4").offset, 18);
  EXPECT_EQ(error_of("max-concurrency=2.5").offset, 16);
  EXPECT_THAT(error_of("max-concurrency=8:1:x2").message, HasSubstr("runs downwards"));
  const Error step = error_of("max-concurrency=1:8:x1");
  EXPECT_EQ(step.offset, 20);
  EXPECT_THAT(step.message, HasSubstr("multiply by more than 1"));
  EXPECT_THAT(error_of("max-concurrency=1:8:/2").message, HasSubstr("neither xF"));
  EXPECT_THAT(error_of("max-concurrency=1:8:+0.5").message, HasSubstr("must be whole"));
  EXPECT_THAT(error_of("gpu-memory-utilization=0.5,1.5").message, HasSubstr("(0, 1]"));
  EXPECT_THAT(error_of("request-rate=0").message, HasSubstr("> 0 or inf"));
  EXPECT_THAT(error_of("max-concurrency").message, HasSubstr("expected AXIS=VALUES"));
  EXPECT_THAT(error_of("max-concurrency=1:1000000:+1").message, HasSubstr("more than 10000"));
  EXPECT_THAT(error_of("max-concurrency=1:2:3:4").message, HasSubstr("too many ':'"));
}

TEST(SweepAxes, FreeAxesOnlyWithAServerCommand) {
  // Without --serve-cmd an unknown name is an error that says what would make it an axis.
  EXPECT_THAT(error_of("kv_dtype=f16,q8_0").message,
              HasSubstr("with --serve-cmd, any other name is a free axis"));
  const auto axes = parse_sweep_axes({"kv_dtype=f16,q8_0", "max-num-seqs=1,2"}, true);
  ASSERT_EQ(axes.size(), 2U);
  EXPECT_EQ(axes[0].axis, Axis::Free);
  EXPECT_EQ(axis_name(axes[0]), "kv_dtype");
  EXPECT_EQ(placeholder_of(axes[0]), "kv_dtype");
  EXPECT_EQ(texts(axes[0]), (std::vector<std::string>{"f16", "q8_0"}));
  EXPECT_FALSE(axis_info(axes[0].axis).load);
  EXPECT_EQ(axis_name(axes[1]), "max-num-seqs");
  EXPECT_EQ(placeholder_of(axes[1]), "max_num_seqs");
  // A free name is a placeholder name; the free axis has no name of its own to type.
  EXPECT_THROW(parse_sweep_axis("kv dtype=f16", true), Exception);
  EXPECT_THROW(parse_sweep_axis("=f16", true), Exception);
  EXPECT_THROW(parse_sweep_axes({"kv_dtype=f16", "kv_dtype=q8_0"}, true), Exception);
  EXPECT_EQ(axis_names().find(", ,"), std::string::npos);
  EXPECT_NE(axis_names().back(), ' ');
}

TEST(SweepAxes, ProductOrderLastAxisFastest) {
  const auto axes = parse_sweep_axes({"max-num-seqs=64,128", "max-concurrency=1,2,4"});
  const auto points = sweep_points(axes);
  ASSERT_EQ(points.size(), 6U);
  EXPECT_EQ(points[0][0].text, "64");
  EXPECT_EQ(points[0][1].text, "1");
  EXPECT_EQ(points[2][1].text, "4");
  EXPECT_EQ(points[3][0].text, "128");
  EXPECT_EQ(points[3][1].text, "1");
  EXPECT_THROW((void)parse_sweep_axes({"max-concurrency=1", "max-concurrency=2"}), Exception);
}

TEST(SweepAxes, GridSplitsKnobSettingsFromLoadPoints) {
  const auto axes = parse_sweep_axes({"max-concurrency=1,2", "max-num-seqs=64,128"});
  const SweepGrid grid = sweep_grid(axes);
  EXPECT_THAT(grid.load_axes, ElementsAre(0U));
  EXPECT_THAT(grid.knob_axes, ElementsAre(1U));
  ASSERT_EQ(grid.settings.size(), 2U);
  ASSERT_EQ(grid.loads.size(), 2U);
  EXPECT_THAT(grid.labels, ElementsAre("max-num-seqs=64", "max-num-seqs=128"));
  EXPECT_EQ(grid.knobs[1].dump(), R"({"max-num-seqs":"128"})");
  // A point puts each value back at its axis's place in the sweep's order.
  const auto point = grid.point(1, grid.loads[1]);
  ASSERT_EQ(point.size(), 2U);
  EXPECT_EQ(point[0].text, "2");
  EXPECT_EQ(point[1].text, "128");
  EXPECT_EQ(grid.load_label(axes, grid.loads[1]), "max-concurrency=2");
  // A search range adds no load points: one empty load per setting.
  const SweepGrid search = sweep_grid(parse_sweep_axes({"max-concurrency=1:64"}));
  ASSERT_EQ(search.loads.size(), 1U);
  EXPECT_TRUE(search.loads[0].empty());
  EXPECT_EQ(search.knobs[0], nullptr);
}

}  // namespace
}  // namespace llmbench::app
