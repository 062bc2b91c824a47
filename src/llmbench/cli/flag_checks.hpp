#pragma once
/// @file
/// Checks of engine, server and `plan` flags that parsing alone does not catch (every
/// bad value gets a clear error naming the flag instead of being replaced by a
/// default, wrapped or accepted). Each throws `Exception` with the flag as typed (with `prefix`,
/// e.g. "--server-block-size" for `run`).

#include "llmbench/cli/server_flags.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace llmbench::cli {

/// `--<prefix>block-size` must not be negative (0 = the attention kind's default) and
/// `--<prefix>step-overhead-us` must be a finite number ≥ 0, as must the efficiencies be finite.
void check_engine_flags(const EngineFlags& flags, const std::string& prefix);

/// The engine flags (`check_engine_flags`) and `--<prefix>max-model-len`, which must be ≥ 1 when
/// given; a length of 0 would start a server that rejects every request.
void check_serve_flags(const ServeFlags& flags, const std::string& prefix);

/// `plan`'s sizes: `--block-size` ≥ 0 (0 = default), `--activation-peak-gib` and
/// `--non-torch-gib` finite and ≥ 0 when given.
void check_plan_flags(std::int64_t block_size, std::optional<double> activation_peak_gib,
                      std::optional<double> non_torch_gib);

}  // namespace llmbench::cli
