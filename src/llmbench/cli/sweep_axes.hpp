#pragma once
/// @file
/// What one `llmbench sweep` axis value sets in the flags of a point; the axes themselves and
/// their grammar are app/sweep_axes.hpp.

#include "llmbench/app/sweep_axes.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"

namespace llmbench::cli {

/// Sets `axis` to `value` in the flags of one point: the load axes in `load`, the engine knobs
/// in `engine` (null when the sweep is not `--simulate`: an engine axis then throws `Exception`
/// naming `--sweep`).
void apply_axis(app::Axis axis, const app::AxisValue& value, WorkloadFlags& load,
                EngineFlags* engine);

}  // namespace llmbench::cli
