#pragma once
/// @file
/// The server probe of `llmbench doctor`: the backend's model list, one streamed request sent
/// through loadgen (the same client, dialect and record as `llmbench run`), and `/metrics`.
/// The verdicts are telemetry::server_checks (telemetry/doctor_checks.hpp).

#include "llmbench/telemetry/doctor_checks.hpp"

#include <cstdint>
#include <string>

namespace llmbench::cli {

/// What `llmbench doctor` was asked to check (its flags).
struct DoctorFlags {
  std::string base_url{};  ///< `--base-url`; "" = no server lines
  std::string backend = "openai";
  std::string model{};                ///< `--model`; "" = the first the server lists
  std::string tokenizer{};            ///< `--tokenizer`: compare the server's prompt count with it
  std::int64_t max_concurrency = -1;  ///< `--max-concurrency`: the open-file check's load
  std::string nvml_library = "libnvidia-ml.so.1";  ///< `--nvml-library`
  bool json = false;                               ///< `--json`
};

/// The prompt of the one streamed request (completions `prompt`, or the chat user message).
inline constexpr const char* kDoctorPrompt =
    "Explain in one short paragraph why the sky is blue during the day.";
/// Its `max_tokens` (with `ignore_eos` where the backend takes it, so the decode rate is over
/// this many tokens).
inline constexpr std::int64_t kDoctorOutputTokens = 32;

/// Probes `flags.base_url` (nothing when it is empty: `given` false). Transport failures are
/// findings, not exceptions; throws `Exception` only for a malformed `--base-url`, an unknown
/// `--backend` or a `--tokenizer` that cannot be loaded.
telemetry::ServerProbe probe_server(const DoctorFlags& flags);

}  // namespace llmbench::cli
