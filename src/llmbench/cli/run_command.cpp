#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/metrics/record_file.hpp"
#include "llmbench/metrics/record_io.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/report/report.hpp"
#include "llmbench/server/server.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <strings.h>
#include <thread>
#include <unistd.h>

namespace llmbench::cli {

namespace {

using nlohmann::json;

/// Everything `llmbench run` accepts, as typed (the "requested" configuration); the workload
/// and load-shape fields come from `WorkloadFlags`.
struct RunFlags : WorkloadFlags {
  std::string base_url;
  std::string host;
  int port = 0;
  std::string endpoint;
  std::string backend = "openai";
  std::string model;
  double duration_s = 0;
  std::int64_t num_warmups = 0;
  bool ignore_eos = false;
  std::optional<std::int64_t> min_tokens;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::string extra_body;
  bool save_result = false;
  bool save_detailed = false;
  std::string result_dir;
  std::string result_filename;
  std::vector<std::string> headers;
  std::string api_key;
  bool insecure = false;
  std::string ca_cert;  ///< --ca-cert: PEM file of the certificates to trust
  int client_threads = 0;
  double connect_timeout_s = 10;
  double first_byte_timeout_s = 600;
  double idle_timeout_s = 300;
  double timeout_s = 3600;
  bool no_stream = false;
  bool continuous_usage = false;
  bool no_prewarm = false;
  bool quiet = false;
  ServeFlags server;  // the built-in server (no --base-url): --server-* flags
};

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int /*sig*/) {
  g_stop.store(true);
}

json requested_config(const RunFlags& f) {
  json j = {{"base_url", f.base_url},
            {"endpoint", f.endpoint},
            {"backend", f.backend},
            {"model", f.model},
            {"tokenizer", f.tokenizer},
            {"dataset_name", f.dataset_name},
            {"dataset_path", f.dataset_path},
            {"num_prompts", f.num_prompts},
            {"seed", f.seed},
            {"random_input_len", f.random_input_len},
            {"random_output_len", f.random_output_len},
            {"random_range_ratio", f.random_range_ratio},
            {"random_prefix_len", f.random_prefix_len},
            {"random_prompt_kind", f.random_prompt_kind},
            {"output_len", f.output_len},
            {"max_concurrency", f.max_concurrency},
            {"request_rate", f.request_rate},
            {"burstiness", f.burstiness},
            {"duration", f.duration_s},
            {"num_warmups", f.num_warmups},
            {"ignore_eos", f.ignore_eos},
            {"extra_body", f.extra_body},
            {"goodput", f.goodput},
            {"percentile_metrics", f.percentile_metrics},
            {"metric_percentiles", f.metric_percentiles},
            {"client_threads", f.client_threads},
            {"stream", !f.no_stream},
            {"continuous_usage", f.continuous_usage},
            {"insecure", f.insecure},
            {"ca_cert", f.ca_cert},
            {"header_names", json::array()}};
  for (const auto& h : f.headers) {
    j["header_names"].push_back(h.substr(0, h.find(':')));  // values may be secrets
  }
  if (f.min_tokens)
    j["min_tokens"] = *f.min_tokens;
  if (f.temperature)
    j["temperature"] = *f.temperature;
  if (f.top_p)
    j["top_p"] = *f.top_p;
  return j;
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

std::string default_result_name(const RunFlags& f, const std::string& model, double rate) {
  const auto now = std::chrono::system_clock::now();
  std::string m = model;
  for (char& c : m) {
    if (c == '/' || c == ' ')
      c = '_';
  }
  const std::string rate_s = std::isinf(rate) ? "inf" : fmt::format("{:g}", rate);
  std::string conc = f.max_concurrency > 0 ? fmt::format("-concurrency{}", f.max_concurrency) : "";
  return fmt::format("{}-{}qps{}-{}-{:%Y%m%d-%H%M%S}", f.backend, rate_s, conc, m,
                     fmt::localtime(std::chrono::system_clock::to_time_t(now)));
}

int execute_run(RunFlags& f) {
  // ---- validate and derive the effective configuration ----
  const auto [rate, burstiness, percentiles, percentile_metrics, summary_options] = report_setup(f);
  const auto backend = protocol::parse_backend(f.backend);
  if (f.num_prompts <= 0 && f.duration_s <= 0) {
    throw Exception(Error{"must be positive", "--num-prompts", -1});
  }
  if (f.max_concurrency == 0 || f.max_concurrency < -1) {
    throw Exception(Error{"must be a positive number of requests", "--max-concurrency", -1});
  }
  if (!(f.duration_s >= 0) || f.duration_s > 1e7) {
    throw Exception(Error{"must be a number of seconds in [0, 1e7]", "--duration", -1});
  }
  if (f.num_warmups < 0) {
    throw Exception(Error{"must not be negative", "--num-warmups", -1});
  }
  if (f.output_len != -1 && f.output_len <= 0) {
    throw Exception(Error{"must be a positive number of tokens", "--output-len", -1});
  }
  for (const auto& [value, flag] :
       {std::pair{f.connect_timeout_s, "--connect-timeout"},
        std::pair{f.first_byte_timeout_s, "--first-byte-timeout"},
        std::pair{f.idle_timeout_s, "--idle-timeout"}, std::pair{f.timeout_s, "--timeout"}}) {
    if (!(value > 0) || value > 1e7) {
      throw Exception(
          Error{fmt::format("must be a number of seconds in (0, 1e7], got {}", value), flag, -1});
    }
  }
  const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  if (f.client_threads < 0 || f.client_threads > 64 * cores) {
    throw Exception(
        Error{fmt::format("must be 0 (one per core) to {}", 64 * cores), "--client-threads", -1});
  }
  for (const auto& [value, flag] :
       {std::pair{f.temperature, "--temperature"}, std::pair{f.top_p, "--top-p"}}) {
    if (value && !std::isfinite(*value)) {
      throw Exception(Error{"must be a finite number", flag, -1});
    }
  }
  if (std::isfinite(rate) && rate < 1e-6) {
    throw Exception(Error{"must be at least 1e-6 requests/s (or inf)", "--request-rate", -1});
  }

  loadgen::LoadOptions lo;
  lo.backend = backend;
  lo.chat = protocol::is_chat_backend(backend);
  lo.endpoint = f.endpoint.empty() ? std::string(protocol::default_endpoint(backend)) : f.endpoint;
  if (lo.endpoint.find("chat") != std::string::npos) {
    lo.chat = true;
  }
  for (const auto& h : f.headers) {
    const auto colon = h.find(':');
    if (colon == std::string::npos || colon == 0) {
      throw Exception(Error{"expected 'Name: value'", "--header", -1});
    }
    if (h.find_first_of("\r\n") != std::string::npos) {
      throw Exception(Error{"header lines must not contain CR or LF", "--header",
                            static_cast<std::int64_t>(h.find_first_of("\r\n"))});
    }
    std::string value = h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    lo.client.headers.emplace_back(h.substr(0, colon), value);
    lo.secrets.push_back(value);  // header values may be credentials: never echoed back
  }
  const bool explicit_auth = std::any_of(
      lo.client.headers.begin(), lo.client.headers.end(),
      [](const auto& kv) { return strcasecmp(kv.first.c_str(), "Authorization") == 0; });
  std::string api_key = f.api_key;
  if (api_key.empty()) {
    if (const char* k = std::getenv("OPENAI_API_KEY"); k != nullptr)
      api_key = k;
  }
  if (!api_key.empty() && explicit_auth) {
    log::warn("an Authorization header was given with --header: not sending the API key");
  } else if (!api_key.empty()) {
    lo.client.headers.emplace_back("Authorization", "Bearer " + api_key);
    lo.secrets.push_back(api_key);
  }
  lo.client.insecure = f.insecure;
  lo.client.ca_cert_file = f.ca_cert;
  const auto ms = [](double s) { return std::chrono::milliseconds(std::llround(s * 1000)); };
  lo.client.connect_timeout = ms(f.connect_timeout_s);
  lo.client.first_byte_timeout = ms(f.first_byte_timeout_s);
  lo.client.idle_timeout = ms(f.idle_timeout_s);
  lo.client.total_timeout = ms(f.timeout_s);
  lo.num_prompts = f.num_prompts;
  lo.num_warmups = f.num_warmups;
  lo.max_concurrency = f.max_concurrency;
  lo.request_rate = rate;
  lo.burstiness = burstiness;
  lo.duration_s = f.duration_s;
  // Stragglers get their own --timeout, plus a margin so a request's own timeout (recorded as
  // `timeout`) always fires before the end-of-run drain cancels it.
  lo.drain_timeout_s = f.timeout_s + 5;
  lo.seed = f.seed;
  lo.client_threads = f.client_threads;
  lo.stream = !f.no_stream;
  lo.continuous_usage = f.continuous_usage;
  lo.ignore_eos = f.ignore_eos;
  lo.min_tokens = f.min_tokens;
  lo.temperature = f.temperature;
  lo.top_p = f.top_p;
  lo.extra_body_json = f.extra_body;
  lo.prewarm_connections = !f.no_prewarm;

  // ---- workload ----
  const std::int64_t sample_count =
      (f.duration_s > 0 ? std::max<std::int64_t>(f.num_prompts, 1000) : f.num_prompts) +
      f.num_warmups;
  // --tokenizer: exact prompt lengths (counted as the endpoint's server counts them) and local
  // output-token counts.
  const auto tok = load_tokenizer(f);
  lo.tokenizer = tok ? &*tok : nullptr;
  const auto dopt = dataset_options(f, sample_count, lo.tokenizer, lo.chat);
  const TimeNs workload_start = steady_now_ns();
  const auto samples = workload::load_samples(dopt);
  if (tok) {
    log::info("{} prompts of exact token length in {:.2f} s", samples.size(),
              ns_to_s(steady_now_ns() - workload_start));
  }
  {
    // Fail on a bad --extra-body now, before any server is started or contacted.
    protocol::GenRequest probe;
    probe.extra_body_json = f.extra_body;
    (void)protocol::build_request_body(backend, probe);
    if (f.extra_body.find("\"stream\"") != std::string::npos) {
      log::warn(
          "--extra-body sets \"stream\": use --no-stream instead, or every request will be "
          "parsed as the wrong kind of response");
    }
  }

  // ---- the target: a given URL, or the built-in server on a free loopback port ----
  std::unique_ptr<server::Server> builtin;
  std::string base_url = f.base_url;
  if (base_url.empty() && !f.host.empty()) {
    base_url = fmt::format("http://{}:{}", f.host, f.port > 0 ? f.port : 8000);
  }
  // Every request in flight holds a socket (two with the built-in server in this process): cap
  // the in-flight count below the descriptor limit rather than fail thousands of connects.
  const std::int64_t fd_limit = server::raise_open_file_limit();
  const bool in_process = base_url.empty();
  const std::int64_t fd_cap = std::max<std::int64_t>(1, (fd_limit - 128) / (in_process ? 2 : 1));
  if (fd_limit > 0 && (lo.max_concurrency < 0 || lo.max_concurrency > fd_cap) &&
      (f.duration_s > 0 || f.num_prompts > fd_cap)) {
    log::warn("capping requests in flight at {} (open-file limit {}; raise it with ulimit -n)",
              fd_cap, fd_limit);
    lo.max_concurrency = fd_cap;
  }
  server::ServerOptions builtin_options;
  if (base_url.empty()) {
    builtin_options = resolve_server_options(f.server, data_dir(), "server-");
    // With --tokenizer the built-in server counts prompts with it too, so its usage matches the
    // client's count (no prompt-token mismatches from the server's byte estimate).
    builtin_options.tokenizer = lo.tokenizer;
    builtin = std::make_unique<server::Server>(builtin_options);
    const auto port = builtin->start();
    base_url = fmt::format("http://127.0.0.1:{}", port);
    if (builtin_options.timing == server::Timing::Engine) {
      log::info("no --base-url given: started the built-in server on {}: simulated engine {}",
                base_url, builtin_options.engine->spec.describe());
    } else {
      log::info(
          "no --base-url given: started the built-in server ({}) on {} (fixed timing: TTFT {} "
          "ms, ITL {} ms, {} token(s)/chunk, max_num_seqs {})",
          builtin_options.model, base_url, builtin_options.ttft_ms, builtin_options.itl_ms,
          builtin_options.tokens_per_chunk, builtin_options.max_num_seqs);
    }
    if (f.backend == "openai" || f.backend == "vllm") {
      lo.continuous_usage = lo.continuous_usage || backend == protocol::Backend::Vllm;
    }
  }
  auto url = http::parse_url(base_url);
  if (!url) {
    throw Exception(Error{url.error().message, "--base-url", url.error().offset});
  }
  lo.url = *url;
  if (lo.url.path_prefix.ends_with("/v1") && lo.endpoint.starts_with("/v1/")) {
    log::warn(
        "--base-url ends in /v1 and the endpoint starts with /v1/: dropping the /v1 of the "
        "URL (give the server root, as for vllm bench serve)");
    lo.url.path_prefix.resize(lo.url.path_prefix.size() - 3);
  }

  // ---- what the server says it serves ----
  json server_models = nullptr;
  std::string models_failure;
  const protocol::Dialect& dialect = protocol::dialect(backend);
  const std::string models_path(dialect.models_path());
  std::optional<std::string> discovered_model;
  try {
    auto [status, body] = http::fetch_blocking(
        lo.url, lo.url.path_prefix + models_path, lo.client,
        std::min<std::chrono::milliseconds>(
            std::chrono::seconds(10), lo.client.connect_timeout + lo.client.first_byte_timeout));
    // The answer is stored in the results: a server that echoes the key must not put it there.
    body = protocol::Redactor(lo.secrets).redact(body);
    if (status == 200) {
      discovered_model = dialect.first_model(body);
      server_models = json::parse(body, nullptr, false);
      if (server_models.is_discarded())
        server_models = body;
    } else {
      models_failure = fmt::format("GET {} answered HTTP {}", models_path, status);
      log::warn("{}", models_failure);
    }
  } catch (const Exception& e) {
    models_failure = fmt::format("GET {} failed: {}", models_path,
                                 protocol::Redactor(lo.secrets).redact(e.what()));
    log::warn("{}", models_failure);
  }
  lo.model = f.model;
  if (lo.model.empty() && discovered_model) {
    lo.model = *discovered_model;
    log::info("--model not given: using '{}' from {}", lo.model, models_path);
  }
  if (lo.model.empty()) {
    throw Exception(Error{models_failure.empty()
                              ? "not given and the server's /v1/models named none"
                              : "not given, and " + models_failure,
                          "--model", -1});
  }

  // ---- outputs: per-request JSONL written as each request finishes ----
  const bool saving = f.save_result || !f.result_dir.empty();
  const std::string stem =
      f.result_filename.empty()
          ? default_result_name(f, lo.model, rate)
          : std::filesystem::path(f.result_filename).replace_extension().string();
  const std::filesystem::path dir = f.result_dir.empty() ? "." : f.result_dir;
  // Written on loadgen's writer thread, every write checked (metrics::RecordFileWriter).
  std::unique_ptr<metrics::RecordFileWriter> records_out;
  std::filesystem::path records_path;
  if (saving) {
    prepare_result_dir(dir);
    records_path = dir / (stem + ".records.jsonl");
    records_out = std::make_unique<metrics::RecordFileWriter>(records_path.string());
  }
  loadgen::RecordSink sink;
  if (records_out) {
    sink.write = [&](const metrics::RequestRecord& r) { records_out->append(r); };
    sink.flush = [&] { records_out->flush(); };
  }

  // ---- run ----
  log::info(
      "benchmarking {} {} with {} ({} prompts{}), {}{}", lo.url.origin(), lo.endpoint, lo.model,
      f.duration_s > 0 ? std::string("duration ") + fmt::format("{}s", f.duration_s)
                       : std::to_string(f.num_prompts),
      f.num_warmups > 0 ? fmt::format(" + {} warm-up", f.num_warmups) : "",
      std::isinf(rate) ? std::string("request rate inf")
                       : fmt::format("request rate {:g}/s, burstiness {:g}", rate, burstiness),
      f.max_concurrency > 0 ? fmt::format(", max concurrency {}", f.max_concurrency) : "");
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
  const auto start_time = std::chrono::system_clock::now();
  loadgen::LoadResult result;
  {
    ProgressLine line(progress, !f.quiet);
    result = loadgen::run_load(lo, samples, sink, &progress, &g_stop);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  if (builtin) {
    builtin->stop();
  }
  if (result.interrupted) {
    const auto cancelled =
        std::count_if(result.records.begin(), result.records.end(),
                      [](const auto& r) { return r.error_kind == metrics::ErrorKind::Cancelled; });
    log::warn("interrupted: {} requests finished, {} in flight were cancelled (counted as failed)",
              static_cast<std::int64_t>(result.records.size()) - cancelled, cancelled);
  }

  // ---- metrics and reports ----
  const auto summary = metrics::summarize(result.records, summary_options);
  auto copt = console_options(f, rate, percentile_metrics, summary_options.slo);
  // Load accuracy: requested vs achieved send rate, and connection reuse.
  if (std::isfinite(rate) && result.schedule_span_ns > 0 && summary.total > 1) {
    TimeNs first_sent = std::numeric_limits<TimeNs>::max();
    TimeNs last_sent = 0;
    std::int64_t sent = 0;
    for (const auto& r : result.records) {
      if (r.warmup || r.sent_ns < 0)
        continue;
      first_sent = std::min(first_sent, r.sent_ns);
      last_sent = std::max(last_sent, r.sent_ns);
      ++sent;
    }
    const double planned =
        static_cast<double>(result.planned - 1) / ns_to_s(result.schedule_span_ns);
    copt.load_lines.emplace_back("Scheduled send rate (req/s):", fmt::format("{:.2f}", planned));
    if (sent > 1 && last_sent > first_sent) {
      const double achieved = static_cast<double>(sent - 1) / ns_to_s(last_sent - first_sent);
      copt.load_lines.emplace_back("Achieved send rate (req/s):", fmt::format("{:.2f}", achieved));
      if (achieved < 0.95 * planned) {
        log::warn(
            "the client sent at {:.2f} req/s but the schedule asked for {:.2f} req/s: the "
            "client (or the concurrency cap) could not keep up",
            achieved, planned);
      }
    }
  }
  copt.load_lines.emplace_back("Connections opened:", std::to_string(result.connections_opened));
  if (tok) {
    copt.load_lines.emplace_back("Prompt token mismatches:",
                                 std::to_string(summary.prompt_token_mismatches));
    copt.load_lines.emplace_back("Output tokens counted locally:",
                                 std::to_string(summary.output_tokens_counted_locally));
  }
  report::print_console(stdout, summary, copt);
  if (summary.lateness_ms.count > 0 && summary.lateness_ms.max > 10.0 && std::isfinite(rate) &&
      f.max_concurrency <= 0) {
    log::warn(
        "the client sent requests up to {:.1f} ms late (mean {:.2f} ms): it could not keep "
        "up with the schedule; see lateness_ms in the results",
        summary.lateness_ms.max, summary.lateness_ms.mean);
  }

  if (f.save_result) {
    report::RunInfo info;
    info.date = fmt::format("{:%Y%m%d-%H%M%S}",
                            fmt::localtime(std::chrono::system_clock::to_time_t(start_time)));
    info.backend = f.backend;
    info.model_id = lo.model;
    info.tokenizer_id = f.tokenizer.empty() ? lo.model : f.tokenizer;
    info.base_url = lo.url.origin() + lo.url.path_prefix;
    info.endpoint = lo.endpoint;
    info.num_prompts = f.num_prompts;
    info.request_rate = rate;
    info.burstiness = burstiness;
    info.max_concurrency = static_cast<int>(f.max_concurrency);
    info.slo = summary_options.slo;
    info.seed = f.seed;
    info.tool_version = std::string(build_info::version());
    info.git_sha = std::string(build_info::git_sha());
    info.config_requested = requested_config(f);
    json eff = requested_config(f);
    eff["base_url"] = info.base_url;
    eff["endpoint"] = lo.endpoint;
    eff["model"] = lo.model;
    eff["chat"] = lo.chat;
    eff["continuous_usage"] = lo.continuous_usage;
    eff["client_threads"] =
        f.client_threads > 0 ? f.client_threads
                             : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    eff["builtin_server"] = nullptr;
    if (builtin && builtin_options.timing == server::Timing::Fixed) {
      eff["builtin_server"] = json{{"timing", "fixed"},
                                   {"ttft_ms", builtin_options.ttft_ms},
                                   {"itl_ms", builtin_options.itl_ms},
                                   {"tokens_per_chunk", builtin_options.tokens_per_chunk},
                                   {"max_num_seqs", builtin_options.max_num_seqs},
                                   {"model", builtin_options.model}};
    } else if (builtin) {
      const auto& e = builtin_options.engine->spec;
      eff["builtin_server"] =
          json{{"timing", "engine"},
               {"model", builtin_options.model},
               {"model_profile", e.model.name},
               {"gpu", e.gpu.name},
               {"tp", e.memory.tp},
               {"num_gpu_blocks", e.plan.num_gpu_blocks},
               {"block_size", e.plan.block_size},
               {"max_num_seqs", e.engine.scheduler.max_num_seqs},
               {"max_num_batched_tokens", e.engine.scheduler.max_num_batched_tokens},
               {"enable_prefix_caching", e.engine.scheduler.enable_prefix_caching},
               {"admission_window_ms", builtin_options.engine->admission_window_ms}};
    }
    eff["samples"] = samples.size();
    info.config_effective = eff;
    info.server_models = server_models;
    info.run_start_steady_ns = result.run_start_steady_ns;
    info.percentiles = percentiles;
    info.extra = {{"interrupted", result.interrupted},
                  {"connections_opened", result.connections_opened},
                  {"records_file", records_path.filename().string()},
                  {"prompt_token_mismatches", summary.prompt_token_mismatches},
                  {"output_tokens_counted_locally", summary.output_tokens_counted_locally}};
    if (f.save_detailed) {
      json ttfts = json::array();
      json in_lens = json::array();
      json out_lens = json::array();
      json errors = json::array();
      for (const auto& r : result.records) {
        if (r.warmup)
          continue;
        const auto lat = metrics::request_latency(r);
        ttfts.push_back(std::isnan(lat.ttft_ms) ? json(nullptr) : json(lat.ttft_ms / 1000.0));
        in_lens.push_back(metrics::input_token_count(r));
        out_lens.push_back(metrics::output_token_count(r));
        errors.push_back(r.error_message);
      }
      info.extra["ttfts"] = ttfts;
      info.extra["input_lens"] = in_lens;
      info.extra["output_lens"] = out_lens;
      info.extra["errors"] = errors;
    }
    const auto path = dir / (stem + ".json");
    report::write_json_file(path.string(), report::results_json(summary, info));
    log::info("results written to {}", path.string());
  }
  if (records_out && records_out->lost() > 0) {
    log::error(
        "{} of {} per-request records were lost writing {} ({}); the summary above "
        "counts every request",
        records_out->lost(), records_out->lost() + records_out->written(), records_path.string(),
        records_out->error());
    return 1;
  }
  if (records_out) {
    log::info("per-request records written to {}", records_path.string());
  }
  return (summary.failed > 0 || result.interrupted) ? 1 : 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "run", "Benchmark an OpenAI-compatible endpoint (the built-in server if no --base-url)");
  auto f = std::make_shared<RunFlags>();
  sub->add_option("--base-url", f->base_url,
                  "Server URL, e.g. http://127.0.0.1:8000 (default: start the built-in server)");
  sub->add_option("--host", f->host, "Server host, used with --port when no --base-url is given");
  sub->add_option("--port", f->port, "Server port (default 8000 when --host is given)");
  sub->add_option("--endpoint", f->endpoint,
                  "API path, default /v1/completions or /v1/chat/completions by --backend");
  sub->add_option("--backend", f->backend,
                  "Request shape: openai, openai-chat, vllm, sglang, llamacpp, deepseek")
      ->capture_default_str();
  sub->add_option("--model", f->model, "Model name (default: the first from /v1/models)");
  add_workload_flags(*sub, *f);
  sub->add_option("--duration", f->duration_s, "Send for this many seconds instead of a count");
  sub->add_option("--num-warmups", f->num_warmups, "Warm-up requests, excluded from results")
      ->capture_default_str();
  sub->add_flag("--ignore-eos", f->ignore_eos,
                "Ask the server to ignore EOS (vllm/sglang/llamacpp)");
  sub->add_option("--min-tokens", f->min_tokens, "min_tokens for backends that support it");
  sub->add_option("--temperature", f->temperature, "Sampling temperature sent with each request");
  sub->add_option("--top-p", f->top_p, "top_p sent with each request");
  sub->add_option("--extra-body", f->extra_body, "JSON object merged into every request body");
  sub->add_flag("--save-result", f->save_result, "Write the results JSON");
  sub->add_flag("--save-detailed", f->save_detailed, "Add per-request arrays to the results JSON");
  sub->add_option("--result-dir", f->result_dir,
                  "Folder for results; per-request JSONL is written there as requests finish");
  sub->add_option("--result-filename", f->result_filename,
                  "Results file name (default: backend-rate-concurrency-model-date.json); the "
                  "records go beside it as <stem>.records.jsonl");
  sub->add_option("--header", f->headers, "Extra request header 'Name: value' (repeatable)");
  sub->add_option("--api-key", f->api_key, "API key (default: $OPENAI_API_KEY); never logged");
  sub->add_flag("--insecure", f->insecure, "https: do not verify the server certificate");
  sub->add_option("--ca-cert", f->ca_cert,
                  "https: PEM file of the certificates to trust instead of the system's (e.g. "
                  "a self-signed server's own)")
      ->check(CLI::ExistingFile);
  sub->add_option("--client-threads", f->client_threads, "Client threads (default: all cores)");
  sub->add_option("--connect-timeout", f->connect_timeout_s, "Seconds")->capture_default_str();
  sub->add_option("--first-byte-timeout", f->first_byte_timeout_s, "Seconds")
      ->capture_default_str();
  sub->add_option("--idle-timeout", f->idle_timeout_s, "Seconds of stream silence")
      ->capture_default_str();
  sub->add_option("--timeout", f->timeout_s, "Seconds per request, end to end")
      ->capture_default_str();
  sub->add_flag("--no-stream", f->no_stream, "Non-streaming requests (TTFT = E2EL)");
  sub->add_flag("--continuous-usage", f->continuous_usage,
                "Ask for usage on every chunk (vLLM continuous_usage_stats)");
  sub->add_flag("--no-prewarm", f->no_prewarm, "Do not open connections before the run");
  sub->add_flag("--quiet,--disable-tqdm", f->quiet, "No live progress line");
  add_server_flags(*sub, f->server, "server-");
  return [f] { return execute_run(*f); };
}

}  // namespace llmbench::cli
