// `llmbench doctor`: a preflight of the GPUs (NVML, opened with dlopen), the host and, with
// --base-url, the server, as PASS / WARN / FAIL / N/A lines with a fix each
// (telemetry/doctor_checks.hpp; docs/telemetry.md, "llmbench doctor").

#include "llmbench/app/doctor.hpp"
#include "llmbench/app/session.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/protocol/dialect.hpp"
#include "llmbench/telemetry/doctor_checks.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace llmbench::cli {

namespace {

/// What `llmbench doctor` was asked to check (its flags).
struct DoctorFlags {
  app::DoctorPlan server;             ///< `--base-url`, `--backend`, `--model`, `--tokenizer`
  std::int64_t max_concurrency = -1;  ///< `--max-concurrency`: the open-file check's load
  std::string nvml_library = "libnvidia-ml.so.1";  ///< `--nvml-library`
  bool json = false;                               ///< `--json`
};

int execute_doctor(const DoctorFlags& f) {
  app::Session session;
  const auto checks = app::doctor_checks(f.server, f.nvml_library, f.max_concurrency, session);
  const std::string text = f.json ? telemetry::checks_json(checks).dump(2) + "\n"
                                  : telemetry::format_checks_text(checks);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return telemetry::doctor_exit_code(checks);
}

}  // namespace

Command add_doctor_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "doctor",
      "Preflight: GPUs (driver, clocks, throttling, ECC, MIG, PCIe, NVLink, other processes), "
      "host (CPU governor, huge pages, open files) and, with --base-url, the server");
  auto f = std::make_shared<DoctorFlags>();
  sub->add_option("--base-url", f->server.base_url, "Server to check (e.g. http://127.0.0.1:8000)");
  sub->add_option("--backend", f->server.backend,
                  "Server dialect, as for run: " + protocol::backend_names())
      ->capture_default_str();
  sub->add_option("--model", f->server.model,
                  "Model to ask for (default: the first the server lists)");
  sub->add_option("--tokenizer", f->server.tokenizer,
                  "Tokenizer to compare the server's prompt count with (path or bundled name)");
  sub->add_option("--max-concurrency", f->max_concurrency,
                  "Requests in flight you plan, for the open-file check (default: 200, run's "
                  "default --num-prompts at once)");
  sub->add_option("--nvml-library", f->nvml_library, "NVML library to dlopen")
      ->capture_default_str();
  sub->add_flag("--json", f->json, "Print the checks as JSON");
  return [f] { return execute_doctor(*f); };
}

}  // namespace llmbench::cli
