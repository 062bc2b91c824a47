#include "llmbench/cli/run_plan.hpp"

#include "llmbench/app/resources.hpp"
#include "llmbench/cli/config_json.hpp"
#include "llmbench/cli/flag_checks.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/vllm_flags.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/protocol/openai.hpp"
#include "llmbench/server/server.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <strings.h>
#include <thread>

namespace llmbench::cli {

namespace {

/// The checks of `run`'s own numbers (the workload's are in `check_workload_flags`).
void check_run_numbers(const RunFlags& f, const ResolveEnv& env) {
  if (f.num_prompts <= 0 && f.duration_s <= 0) {
    throw Exception(Error{"must be positive", "--num-prompts", -1});
  }
  if (f.max_concurrency == 0 || f.max_concurrency < -1) {
    throw Exception(Error{"must be a positive number of requests", "--max-concurrency", -1});
  }
  require_in_range(f.duration_s, 0, 1e7, "--duration", "a number of seconds in [0, 1e7]");
  check_window(f.window_s);
  if (f.num_warmups < 0) {
    throw Exception(Error{"must not be negative", "--num-warmups", -1});
  }
  if (f.output_len != -1 && f.output_len <= 0) {
    throw Exception(Error{"must be a positive number of tokens", "--output-len", -1});
  }
  // Timeouts are kept in whole milliseconds: below 1 ms a timeout would round to 0 (none).
  for (const auto& [value, flag] :
       {std::pair{f.connect_timeout_s, "--connect-timeout"},
        std::pair{f.first_byte_timeout_s, "--first-byte-timeout"},
        std::pair{f.idle_timeout_s, "--idle-timeout"}, std::pair{f.timeout_s, "--timeout"}}) {
    require_in_range(value, 0.001, 1e7, flag, "a number of seconds in [0.001, 1e7]");
  }
  const int max_threads = 64 * std::max(1, env.hardware_threads);
  if (f.client_threads < 0 || f.client_threads > max_threads) {
    throw Exception(
        Error{fmt::format("must be 0 (one per core) to {}", max_threads), "--client-threads", -1});
  }
  for (const auto& [value, flag] :
       {std::pair{f.temperature, "--temperature"}, std::pair{f.top_p, "--top-p"}}) {
    if (value && !std::isfinite(*value)) {
      throw Exception(Error{"must be a finite number", flag, -1});
    }
  }
}

/// The target: `--base-url`, or `--host`/`--port`, or (neither) the built-in server, whose
/// `--server-*` flags are then the only ones that may be given.
void check_target_flags(const RunFlags& f) {
  const bool host_or_port = was_given(f, "--host") || was_given(f, "--port");
  if (!f.base_url.empty() && host_or_port) {
    throw Exception(Error{"give either --base-url or --host/--port, not both",
                          was_given(f, "--host") ? "--host" : "--port", -1});
  }
  if (f.base_url.empty() && !host_or_port) {
    return;
  }
  const std::string prefix = std::string("--") + kServerFlagPrefix;
  for (const auto& flag : f.given) {
    if (flag.rfind(prefix, 0) == 0) {
      throw Exception(
          Error{"configures the built-in server, which is not started when a target "
                "is given with --base-url or --host",
                flag, -1});
    }
  }
}

/// Request headers and the API key: `--api-key`, else $OPENAI_API_KEY, sent as "Authorization:
/// Bearer KEY" unless a `--header` already sets Authorization (then not sent, with a warning).
void resolve_headers(const RunFlags& f, const ResolveEnv& env, app::RunPlan& plan) {
  auto& lo = plan.load;
  for (const auto& h : f.headers) {
    // "Name: value", or vLLM's KEY=VALUE: the first ':' or '=' ends the name (neither can be in
    // a field name: RFC 9110 section 5.1, token).
    const auto colon = h.find_first_of(":=");
    if (colon == std::string::npos || colon == 0) {
      throw Exception(Error{"expected 'Name: value' or KEY=VALUE", "--header", -1});
    }
    if (h.find_first_of("\r\n") != std::string::npos) {
      throw Exception(Error{"header lines must not contain CR or LF", "--header",
                            static_cast<std::int64_t>(h.find_first_of("\r\n"))});
    }
    // A field value excludes the whitespace (OWS: SP, HTAB) around it (RFC 9110 section 5.5).
    const std::string value(trim(std::string_view(h).substr(colon + 1), " \t"));
    lo.client.headers.emplace_back(h.substr(0, colon), value);
    lo.secrets.push_back(value);  // header values may be credentials: never echoed back
  }
  const bool explicit_auth = std::any_of(
      lo.client.headers.begin(), lo.client.headers.end(),
      [](const auto& kv) { return strcasecmp(kv.first.c_str(), "Authorization") == 0; });
  const std::string& api_key = f.api_key.empty() ? env.api_key : f.api_key;
  if (!api_key.empty() && explicit_auth) {
    plan.warnings.emplace_back(
        "an Authorization header was given with --header: not sending the API key");
  } else if (!api_key.empty()) {
    lo.client.headers.emplace_back("Authorization", "Bearer " + api_key);
    lo.secrets.push_back(api_key);
  }
}

/// `--ramp-up-strategy` and its rates, with vLLM's rules: both rates given, and no
/// `--request-rate` (the ramp sets the rate).
void resolve_ramp_up(const RunFlags& f, loadgen::LoadOptions& lo) {
  if (f.ramp_up_strategy.empty()) {
    if (f.ramp_up_start_rps || f.ramp_up_end_rps) {
      throw Exception(Error{"needs --ramp-up-strategy linear or exponential",
                            f.ramp_up_start_rps ? "--ramp-up-start-rps" : "--ramp-up-end-rps", -1});
    }
    return;
  }
  lo.ramp_up = workload::parse_ramp_up(f.ramp_up_strategy);
  if (!f.ramp_up_start_rps || !f.ramp_up_end_rps) {
    throw Exception(
        Error{"needs --ramp-up-start-rps and --ramp-up-end-rps", "--ramp-up-strategy", -1});
  }
  if (was_given(f, "--request-rate")) {
    throw Exception(Error{"the ramp sets the request rate: leave out --request-rate",
                          "--ramp-up-strategy", -1});
  }
  lo.ramp_up_start_rps = *f.ramp_up_start_rps;
  lo.ramp_up_end_rps = *f.ramp_up_end_rps;
  if (lo.duration_s > 0) {
    throw Exception(Error{"ramps over --num-prompts requests: give --num-prompts, not --duration",
                          "--ramp-up-strategy", -1});
  }
  // Checks the rates now, before any server is contacted.
  (void)workload::arrival_times(2,
                                workload::ArrivalOptions{.burstiness = lo.burstiness,
                                                         .ramp_up = lo.ramp_up,
                                                         .ramp_up_start_rps = lo.ramp_up_start_rps,
                                                         .ramp_up_end_rps = lo.ramp_up_end_rps});
}

/// Request shape, timeouts and load shape from the flags, with the request template every body
/// is built from (`LoadOptions::request`); the URL, headers and secrets are added by
/// `resolve_target` and `resolve_headers`.
void resolve_load(const RunFlags& f, const ResolveEnv& env, app::RunPlan& plan) {
  auto& lo = plan.load;
  lo.backend = protocol::parse_backend(f.backend);
  const bool stream = !f.no_stream && !f.disable_stream;
  // The default may hold `{model}` (Triton's path), filled in once the model is known.
  lo.endpoint =
      f.endpoint.empty() ? std::string(protocol::default_endpoint(lo.backend, stream)) : f.endpoint;
  lo.request = protocol::GenRequest{.model = f.model,
                                    .chat = protocol::is_chat_backend(lo.backend) ||
                                            lo.endpoint.find("chat") != std::string::npos,
                                    .stream = stream,
                                    .continuous_usage = f.continuous_usage,
                                    .ignore_eos = f.ignore_eos,
                                    .min_tokens = f.min_tokens,
                                    .temperature = f.temperature,
                                    .top_p = f.top_p,
                                    .top_k = f.top_k,
                                    .min_p = f.min_p,
                                    .presence_penalty = f.presence_penalty,
                                    .frequency_penalty = f.frequency_penalty,
                                    .repetition_penalty = f.repetition_penalty,
                                    .extra_body_json = f.extra_body};
  if (const std::string note = protocol::backend_name_note(f.backend); !note.empty()) {
    plan.warnings.push_back(note);
  }
  if (was_given(f, "--no-stream")) {
    plan.warnings.emplace_back(
        "--no-stream sends non-streaming requests (SGLang's --disable-stream); vllm bench "
        "serve's --no-stream means loading a Hugging Face dataset without streaming it");
  }
  const auto ms = [](double s) { return std::chrono::milliseconds(std::llround(s * 1000)); };
  lo.client = http::ClientOptions{.insecure = f.insecure,
                                  .ca_cert_file = f.ca_cert,
                                  .connect_timeout = ms(f.connect_timeout_s),
                                  .first_byte_timeout = ms(f.first_byte_timeout_s),
                                  .idle_timeout = ms(f.idle_timeout_s),
                                  .total_timeout = ms(f.timeout_s),
                                  .source_addresses = f.source_addresses};
  lo.num_prompts = f.num_prompts;
  lo.num_warmups = f.num_warmups;
  lo.max_concurrency = f.max_concurrency;
  lo.request_rate = plan.report.rate;
  lo.burstiness = plan.report.burstiness;
  lo.duration_s = f.duration_s;
  resolve_ramp_up(f, lo);
  // Stragglers get their own --timeout, plus a margin so a request's own timeout (recorded as
  // `timeout`) always fires before the end-of-run drain cancels it.
  lo.drain_timeout_s = f.timeout_s + 5;
  lo.seed = f.seed;
  lo.client_threads = f.client_threads > 0 ? f.client_threads : env.hardware_threads;
  lo.prewarm_connections = !f.no_prewarm;
  lo.multi_turn = f.multi_turn;
  lo.think_time_ms = f.think_time_ms;
  lo.think_time = loadgen::parse_think_time(f.think_time_dist);
  if (lo.multi_turn && !lo.request.chat) {
    throw Exception(
        Error{fmt::format("sends each turn with its history as chat messages: use a chat backend "
                          "(openai-chat, vllm-chat, sglang-oai-chat) or a chat endpoint, not {} {}",
                          f.backend, lo.endpoint),
              "--multi-turn", -1});
  }
  // Fail on a bad --extra-body now, before any server is started or contacted: the template
  // is a whole request body, without a prompt.
  (void)protocol::build_request_body(lo.backend, lo.request);
  if (f.extra_body.find("\"stream\"") != std::string::npos) {
    plan.warnings.emplace_back(
        "--extra-body sets \"stream\": use --no-stream instead, or every request will be parsed "
        "as the wrong kind of response");
  }
}

/// The target URL (`--base-url`, or http://host:port), or the built-in server's options.
void resolve_target(const RunFlags& f, const ResolveEnv& env, app::RunPlan& plan) {
  std::string base_url = f.base_url;
  // vLLM's defaults: --host 127.0.0.1, --port 8000 (either one names a server to measure).
  if (base_url.empty() && (!f.host.empty() || was_given(f, "--port"))) {
    base_url = fmt::format("http://{}:{}", f.host.empty() ? "127.0.0.1" : f.host,
                           f.port > 0 ? f.port : 8000);
  }
  if (base_url.empty()) {
    if (!protocol::default_endpoint(plan.load.backend).starts_with("/v1/")) {
      // sglang, tgi and trt-llm speak their servers' own APIs; the built-in server has only
      // OpenAI's.
      throw Exception(Error{fmt::format("the built-in server speaks the OpenAI API only, not "
                                        "{}'s: give --base-url, or an OpenAI-compatible "
                                        "--backend",
                                        protocol::to_string(plan.load.backend)),
                            "--backend", -1});
    }
    check_serve_flags(f.server, kServerFlagPrefix);
    // The built-in server serves the model `--model` names (it answers 404 to any other, as
    // vLLM does), else the profile's name.
    ServeFlags server = f.server;
    if (server.model.empty())
      server.model = f.model;
    plan.builtin = app::BuiltinServerPlan{
        .options = resolve_server_options(server, env.data_dir, kServerFlagPrefix),
        .engine_requested = f.server.engine};
    // The built-in server streams usage with every chunk when asked, as vLLM does.
    plan.load.request.continuous_usage =
        plan.load.request.continuous_usage || plan.load.backend == protocol::Backend::Vllm;
    return;
  }
  auto url = http::parse_url(base_url);
  if (!url) {
    throw Exception(Error{url.error().message, "--base-url", url.error().offset});
  }
  plan.load.url = *url;
  auto& prefix = plan.load.url.path_prefix;
  if (prefix.ends_with("/v1") && plan.load.endpoint.starts_with("/v1/")) {
    plan.warnings.emplace_back(
        "--base-url ends in /v1 and the endpoint starts with /v1/: dropping the /v1 of the URL "
        "(give the server root, as for vllm bench serve)");
    prefix.resize(prefix.size() - 3);
  }
}

/// Every request in flight holds a socket (two with the built-in server in this process): cap
/// the in-flight count below the descriptor limit rather than fail thousands of connects. The
/// cap is warned about now when it will bind (every request sent at once), else after the run
/// and only if the load reached it (`RunPlan::open_file_cap`): at 2 req/s it binds only if
/// requests last minutes.
void cap_in_flight(const RunFlags& f, const ResolveEnv& env, app::RunPlan& plan) {
  const std::int64_t fd_limit = env.open_file_limit;
  const std::int64_t fd_cap = std::max<std::int64_t>(1, (fd_limit - 128) / (plan.builtin ? 2 : 1));
  auto& cap = plan.load.max_concurrency;
  if (fd_limit > 0 && (cap < 0 || cap > fd_cap) && (f.duration_s > 0 || f.num_prompts > fd_cap)) {
    const bool all_at_once = std::isinf(plan.report.rate) && f.ramp_up_strategy.empty();
    if (all_at_once) {
      plan.warnings.push_back(
          fmt::format("capping requests in flight at {} (open-file limit {}; raise it with "
                      "ulimit -n)",
                      fd_cap, fd_limit));
    } else {
      plan.open_file_cap = fd_cap;
      plan.open_file_limit = fd_limit;
    }
    cap = fd_cap;
  }
}

app::OutputPlan resolve_output(const RunFlags& f) {
  app::OutputPlan o;
  o.append = f.append_result;
  o.save_result = f.save_result || f.append_result;
  o.save_detailed = f.save_detailed;
  o.save_records = o.save_result || !f.result_dir.empty();
  for (std::size_t i = 0; i < f.metadata.size(); ++i) {
    const std::string& item = f.metadata[i];
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Exception(Error{fmt::format("item {} ('{}') is not KEY=VALUE", i + 1, item),
                            "--metadata", eq == 0 ? 0 : -1});
    }
    o.metadata.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  o.dir = f.result_dir.empty() ? "." : f.result_dir;
  if (!f.result_filename.empty()) {
    o.stem = std::filesystem::path(f.result_filename).replace_extension().string();
  }
  o.label = f.label;
  o.history = f.history;
  o.report_path = f.report_path;
  return o;
}

}  // namespace

ResolveEnv ResolveEnv::current() {
  ResolveEnv env;
  if (const char* k = std::getenv("OPENAI_API_KEY"); k != nullptr) {
    env.api_key = k;
  }
  env.hardware_threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  env.open_file_limit = server::raise_open_file_limit();
  env.memory_bytes = app::physical_memory_bytes();
  env.data_dir = cli::data_dir();
  return env;
}

namespace {

/// `f` with vLLM's meanings: the older `--endpoint-type` read as `--backend` (both given must
/// agree), and `--served-model-name` as the name sent, `--model` then naming only the model
/// (vLLM loads its tokenizer from it; llmbench counts with `--tokenizer`).
RunFlags with_vllm_meanings(const RunFlags& given, std::vector<std::string>& warnings) {
  RunFlags f = given;
  if (!f.served_model_name.empty()) {
    if (!f.model.empty() && f.model != f.served_model_name && f.tokenizer.empty()) {
      warnings.push_back(fmt::format(
          "sending model '{}' (--served-model-name); --model {} is not loaded as a tokenizer: "
          "give --tokenizer for exact token counts",
          f.served_model_name, f.model));
    }
    f.model = f.served_model_name;
  }
  if (was_given(f, "--endpoint-type")) {
    if (was_given(f, "--backend") && f.backend != f.endpoint_type) {
      throw Exception(
          Error{fmt::format("says {} and --backend says {}: give one", f.endpoint_type, f.backend),
                "--endpoint-type", -1});
    }
    f.backend = f.endpoint_type;
  }
  return f;
}

}  // namespace

app::RunPlan resolve_run(const RunFlags& given, const ResolveEnv& env) {
  app::RunPlan plan;
  const RunFlags f = with_vllm_meanings(given, plan.warnings);
  if (std::string w = vllm_peer_flag_warning(f.given); !w.empty())
    plan.warnings.push_back(std::move(w));
  plan.requested = run_flags_json(f);
  plan.backend_name = f.backend;
  plan.num_prompts = f.num_prompts;
  plan.max_concurrency = f.max_concurrency;
  plan.names = workload_names(f);
  plan.report = report_setup(f);
  check_workload_flags(f);
  check_run_numbers(f, env);
  if (std::isfinite(plan.report.rate) && plan.report.rate < 1e-6) {
    throw Exception(Error{"must be at least 1e-6 requests/s (or inf)", "--request-rate", -1});
  }
  check_target_flags(f);
  resolve_load(f, env, plan);
  resolve_headers(f, env, plan);
  // A whole trace window is replayed: the trace decides the count (`load_workload`).
  const std::int64_t sample_count =
      whole_trace(f)
          ? workload::kMaxNumPrompts
          : (f.duration_s > 0 ? std::max<std::int64_t>(f.num_prompts, 1000) : f.num_prompts) +
                f.num_warmups;
  plan.dataset = dataset_options(f, sample_count, plan.load.request.chat);
  plan.dataset.data_dir = env.data_dir;
  if (!whole_trace(f)) {
    app::check_memory_budget(sample_count, plan.dataset, env.memory_bytes);
  }
  resolve_target(f, env, plan);
  cap_in_flight(f, env, plan);
  plan.output = resolve_output(f);
  plan.telemetry = resolve_telemetry(f.telemetry);
  plan.window_s = f.window_s;
  plan.num_gpus = f.num_gpus;
  plan.ready_check_timeout_s = f.ready_check_timeout_s;
  plan.progress = !f.quiet;
  return plan;
}

}  // namespace llmbench::cli
