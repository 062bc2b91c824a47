#include "llmbench/cli/sweep_axes.hpp"
#include "llmbench/core/error.hpp"

#include <gtest/gtest.h>

namespace llmbench::cli {
namespace {

using app::Axis;
using app::AxisValue;

TEST(SweepAxes, EngineAxesNeedSimulate) {
  WorkloadFlags load;
  EngineFlags engine;
  apply_axis(Axis::MaxConcurrency, AxisValue{.number = 8, .text = "8"}, load, nullptr);
  EXPECT_EQ(load.max_concurrency, 8);
  apply_axis(Axis::RequestRate, AxisValue{.number = 2.5, .text = "2.5"}, load, nullptr);
  EXPECT_EQ(load.request_rate, "2.5");
  apply_axis(Axis::MaxNumSeqs, AxisValue{.number = 64, .text = "64"}, load, &engine);
  EXPECT_EQ(engine.max_num_seqs, 64);
  apply_axis(Axis::Gpu, AxisValue{.text = "h20"}, load, &engine);
  EXPECT_EQ(engine.gpu, "h20");
  EXPECT_THROW(apply_axis(Axis::Tp, AxisValue{.number = 2, .text = "2"}, load, nullptr), Exception);
}

}  // namespace
}  // namespace llmbench::cli
