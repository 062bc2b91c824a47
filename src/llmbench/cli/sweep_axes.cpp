#include "llmbench/cli/sweep_axes.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>

namespace llmbench::cli {

using app::Axis;

void apply_axis(Axis axis, const app::AxisValue& value, WorkloadFlags& load, EngineFlags* engine) {
  const app::AxisInfo& info = app::axis_info(axis);
  if (info.simulate_only && engine == nullptr) {
    throw Exception(Error{
        fmt::format("axis {} is an engine knob: it needs --simulate, or --serve-cmd with "
                    "{{{}}} in the server's command line (a real server's engine is set where it "
                    "starts)",
                    info.name,
                    app::placeholder_of(app::SweepAxis{
                        .axis = axis, .values = {}, .search_range = {}, .free_name = {}})),
        "--sweep", -1});
  }
  // A text-only value (a GPU name) has no number: NaN, which no integer holds.
  const auto count = std::isfinite(value.number) ? static_cast<std::int64_t>(value.number) : 0;
  switch (axis) {
    case Axis::MaxConcurrency:
      load.max_concurrency = count;
      break;
    case Axis::RequestRate:
      load.request_rate = value.text;
      break;
    case Axis::MaxNumSeqs:
      engine->max_num_seqs = count;
      break;
    case Axis::MaxNumBatchedTokens:
      engine->max_num_batched_tokens = count;
      break;
    case Axis::BlockSize:
      engine->block_size = count;
      break;
    case Axis::GpuMemoryUtilization:
      engine->gpu_memory_utilization = value.number;
      break;
    case Axis::Tp:
      engine->tp = static_cast<int>(count);
      break;
    case Axis::Scheduler:
      engine->scheduler = value.text;
      break;
    case Axis::ModelProfile:
      engine->model_profile = value.text;
      break;
    case Axis::Gpu:
      engine->gpu = value.text;
      break;
    case Axis::Free:
      throw Exception(Error{"a free axis only fills a --serve-cmd template", "--sweep", -1});
  }
}

}  // namespace llmbench::cli
