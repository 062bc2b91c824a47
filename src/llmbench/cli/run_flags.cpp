#include "llmbench/cli/run_flags.hpp"

#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/report_command.hpp"
#include "llmbench/protocol/dialect.hpp"

#include <sstream>
#include <string>

namespace llmbench::cli {

void add_run_flags(CLI::App& app, RunFlags& f) {
  app.add_option("--base-url", f.base_url,
                 "Server URL, e.g. http://127.0.0.1:8000 (default: start the built-in server)");
  app.add_option("--host", f.host,
                 "Server host when no --base-url is given (default 127.0.0.1 when --port is)");
  app.add_option("--port", f.port, "Server port (default 8000 when --host is given)");
  app.add_option("--endpoint", f.endpoint,
                 "API path, default by --backend (/v1/completions, /v1/chat/completions, "
                 "/generate, /generate_stream, /v2/models/{model}/generate_stream); {model} is "
                 "replaced by the model");
  app.add_option("--backend", f.backend, "Request shape: " + protocol::backend_names())
      ->capture_default_str();
  app.add_option("--model", f.model,
                 "Model name sent in requests (default: the first from /v1/models; tgi: "
                 "model_id of /info; trt-llm: the Triton model, default ensemble); a name the "
                 "server does not list is checked with one probe request before the load");
  app.add_option("--served-model-name", f.served_model_name,
                 "The name sent in requests when --model names the model's repository (vLLM's "
                 "meaning)");
  add_workload_flags(app, f);
  app.add_option("--duration", f.duration_s, "Send for this many seconds instead of a count");
  app.add_option("--num-warmups", f.num_warmups, "Warm-up requests, excluded from results")
      ->capture_default_str();
  app.add_flag("--ignore-eos", f.ignore_eos,
               "Ask the server to ignore EOS (every backend but deepseek and tgi; trt-llm: "
               "min_length = max_tokens)");
  app.add_option("--min-tokens", f.min_tokens,
                 "min_tokens for backends that support it (sglang: min_new_tokens, trt-llm: "
                 "min_length)");
  app.add_option("--temperature", f.temperature, "Sampling temperature sent with each request");
  app.add_option("--top-p", f.top_p, "top_p sent with each request");
  app.add_option("--top-k", f.top_k, "top_k sent with each request (vLLM, SGLang, llama.cpp)");
  app.add_option("--min-p", f.min_p, "min_p sent with each request (vLLM, SGLang, llama.cpp)");
  app.add_option("--presence-penalty", f.presence_penalty, "presence_penalty (OpenAI field)");
  app.add_option("--frequency-penalty", f.frequency_penalty, "frequency_penalty (OpenAI field)");
  app.add_option("--repetition-penalty", f.repetition_penalty,
                 "repetition_penalty (vLLM, SGLang; llama.cpp's repeat_penalty)");
  app.add_option("--extra-body,--extra-request-body", f.extra_body,
                 "JSON object merged into every request body (SGLang's --extra-request-body)");
  app.add_option("--label", f.label,
                 "Label of the results, and the prefix of the default file name instead of the "
                 "backend (vLLM's --label)");
  app.add_option("--metadata", f.metadata,
                 "KEY=VALUE pairs recorded under \"metadata\" in the results (vLLM's "
                 "--metadata; vLLM puts them at the top level)")
      ->expected(1, -1);
  app.add_flag("--append-result", f.append_result,
               "Append the results as one JSON line to the results file instead of replacing "
               "it (vLLM's --append-result)");
  app.add_option("--ramp-up-strategy", f.ramp_up_strategy,
                 "Ramp the request rate from --ramp-up-start-rps to --ramp-up-end-rps over the "
                 "requests: linear or exponential (vLLM's flags and formula; not with "
                 "--request-rate or --duration)");
  app.add_option("--ramp-up-start-rps", f.ramp_up_start_rps, "Ramp: rate of the first request");
  app.add_option("--ramp-up-end-rps", f.ramp_up_end_rps, "Ramp: rate of the last request");
  app.add_option("--ready-check-timeout-sec", f.ready_check_timeout_s,
                 "Seconds to wait for the server's model list to answer before the run (vLLM's "
                 "name; vLLM waits 600 s by default, llmbench 0: fail at once)")
      ->capture_default_str();
  app.add_flag("--save-result", f.save_result, "Write the results JSON");
  app.add_flag("--save-detailed", f.save_detailed, "Add per-request arrays to the results JSON");
  app.add_option("--result-dir", f.result_dir,
                 "Folder for results; per-request JSONL is written there as requests finish");
  app.add_option("--result-filename", f.result_filename,
                 "Results file name (default: backend-rate-concurrency-model-date.json); the "
                 "records go beside it as <stem>.records.jsonl");
  app.add_option("--header", f.headers,
                 "Extra request header, 'Name: value' or vLLM's KEY=VALUE (repeatable)");
  app.add_option("--api-key", f.api_key, "API key (default: $OPENAI_API_KEY); never logged");
  app.add_flag("--insecure", f.insecure, "https: do not verify the server certificate");
  app.add_option("--ca-cert", f.ca_cert,
                 "https: PEM file of the certificates to trust instead of the system's (e.g. a "
                 "self-signed server's own)")
      ->check(CLI::ExistingFile);
  app.add_option("--source-address", f.source_addresses,
                 "Local IP addresses to open connections from, in turn (A,B,...): past one "
                 "address's ephemeral ports (docs/distributed.md)")
      ->delimiter(',');
  app.add_option("--client-threads", f.client_threads, "Client threads (default: all cores)");
  app.add_option("--connect-timeout", f.connect_timeout_s,
                 "Seconds to open a connection (TCP and TLS) before the request fails")
      ->capture_default_str();
  app.add_option("--first-byte-timeout", f.first_byte_timeout_s,
                 "Seconds from sending a request to its response headers before it fails")
      ->capture_default_str();
  app.add_option("--idle-timeout", f.idle_timeout_s,
                 "Seconds of stream silence (no bytes) before a request fails")
      ->capture_default_str();
  app.add_option("--timeout", f.timeout_s, "Seconds per request, end to end")
      ->capture_default_str();
  app.add_flag("--no-stream", f.no_stream,
               "Non-streaming requests (TTFT = E2EL). Not vLLM's --no-stream, which loads a "
               "Hugging Face dataset without streaming it: llmbench warns when it is given");
  app.add_flag("--disable-stream", f.disable_stream,
               "SGLang's name for --no-stream (non-streaming requests)");
  app.add_flag("--continuous-usage", f.continuous_usage,
               "Ask for usage on every chunk (vLLM continuous_usage_stats)");
  app.add_flag("--no-prewarm", f.no_prewarm, "Do not open connections before the run");
  app.add_flag("--quiet,--disable-tqdm", f.quiet, "No live progress line");
  add_window_flag(app, f.window_s);
  app.add_option("--num-gpus", f.num_gpus,
                 "GPUs behind the server, for per-GPU figures (default: the built-in engine's "
                 "tp x dp, else the NVML devices sampled for a server on this host; unknown: "
                 "figures are per server)")
      ->check(CLI::PositiveNumber);
  add_report_flag(app, f.report_path);
  app.add_option("--history", f.history,
                 "Record the run in this SQLite run history (llmbench history; docs/compare.md)");
  add_server_flags(app, f.server, kServerFlagPrefix);
  add_telemetry_flags(app, f.telemetry);
  std::string footer = "Backends (--backend):\n";
  std::istringstream lines(protocol::backend_help());
  for (std::string line; std::getline(lines, line);) footer += "  " + line + "\n";
  app.footer(footer);
}

}  // namespace llmbench::cli
