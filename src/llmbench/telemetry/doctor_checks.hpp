#pragma once
/// @file
/// The judgements of `llmbench doctor`: PASS / WARN / FAIL / N/A lines, each WARN and FAIL with
/// a fix, made from facts read elsewhere: the GPUs by `Nvml::health` (nvml.hpp), the host by
/// `read_host_facts`, the server by the CLI's probe (app/doctor.cpp: one streamed
/// request through loadgen). Every function here is pure in its facts, so each line is tested
/// exactly (tests/unit/telemetry/doctor_checks_test.cpp). docs/telemetry.md, section "llmbench
/// doctor", lists the checks and their thresholds.

#include "llmbench/telemetry/nvml.hpp"
#include "llmbench/telemetry/server_metrics.hpp"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::telemetry {

/// The verdict of one check.
enum class CheckStatus : std::uint8_t { Pass, Warn, Fail, NotApplicable };

/// Each verdict's word in the text and JSON output (the one table).
struct CheckStatusName {
  CheckStatus status;
  std::string_view name;
};
inline constexpr std::array<CheckStatusName, 4> kCheckStatusNames{{
    {.status = CheckStatus::Pass, .name = "PASS"},
    {.status = CheckStatus::Warn, .name = "WARN"},
    {.status = CheckStatus::Fail, .name = "FAIL"},
    {.status = CheckStatus::NotApplicable, .name = "N/A"},
}};

/// "PASS", "WARN", "FAIL" or "N/A".
[[nodiscard]] std::string_view check_status_name(CheckStatus status) noexcept;

/// One line of the doctor's report.
struct DoctorCheck {
  std::string subject{};  ///< what was checked: "nvml", "gpu0", "host", "server"
  std::string name{};     ///< the check's key ("persistence_mode"); stable, for scripts
  CheckStatus status = CheckStatus::NotApplicable;
  std::string detail{};  ///< what was found, with its numbers
  std::string fix{};     ///< what to do about it; "" when nothing is to be done
};

/// The GPU check keys, in report order (each GPU gets one line per key).
inline constexpr std::array<std::string_view, 10> kGpuCheckNames{
    "device", "persistence_mode", "clocks", "throttle",     "ecc_mode", "ecc_errors",
    "mig",    "pcie_link",        "nvlink", "gpu_processes"};

/// NVML could not be opened (`why`: the loader's message): "driver" and "cuda_driver" and every
/// GPU check as N/A with subject "gpu".
[[nodiscard]] std::vector<DoctorCheck> no_nvml_checks(const std::string& why);

/// The driver's version (`nvmlSystemGetDriverVersion`) and the CUDA version it supports
/// (`nvmlSystemGetCudaDriverVersion`: 1000 × major + 10 × minor, e.g. 12040 = 12.4), and the
/// GPU count (FAIL at 0).
[[nodiscard]] std::vector<DoctorCheck> driver_checks(const std::string& driver_version,
                                                     std::optional<int> cuda_driver_version,
                                                     unsigned int gpu_count);

/// The lines of one GPU, one per `kGpuCheckNames` key, subject "gpu<index>". `gpu_count` is how
/// many GPUs NVML sees (NVLink matters with more than one); `self_pid` is left out of the
/// process list.
[[nodiscard]] std::vector<DoctorCheck> gpu_checks(const GpuHealth& health, unsigned int gpu_count,
                                                  unsigned int self_pid);

/// What the host says about itself.
struct HostFacts {
  /// `scaling_governor` of each CPU that has cpufreq → how many CPUs; empty: no cpufreq (a VM).
  std::map<std::string, int> governors{};
  /// The selected (bracketed) word of `transparent_hugepage/enabled`; "" when absent.
  std::string transparent_hugepages{};
  double open_files_soft = kNaN;  ///< RLIMIT_NOFILE (`inf` for RLIM_INFINITY)
  double open_files_hard = kNaN;
  std::int64_t planned_concurrency = 0;  ///< requests in flight the run will hold
  bool concurrency_given = false;        ///< from `--max-concurrency` (else a default)
};

/// Reads the governors and THP under `root` (`/` on a live system: root/sys/devices/system/cpu/
/// cpu<N>/cpufreq/scaling_governor, root/sys/kernel/mm/transparent_hugepage/enabled) and this
/// process's RLIMIT_NOFILE. Never throws; a file that cannot be read leaves its field empty.
[[nodiscard]] HostFacts read_host_facts(const std::filesystem::path& root,
                                        std::int64_t planned_concurrency, bool concurrency_given);

/// "cpu_governor", "transparent_hugepages", "open_files" (subject "host"). Open files need the
/// planned concurrency + 128 (the margin `llmbench run` keeps, cli/run_plan.cpp), against the
/// hard limit, since `run` raises its soft limit to the hard one.
[[nodiscard]] std::vector<DoctorCheck> host_checks(const HostFacts& facts);

/// What the probe of a server found (app/doctor.cpp fills it). Fields are grouped by
/// type (strings, numbers, flags) to keep the struct compact.
struct ServerProbe {
  std::string base_url{};             ///< `--base-url` as given
  std::string backend{};              ///< `--backend` name
  std::string models_path{};          ///< the backend's model list ("/v1/models"); "" when none
  std::string unreachable{};          ///< non-empty: the models GET got no answer at all (why)
  std::vector<std::string> models{};  ///< ids the model list named
  std::string model{};                ///< the model the request used ("" when none was known)
  std::string request_error{};        ///< the streamed request's failure; "" when it succeeded
  std::string tokenizer{};            ///< `--tokenizer` as given ("" when none)
  std::string metrics_url{};          ///< the `/metrics` URL asked
  std::string metrics_error{};        ///< its transport or parse failure
  double ttft_ms = kNaN;              ///< the streamed request's TTFT
  double e2el_ms = kNaN;              ///< … its E2EL
  double decode_tokens_per_s = kNaN;  ///< (N − 1) / (last − first output chunk)
  std::int64_t output_tokens = -1;    ///< server usage, else the local count
  std::int64_t server_prompt_tokens = -1;  ///< `usage.prompt_tokens`
  std::int64_t local_prompt_tokens = -1;   ///< the same prompt counted by `--tokenizer`
  std::size_t metric_families = 0;         ///< families in the `/metrics` body
  int models_status = 0;                   ///< HTTP status of the models GET
  int metrics_status = 0;                  ///< HTTP status of `/metrics`; 0 when no answer
  bool given = false;               ///< a `--base-url` was given (else every server line is N/A)
  bool model_given = false;         ///< `--model` was given (else the first listed)
  bool request_sent = false;        ///< the streamed request was attempted (a model was known)
  bool usage_sent = false;          ///< the server sent `usage` with token counts
  bool chat = false;                ///< a chat endpoint (the server applies its template)
  Engine engine = Engine::Unknown;  ///< what the `/metrics` names look like
};

/// "reachable", "models", "stream", "usage", "prompt_tokens", "metrics" (subject "server").
[[nodiscard]] std::vector<DoctorCheck> server_checks(const ServerProbe& probe);

/// The text report: per check "STATUS  subject name: detail", and a "      fix: …" line under a
/// check with a fix; then one line with the counts per verdict.
[[nodiscard]] std::string format_checks_text(const std::vector<DoctorCheck>& checks);

/// `{"checks": [{subject, name, status, detail, fix}], "counts": {"PASS": n, ...}}`.
[[nodiscard]] nlohmann::json checks_json(const std::vector<DoctorCheck>& checks);

/// 1 when any check FAILed, else 0 (the exit codes of STYLE.md: 1 = ran, but failed).
[[nodiscard]] int doctor_exit_code(const std::vector<DoctorCheck>& checks) noexcept;

}  // namespace llmbench::telemetry
