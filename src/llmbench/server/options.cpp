#include "llmbench/server/options.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

namespace llmbench::server {
namespace {

[[noreturn]] void fail(const char* flag, const std::string& message) {
  throw Exception(Error{message, flag, -1});
}

constexpr double kHourMs = 3.6e6;
constexpr double kDayS = 86400;

/// `value` must be finite and in [0, max].
void check_range(const char* flag, double value, double max) {
  if (!std::isfinite(value) || value < 0 || value > max)
    fail(flag, fmt::format("must be in [0, {}], got {}", max, value));
}

}  // namespace

Timing parse_timing(std::string_view text, const std::string& flag) {
  if (text == "fixed")
    return Timing::Fixed;
  if (text == "engine")
    return Timing::Engine;
  throw Exception(Error{"must be 'engine' or 'fixed', got '" + std::string(text) + "'", flag, -1});
}

void validate(const ServerOptions& options) {
  if (options.timing == Timing::Engine) {
    if (!options.engine)
      fail("--timing", "engine timing needs engine settings (model profile, GPU, blocks)");
    if (options.engine->spec.engine.num_gpu_blocks < 1)
      fail("--num-gpu-blocks-override", "the engine needs at least one KV block");
    if (options.engine->spec.engine.block_size < 1)
      fail("--block-size", "must be >= 1");
    const double w = options.engine->admission_window_ms;
    if (!std::isfinite(w) || w < 0 || w > 1000)
      fail("--admission-window-ms", "must be in [0, 1000], got " + std::to_string(w));
  }
  if (options.threads < 1)
    fail("--threads", "must be >= 1, got " + std::to_string(options.threads));
  if (options.tokens_per_chunk < 1) {
    fail("--tokens-per-chunk", "must be >= 1, got " + std::to_string(options.tokens_per_chunk));
  }
  if (options.max_num_seqs < 1) {
    fail("--max-num-seqs", "must be >= 1, got " + std::to_string(options.max_num_seqs));
  }
  check_range("--ttft-ms", options.ttft_ms, kHourMs);
  check_range("--itl-ms", options.itl_ms, kHourMs);
  check_range("--timeout-keep-alive", options.timeout_keep_alive_s, kDayS);
  check_range("--header-timeout", options.header_timeout_s, kDayS);
  check_range("--body-timeout", options.body_timeout_s, kDayS);
  if (options.max_connections < 0)
    fail("--max-connections", "must be >= 0, got " + std::to_string(options.max_connections));
  if (options.default_output_len < 0) {
    fail("--default-output-len", "must be >= 0, got " + std::to_string(options.default_output_len));
  }
  if (options.max_model_len < 1 || options.max_model_len > kMaxModelLen) {
    fail("--max-model-len",
         fmt::format("must be in [1, {}], got {}", kMaxModelLen, options.max_model_len));
  }
  if (options.model.empty())
    fail("--model", "must not be empty");
  validate_faults(options.faults);
  validate_perturbation(options.perturbation);
  if (options.timing == Timing::Engine && options.perturbation.active())
    fail(options.perturbation.stalls.empty() ? "--drift" : "--stall", "needs --timing fixed");
}

}  // namespace llmbench::server
