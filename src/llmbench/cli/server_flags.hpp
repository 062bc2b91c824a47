#pragma once
/// @file
/// Flags of the simulated engine and of the built-in server, shared by `simulate` (engine flags),
/// `serve` (plain names) and `run` (prefixed with "server-" so they don't clash with the
/// benchmark's own flags). Engine flag names are vLLM's `EngineArgs` names. The flags hold only
/// what was typed (`sim::EngineOverrides`); every default, vLLM V1's start-up policy included,
/// is applied by `sim::make_engine_spec`.

#include "llmbench/core/error.hpp"
#include "llmbench/server/options.hpp"
#include "llmbench/sim/engine_spec.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::cli {

/// The engine as typed: overrides only, unset = the default for the GPU and model.
using EngineFlags = sim::EngineOverrides;

/// Adds --<prefix>model-profile, --<prefix>gpu, --<prefix>tp (alias tensor-parallel-size),
/// --<prefix>max-num-seqs, --<prefix>max-num-batched-tokens, --<prefix>block-size,
/// --<prefix>gpu-memory-utilization, --<prefix>num-gpu-blocks-override,
/// --<prefix>[no-]enable-prefix-caching (alias no-prefix-caching),
/// --<prefix>long-prefill-token-threshold, --<prefix>scheduler (with --<prefix>batch-window-ms and
/// --<prefix>batch-length-beta for `dynamic`), --<prefix>swap-space,
/// --<prefix>enable-expert-parallel, --<prefix>ep (alias expert-parallel-size), --<prefix>dp
/// (alias data-parallel-size), --<prefix>exec-model, the efficiency overrides, --<prefix>engine
/// and --<prefix>calibration, bound to `f`.
/// `what` starts each help text.
void add_engine_flags(CLI::App& app, EngineFlags& f, const std::string& prefix,
                      const std::string& what);

/// Runs `fn` and returns its result; an `Exception` whose source is a flag ("--x") is re-thrown
/// with the flag's prefixed name ("--server-x" for `run`), so errors name the flag as typed.
template <typename Fn>
auto with_flag_prefix(const std::string& prefix, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Exception& e) {
    Error err = e.error();
    if (prefix.empty() || err.source.rfind("--", 0) != 0)
      throw;
    err.source = "--" + prefix + err.source.substr(2);
    throw Exception(err);
  }
}

/// Loads the profiles `f` names from `data_dir` and resolves the engine (`sim::load_engine_spec`:
/// vLLM V1's defaults, KV memory plan, checks). Throws `Exception` naming the flag as typed (with
/// `prefix`) on a bad value or a model that does not fit.
sim::EngineSpec resolve_engine_spec(const EngineFlags& f, const std::string& data_dir,
                                    const std::string& prefix);

/// The built-in server as typed: timing mode, the fixed model's knobs, the engine's flags.
struct ServeFlags {
  std::string timing = "engine";
  server::ServerOptions options;  ///< fixed-timing knobs and listener settings
  EngineFlags engine;
  std::optional<double> admission_window_ms;  ///< unset = `server::EngineSettings`'s default
  std::string model;  ///< served model name; "" = the profile name (engine) or "llmbench-sim"
  /// Unset = the profile's context (engine) or 32768 (fixed); a value < 1 is refused by
  /// `server::validate`.
  std::optional<std::int64_t> max_model_len;
  std::vector<std::string> stalls;  ///< `--stall AT_S:FOR_S`, repeatable (fixed timing)
  std::string drift;                ///< `--drift FACTOR:SECONDS` ("" = none; fixed timing)
};

/// Adds --<prefix>timing, the fixed model's --<prefix>ttft-ms, --<prefix>itl-ms,
/// --<prefix>tokens-per-chunk, --<prefix>default-output-len, --<prefix>max-model-len,
/// --<prefix>admission-window-ms, --<prefix>stall, --<prefix>drift and
/// every engine flag (`add_engine_flags`; --<prefix>max-num-seqs serves both timings).
void add_server_flags(CLI::App& app, ServeFlags& f, const std::string& prefix);

/// Resolves `f` into server options: with engine timing, loads the profiles from `data_dir` and
/// resolves the engine (`resolve_engine_spec`) into `ServerOptions::engine`.
server::ServerOptions resolve_server_options(const ServeFlags& f, const std::string& data_dir,
                                             const std::string& prefix);

}  // namespace llmbench::cli
