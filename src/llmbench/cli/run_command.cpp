// `llmbench run`: resolve the flags into a plan (run_plan.hpp), start the target (the built-in
// server, or the given URL with model discovery), run the load, and report (run_report.cpp).

#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/run_plan.hpp"
#include "llmbench/cli/run_point.hpp"
#include "llmbench/cli/run_report.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/metrics/record_file.hpp"
#include "llmbench/metrics/record_io.hpp"
#include "llmbench/protocol/dialect.hpp"
#include "llmbench/protocol/redact.hpp"
#include "llmbench/server/server.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

namespace llmbench::cli {

namespace {

using nlohmann::json;

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int /*sig*/) {
  g_stop.store(true);
}

/// Prints "done/total, rate, errors" on one line of a terminal until stopped.
class ProgressLine {
 public:
  ProgressLine(const loadgen::Progress& p, bool enabled) : p_(p) {
    if (enabled && isatty(STDERR_FILENO) != 0) {
      thread_ = std::thread([this] { loop(); });
    }
  }
  ~ProgressLine() { stop(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ProgressLine(ProgressLine&&) = delete;
  ProgressLine& operator=(ProgressLine&&) = delete;

  void stop() {
    if (thread_.joinable()) {
      done_.store(true);
      thread_.join();
      std::fprintf(stderr, "\r\033[K");
    }
  }

 private:
  void loop() {
    const auto t0 = std::chrono::steady_clock::now();
    while (!done_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const auto done = p_.done.load();
      const auto total = p_.total.load();
      std::fprintf(stderr, "\r\033[K[%lld/%s] %.1f req/s, %.0f tok/s, errors %lld, %.0fs",
                   static_cast<long long>(done), total > 0 ? std::to_string(total).c_str() : "?",
                   s > 0 ? static_cast<double>(done) / s : 0.0,
                   s > 0 ? static_cast<double>(p_.output_tokens.load()) / s : 0.0,
                   static_cast<long long>(p_.failed.load()), s);
      std::fflush(stderr);
    }
  }
  const loadgen::Progress& p_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

/// Loads `--tokenizer` (exact prompt lengths, local output-token counts) and the samples; points
/// the plan's load and dataset options at the tokenizer.
RunWorkload load_workload(RunPlan& plan, const RunFlags& f) {
  RunWorkload w;
  w.tokenizer = load_tokenizer(f);
  plan.load.tokenizer = w.tokenizer ? &*w.tokenizer : nullptr;
  plan.dataset.tokenizer = plan.load.tokenizer;
  if (plan.load.request.chat) {
    w.chat_template = load_chat_template(f);
    plan.dataset.chat_template = w.chat_template ? &*w.chat_template : nullptr;
  }
  const TimeNs start = steady_now_ns();
  w.samples = workload::load_samples(plan.dataset);
  if (!w.samples.empty() && w.samples.front().arrival_ns >= 0) {
    // Trace replay: the rows after the warm-ups are the measured requests, at their own times.
    const auto rows = static_cast<std::int64_t>(w.samples.size());
    if (rows <= f.num_warmups) {
      throw Exception(Error{fmt::format("the trace window has {} rows, not more than the {} "
                                        "warm-ups",
                                        rows, f.num_warmups),
                            "--num-warmups", -1});
    }
    plan.load.num_prompts = rows - f.num_warmups;
  }
  if (w.tokenizer) {
    log::info("{} prompts of exact token length in {:.2f} s", w.samples.size(),
              ns_to_s(steady_now_ns() - start));
  }
  return w;
}

/// Starts the built-in server on a free loopback port and points the load at it.
std::unique_ptr<server::Server> start_builtin(RunPlan& plan) {
  auto& b = *plan.builtin;
  // With --tokenizer the built-in server counts prompts with it too, so its usage matches the
  // client's count (no prompt-token mismatches from the server's byte estimate).
  b.options.tokenizer = plan.load.tokenizer;
  b.options.chat_template = plan.dataset.chat_template;  // and renders chat with its template
  auto server = std::make_unique<server::Server>(b.options);
  const auto port = server->start();
  const std::string base_url = fmt::format("http://127.0.0.1:{}", port);
  if (b.options.timing == server::Timing::Engine) {
    log::info("no --base-url given: started the built-in server on {}: simulated engine {}",
              base_url, b.options.engine->spec.describe());
  } else {
    log::info(
        "no --base-url given: started the built-in server ({}) on {} (fixed timing: TTFT {} ms, "
        "ITL {} ms, {} token(s)/chunk, max_num_seqs {})",
        b.options.model, base_url, b.options.ttft_ms, b.options.itl_ms, b.options.tokens_per_chunk,
        b.options.max_num_seqs);
  }
  plan.load.url = http::parse_url(base_url).value();
  return server;
}

/// GETs `path` once, or (with `ready_timeout_s` > 0, vLLM's --ready-check-timeout-sec) again
/// every 500 ms while the server does not answer or answers 503 (llama.cpp and vLLM while the
/// model loads), until it answers otherwise or the time is up; the last failure is rethrown.
std::pair<int, std::string> fetch_when_ready(const loadgen::LoadOptions& lo,
                                             const std::string& path, double ready_timeout_s) {
  const auto timeout = std::min<std::chrono::milliseconds>(
      std::chrono::seconds(10), lo.client.connect_timeout + lo.client.first_byte_timeout);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::llround(ready_timeout_s * 1000));
  bool logged = false;
  for (;;) {
    const bool last = std::chrono::steady_clock::now() >= deadline;
    try {
      auto answer = http::fetch_blocking(lo.url, lo.url.path_prefix + path, lo.client, timeout);
      if (answer.first != 503 || last)
        return answer;
    } catch (const Exception&) {
      if (last)
        throw;
    }
    if (!logged) {
      log::info("waiting up to {:g} s for the server to be ready (--ready-check-timeout-sec)",
                ready_timeout_s);
      logged = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

/// GETs the backend's model list (`protocol::Dialect::models_path`, /v1/models for the OpenAI
/// shapes); the redacted answer (or why there is none) goes into `target`, and its first model
/// (`Dialect::first_model`) becomes the load's model when `--model` was not given. A GET that
/// gets no answer (connection refused, TLS verification, timeout) throws `Exception`: the run
/// stops before it starts.
void discover_model(RunPlan& plan, RunTarget& target, double ready_timeout_s) {
  auto& lo = plan.load;
  const protocol::Dialect& dialect = protocol::dialect(lo.backend);
  const std::string models_path(dialect.models_path());
  std::optional<std::string> discovered_model;
  std::string failure;
  try {
    auto [status, body] = fetch_when_ready(lo, models_path, ready_timeout_s);
    // The answer is stored in the results: a server that echoes the key must not put it there,
    // even spelled with JSON escapes (its strings are redacted once decoded).
    body = protocol::redact_json_text(body, protocol::Redactor(lo.secrets));
    if (status == 200) {
      discovered_model = dialect.first_model(body);
      target.server_models = json::parse(body, nullptr, false);
      if (target.server_models.is_discarded())
        target.server_models = body;
    } else {
      failure = fmt::format("GET {} answered HTTP {}", models_path, status);
      log::warn("{}", failure);
    }
  } catch (const Exception& e) {
    // No answer at all (refused, TLS not trusted, timeout): every request would fail the same
    // way, so the run stops here, once, with the reason (and for TLS, the way out).
    throw Exception(Error{fmt::format("cannot reach the server: GET {} failed: {}", models_path,
                                      protocol::Redactor(lo.secrets).redact(e.what())),
                          plan.builtin ? "the built-in server" : "--base-url", -1});
  }
  if (lo.request.model.empty() && discovered_model) {
    lo.request.model = *discovered_model;
    log::info("--model not given: using '{}' from {}", lo.request.model, models_path);
  }
  if (lo.request.model.empty()) {
    throw Exception(Error{failure.empty()
                              ? "not given and the server's " + models_path + " named none"
                              : "not given, and " + failure,
                          "--model", -1});
  }
  // Triton's paths name the model: "/v2/models/{model}/generate_stream" (also in --endpoint).
  lo.endpoint = protocol::expand_endpoint(lo.endpoint, lo.request.model);
}

/// The target running: the built-in server started if planned (into `builtin`), the client's
/// TLS setup checked (a bad `--ca-cert` fails here, once), the model known.
RunTarget start_target(RunPlan& plan, std::unique_ptr<server::Server>& builtin,
                       double ready_timeout_s) {
  RunTarget target;
  if (plan.builtin) {
    builtin = start_builtin(plan);
    target.builtin = builtin.get();
  }
  http::check_client_options(plan.load.url, plan.load.client);
  discover_model(plan, target, ready_timeout_s);
  return target;
}

/// The results folder checked and the per-request JSONL opened (with `--save-result` or
/// `--result-dir`), before the run, so a bad folder costs no requests.
RunOutputs open_outputs(const RunFlags& f, const RunPlan& plan) {
  RunOutputs out;
  out.start_time = std::chrono::system_clock::now();
  out.stem = !plan.output.stem.empty()
                 ? plan.output.stem
                 : default_result_stem(f, plan.report.rate, plan.load.request.model,
                                       std::chrono::system_clock::to_time_t(out.start_time));
  if (plan.output.save_records) {
    prepare_result_dir(plan.output.dir);
    out.records_path = plan.output.dir / (out.stem + ".records.jsonl");
    out.records = std::make_unique<metrics::RecordFileWriter>(out.records_path.string());
  }
  return out;
}

void log_run_start(const RunFlags& f, const RunPlan& plan) {
  const auto& lo = plan.load;
  const double rate = plan.report.rate;
  log::info(
      "benchmarking {} {} with {} ({} prompts{}), {}{}", lo.url.origin(), lo.endpoint,
      lo.request.model,
      f.duration_s > 0 ? fmt::format("duration {}s", f.duration_s) : std::to_string(f.num_prompts),
      f.num_warmups > 0 ? fmt::format(" + {} warm-up", f.num_warmups) : "",
      lo.ramp_up != workload::RampUp::None
          ? fmt::format("request rate ramp {} {:g} to {:g}/s", f.ramp_up_strategy,
                        lo.ramp_up_start_rps, lo.ramp_up_end_rps)
      : std::isinf(rate)
          ? std::string("request rate inf")
          : fmt::format("request rate {:g}/s, burstiness {:g}", rate, plan.report.burstiness),
      f.max_concurrency > 0 ? fmt::format(", max concurrency {}", f.max_concurrency) : "");
}

/// Runs the load with SIGINT/SIGTERM/SIGHUP ending it early (in-flight requests cancelled and
/// recorded), writing each record to the JSONL as it finishes.
loadgen::LoadResult run_benchmark(const RunPlan& plan, const RunWorkload& w, RunOutputs& out) {
  loadgen::RecordSink sink;
  if (out.records) {
    sink.write = [&out](const metrics::RequestRecord& r) { out.records->append(r); };
    sink.flush = [&out] { out.records->flush(); };
  }
  g_stop.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {};
  struct sigaction old_term {};
  struct sigaction old_hup {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);  // a closed terminal stops the run as SIGTERM does
  loadgen::Progress progress;
  loadgen::LoadResult result;
  if (out.telemetry)
    out.telemetry->start();
  {
    ProgressLine line(progress, plan.progress);
    result = loadgen::run_load(plan.load, w.samples, sink, &progress, &g_stop);
  }
  if (out.telemetry)
    out.telemetry->stop();  // before the built-in server stops: the last scrape reaches it
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  if (result.interrupted) {
    const auto cancelled =
        std::count_if(result.records.begin(), result.records.end(),
                      [](const auto& r) { return r.error_kind == metrics::ErrorKind::Cancelled; });
    log::warn("interrupted: {} requests finished, {} in flight were cancelled (counted as failed)",
              static_cast<std::int64_t>(result.records.size()) - cancelled, cancelled);
  }
  return result;
}

int execute_run(const RunFlags& f) {
  RunPlan plan = resolve_run(f, ResolveEnv::current());
  for (const auto& warning : plan.warnings) {
    log::warn("{}", warning);
  }
  for (const auto& warning : unhonoured_flag_warnings(plan.load)) {
    log::warn("{}", warning);
  }
  const RunWorkload workload = load_workload(plan, f);
  std::unique_ptr<server::Server> builtin;
  RunTarget target = start_target(plan, builtin, f.ready_check_timeout_s);
  RunOutputs outputs = open_outputs(f, plan);
  outputs.telemetry = std::make_unique<RunTelemetry>(f.telemetry, plan.load);
  log_run_start(f, plan);
  loadgen::LoadResult result = run_benchmark(plan, workload, outputs);
  if (target.builtin) {
    target.builtin->stop();
  }
  return report_run(f, plan, workload, target, result, outputs);
}

}  // namespace

RunSession::RunSession() = default;

RunSession::~RunSession() {
  if (builtin_)
    builtin_->stop();
}

PointReport RunSession::run_point(const RunFlags& f) {
  RunPlan plan = resolve_run(f, ResolveEnv::current());
  for (const auto& warning : plan.warnings) {
    log::warn("{}", warning);
  }
  if (!workload_) {
    for (const auto& warning : unhonoured_flag_warnings(plan.load)) {
      log::warn("{}", warning);
    }
    workload_ = load_workload(plan, f);
    samples_seed_ = plan.dataset.seed;
  } else {
    plan.load.tokenizer = workload_->tokenizer ? &*workload_->tokenizer : nullptr;
    plan.dataset.tokenizer = plan.load.tokenizer;
    plan.dataset.chat_template = workload_->chat_template ? &*workload_->chat_template : nullptr;
    if (plan.dataset.seed != samples_seed_) {
      // A point with its own --seed (each `sweep` measurement): its own prompts, drawn with
      // the tokenizer already loaded.
      workload_->samples = workload::load_samples(plan.dataset);
      samples_seed_ = plan.dataset.seed;
    }
  }
  RunTarget target;
  if (plan.builtin) {
    if (!builtin_) {
      builtin_ = start_builtin(plan);
      builtin_url_ = plan.load.url.origin();
    }
    plan.load.url = http::parse_url(builtin_url_).value();
    target.builtin = builtin_.get();
  }
  discover_model(plan, target, f.ready_check_timeout_s);
  RunOutputs outputs = open_outputs(f, plan);
  outputs.telemetry = std::make_unique<RunTelemetry>(f.telemetry, plan.load);
  log_run_start(f, plan);
  loadgen::LoadResult result = run_benchmark(plan, *workload_, outputs);
  PointReport point;
  report_run(f, plan, *workload_, target, result, outputs, &point);
  return point;
}

Command add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "run", "Benchmark an OpenAI-compatible endpoint (the built-in server if no --base-url)");
  auto f = std::make_shared<RunFlags>();
  add_run_flags(*sub, *f);
  return [f, sub] {
    f->given = given_flags(*sub);
    return execute_run(*f);
  };
}

}  // namespace llmbench::cli
