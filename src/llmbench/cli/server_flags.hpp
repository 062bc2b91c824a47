#pragma once
/// @file
/// The built-in server's timing flags, shared by `serve` (plain names) and `run` (prefixed with
/// "server-" so they don't clash with the benchmark's own flags).

#include "llmbench/server/options.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace llmbench::cli {

/// Adds --<prefix>ttft-ms, --<prefix>itl-ms, --<prefix>tokens-per-chunk, --<prefix>max-num-seqs,
/// --<prefix>default-output-len bound to `options`.
inline void add_timing_flags(CLI::App& app, server::ServerOptions& options,
                             const std::string& prefix) {
  app.add_option("--" + prefix + "ttft-ms", options.ttft_ms,
                 "Built-in server: admission to first output chunk (ms)")
      ->capture_default_str();
  app.add_option("--" + prefix + "itl-ms", options.itl_ms,
                 "Built-in server: time per output token (ms)")
      ->capture_default_str();
  app.add_option(
         "--" + prefix + "tokens-per-chunk", options.tokens_per_chunk,
         "Built-in server: tokens per streamed chunk (>1 mimics MTP / speculative decoding)")
      ->capture_default_str();
  app.add_option("--" + prefix + "max-num-seqs", options.max_num_seqs,
                 "Built-in server: concurrently generating requests; the rest queue")
      ->capture_default_str();
  app.add_option("--" + prefix + "default-output-len", options.default_output_len,
                 "Built-in server: output tokens when a request sets no max_tokens")
      ->capture_default_str();
}

}  // namespace llmbench::cli
