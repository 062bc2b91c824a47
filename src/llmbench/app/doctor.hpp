#pragma once
/// @file
/// The server probe of `llmbench doctor`: the backend's model list, one streamed request sent
/// as a one-request point of an `app::Session` (the same client, dialect, record and analysis as
/// `llmbench run`), and `/metrics`. The verdicts are telemetry::server_checks
/// (telemetry/doctor_checks.hpp).

#include "llmbench/app/session.hpp"
#include "llmbench/telemetry/doctor_checks.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::app {

/// What `llmbench doctor` is asked to probe of a server.
struct DoctorPlan {
  std::string base_url{};  ///< `--base-url`; "" = no server lines
  std::string backend = "openai";
  std::string model{};      ///< `--model`; "" = the first the server lists
  std::string tokenizer{};  ///< `--tokenizer`: compare the server's prompt count with it
};

/// The prompt of the one streamed request (completions `prompt`, or the chat user message).
inline constexpr const char* kDoctorPrompt =
    "Explain in one short paragraph why the sky is blue during the day.";
/// Its `max_tokens` (with `ignore_eos` where the backend takes it, so the decode rate is over
/// this many tokens).
inline constexpr std::int64_t kDoctorOutputTokens = 32;

/// Probes `plan.base_url` with `session` (nothing when it is empty: `given` false). Transport
/// failures are findings, not exceptions; throws `Exception` only for a malformed `--base-url`,
/// an unknown `--backend` or a `--tokenizer` that cannot be loaded.
telemetry::ServerProbe probe_server(const DoctorPlan& plan, Session& session);

/// The open-file check's planned concurrency when none is given: `run`'s default
/// `--num-prompts`, all in flight at once at the default request rate (inf).
inline constexpr std::int64_t kDefaultPlannedConcurrency = 200;

/// Every check of `llmbench doctor`, in order: NVML's (driver and CUDA versions, then every
/// GPU's; all N/A without NVIDIA; `nvml_library` is opened with dlopen), the host's (CPU
/// governor, huge pages, open files for `max_concurrency` requests in flight; ≤ 0 = the
/// default planned), then the server's (`probe_server(plan, session)`).
std::vector<telemetry::DoctorCheck> doctor_checks(const DoctorPlan& plan,
                                                  const std::string& nvml_library,
                                                  std::int64_t max_concurrency, Session& session);

}  // namespace llmbench::app
