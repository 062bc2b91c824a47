// Request routing and the small endpoints of the simulated server: /health, /v1/models,
// /metrics, and the 404/405/500 answers.

#include "llmbench/core/log.hpp"
#include "llmbench/server/detail/state.hpp"
#include "llmbench/server/openai_format.hpp"
#include "llmbench/server/prometheus.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <exception>
#include <iterator>
#include <string>
#include <string_view>

namespace llmbench::server::detail {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

/// `GET /v1/models` body (OpenAI "List models"; vLLM adds root, parent, max_model_len).
std::string models_body(const ServerState& state) {
  nlohmann::json model = {{"id", state.options.model},
                          {"object", "model"},
                          {"created", state.created_s},
                          {"owned_by", "llmbench"},
                          {"root", state.options.model},
                          {"parent", nullptr},
                          {"max_model_len", state.options.max_model_len},
                          {"permission", nlohmann::json::array()}};
  return nlohmann::json{{"object", "list"}, {"data", nlohmann::json::array({model})}}.dump();
}

/// The engine's families (timing engine): vLLM V1 names, types and buckets
/// (`vllm/v1/metrics/loggers.py`; SIMULATOR-NOTES.md §3).
void engine_metrics(std::string& out, const ServerState& state, const std::string& labels) {
  const auto& e = state.engine->metrics();
  const auto& cfg = state.engine->settings().spec.engine;
  constexpr auto relaxed = std::memory_order_relaxed;
  auto one = [&](std::string_view name, std::string_view type, std::string_view help,
                 double value) {
    append_family_header(out, name, type, help);
    append_sample(out, name, labels, value);
  };
  const double usage = e.kv_usage.load(relaxed);
  one("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", usage);
  one("vllm:gpu_cache_usage_perc", "gauge",
      "GPU KV-cache usage. 1 means 100 percent usage (deprecated alias).", usage);
  append_family_header(out, "vllm:cache_config_info", "gauge",
                       "Information of the LLMEngine CacheConfig.");
  append_sample(out, "vllm:cache_config_info",
                fmt::format("block_size=\"{}\",enable_prefix_caching=\"{}\",num_gpu_blocks=\"{}\","
                            "{}",
                            cfg.block_size, cfg.scheduler.enable_prefix_caching ? "True" : "False",
                            cfg.num_gpu_blocks, labels),
                1);
  one("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.",
      static_cast<double>(e.preemptions.load(relaxed)));
  // Swap preemption (`--swap-space` > 0): vLLM V1 has no swap metric, so these carry our prefix.
  append_family_header(out, "llmbench:num_swaps_total", "counter",
                       "Cumulative number of requests swapped out to or in from CPU memory.");
  append_sample(out, "llmbench:num_swaps_total", "direction=\"out\"," + labels,
                static_cast<double>(e.swap_outs.load(relaxed)));
  append_sample(out, "llmbench:num_swaps_total", "direction=\"in\"," + labels,
                static_cast<double>(e.swap_ins.load(relaxed)));
  one("llmbench:num_recompute_fallbacks_total", "counter",
      "Preemptions that recomputed because the CPU swap space was full.",
      static_cast<double>(e.recompute_fallbacks.load(relaxed)));
  one("vllm:prefix_cache_queries_total", "counter",
      "Prefix cache queries, in terms of number of queried tokens.",
      static_cast<double>(e.prefix_queries.load(relaxed)));
  one("vllm:prefix_cache_hits_total", "counter",
      "Prefix cache hits, in terms of number of cached tokens.",
      static_cast<double>(e.prefix_hits.load(relaxed)));
  auto histogram = [&](std::string_view name, std::string_view help, const Histogram& h) {
    append_family_header(out, name, "histogram", help);
    h.write(out, name, labels);
  };
  histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
            e.ttft);
  histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
            e.itl);
  histogram("vllm:time_per_output_token_seconds",
            "Histogram of time per output token in seconds (deprecated alias of "
            "inter_token_latency_seconds).",
            e.itl);
  histogram("vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.", e.tpot);
  histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
            e.e2e);
  histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
            e.iteration_tokens);
  // Whether the server keeps the simulated clock: not a vLLM metric, hence our prefix.
  one("llmbench:engine_steps_total", "counter",
      "Engine steps run in real time (counted at their end, as the lateness histogram).",
      static_cast<double>(e.steps.load(relaxed)));
  one("llmbench:engine_late_steps_total", "counter",
      "Engine steps whose end (token emission) was applied more than 5 ms after its simulated "
      "time: the server could not keep up.",
      static_cast<double>(e.late_steps.load(relaxed)));
  histogram("llmbench:engine_step_lateness_seconds",
            "How long after its simulated end each engine step's tokens were handed to the "
            "HTTP streams.",
            e.step_lateness);
}

/// `GET /metrics`: Prometheus text exposition format 0.0.4 with vLLM's metric names, types and
/// label `model_name` (vllm/v1/metrics/loggers.py). Fixed timing exposes the request gauges,
/// token counters and the per-request phase/token histograms; engine timing adds KV-cache usage,
/// prefix-cache and preemption counters and the engine's latency histograms.
std::string metrics_body(const ServerState& state) {
  const std::string labels = "model_name=\"" + prometheus_label_value(state.options.model) + "\"";
  std::string out;
  auto metric = [&](std::string_view name, std::string_view type, std::string_view help,
                    std::string_view extra_labels, std::int64_t value) {
    append_family_header(out, name, type, help);
    append_sample(out, name, std::string(extra_labels) + labels, static_cast<double>(value));
  };
  constexpr auto relaxed = std::memory_order_relaxed;
  const bool engine = state.engine != nullptr;
  const std::int64_t running =
      engine ? state.engine->metrics().running.load(relaxed) : state.pool.running();
  const std::int64_t waiting =
      engine ? state.engine->metrics().waiting.load(relaxed) : state.pool.waiting();
  // Engine: prompt tokens count once a request's prefill is done and generated tokens as the
  // engine emits them (vLLM's iteration stats); fixed: at admission and as written.
  const std::int64_t prompt = engine ? state.engine->metrics().prompt_tokens.load(relaxed)
                                     : state.prompt_tokens_total.load(relaxed);
  const std::int64_t generation = engine ? state.engine->metrics().generation_tokens.load(relaxed)
                                         : state.generation_tokens_total.load(relaxed);
  metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", "",
         running);
  metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", "",
         waiting);
  metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", "", prompt);
  metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", "",
         generation);
  // vLLM V1 counts every finished request by its finish reason ("stop", "length", "abort"): the
  // simulator always runs to max_tokens ("length"); a client that went away is an abort.
  metric("vllm:request_success_total", "counter", "Count of successfully processed requests.",
         "finished_reason=\"length\",", state.success_total.load(relaxed));
  append_sample(out, "vllm:request_success_total", "finished_reason=\"abort\"," + labels,
                static_cast<double>(engine ? state.engine->metrics().aborted.load(relaxed)
                                           : state.cancelled_total.load(relaxed)));
  if (engine)
    engine_metrics(out, state, labels);
  state.request_histograms.write(out, labels);
  return out;
}

net::awaitable<void> send_error(http::ResponseWriter& writer, bhttp::status status,
                                std::string_view message, std::string_view type) {
  co_await writer.send(status, format_error(message, type, "", static_cast<int>(status)));
}

net::awaitable<void> method_not_allowed(http::ResponseWriter& writer, std::string_view allow,
                                        std::string_view method, std::string_view path) {
  http::ServerResponse response{bhttp::status::method_not_allowed, 11};
  response.set(bhttp::field::allow, allow);
  response.set(bhttp::field::content_type, "application/json");
  response.body() = format_error(fmt::format("method {} not allowed on {}", method, path),
                                 "invalid_request_error", "", 405);
  co_await writer.send(std::move(response));
}

net::awaitable<void> route(ServerState& state, http::ServerRequest& request,
                           http::ResponseWriter& writer) {
  std::string_view path = request.target();
  path = path.substr(0, path.find('?'));
  const auto method = request.method();
  const bool get = method == bhttp::verb::get;

  if (path == "/v1/completions" || path == "/v1/chat/completions") {
    if (method != bhttp::verb::post) {
      co_await method_not_allowed(writer, "POST", request.method_string(), path);
      co_return;
    }
    co_await serve_generation(state, request, writer, path == "/v1/chat/completions");
  } else if (path == "/health" || path == "/v1/models" || path == "/metrics") {
    if (!get) {
      co_await method_not_allowed(writer, "GET", request.method_string(), path);
    } else if (path == "/health") {
      co_await writer.send(bhttp::status::ok, "{\"status\":\"ok\"}");
    } else if (path == "/v1/models") {
      co_await writer.send(bhttp::status::ok, models_body(state));
    } else {
      co_await writer.send(bhttp::status::ok, metrics_body(state),
                           "text/plain; version=0.0.4; charset=utf-8");
    }
  } else {
    co_await send_error(writer, bhttp::status::not_found,
                        fmt::format("no route for {} {}", request.method_string(), path),
                        "not_found_error");
  }
}

}  // namespace

net::awaitable<void> handle_request(ServerState& state, http::ServerRequest& request,
                                    http::ResponseWriter& writer) {
  // Never throw across the handler boundary (STYLE.md "server handlers"): answer 500 instead.
  std::string failure;
  try {
    co_await route(state, request, writer);
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown exception";
  }
  if (failure.empty())
    co_return;
  log::error("server: {} {} failed: {}", request.method_string(),
             std::string_view(request.target()), failure);
  if (writer.state() == http::ResponseWriter::State::Idle) {
    writer.set_keep_alive(false);
    co_await send_error(writer, bhttp::status::internal_server_error, "internal server error",
                        "internal_server_error");
  }
}

}  // namespace llmbench::server::detail
