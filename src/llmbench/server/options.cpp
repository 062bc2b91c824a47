#include "llmbench/server/options.hpp"

#include "llmbench/core/error.hpp"

#include <cmath>
#include <string_view>

namespace llmbench::server {
namespace {

[[noreturn]] void fail(const char* flag, const std::string& message) {
  throw Exception(Error{message, flag, -1});
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
  if (!std::isfinite(options.ttft_ms) || options.ttft_ms < 0) {
    fail("--ttft-ms", "must be a finite value >= 0, got " + std::to_string(options.ttft_ms));
  }
  if (!std::isfinite(options.itl_ms) || options.itl_ms < 0) {
    fail("--itl-ms", "must be a finite value >= 0, got " + std::to_string(options.itl_ms));
  }
  if (options.default_output_len < 0) {
    fail("--default-output-len", "must be >= 0, got " + std::to_string(options.default_output_len));
  }
  if (options.max_model_len < 1) {
    fail("--max-model-len", "must be >= 1, got " + std::to_string(options.max_model_len));
  }
  if (options.model.empty())
    fail("--model", "must not be empty");
}

}  // namespace llmbench::server
