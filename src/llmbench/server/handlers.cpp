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
  // Engine: prompt tokens count once a request's prefill is done and generated tokens as the
  // engine emits them (vLLM's iteration stats); fixed: at admission and as written.
  const Gauges g = state.timing->gauges();
  metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", "",
         g.running);
  metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", "",
         g.waiting);
  metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", "",
         g.prompt_tokens);
  metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", "",
         g.generation_tokens);
  // vLLM V1 counts every finished request by its finish reason ("stop", "length", "abort"): the
  // simulator always runs to max_tokens ("length"); a client that went away is an abort.
  metric("vllm:request_success_total", "counter", "Count of successfully processed requests.",
         "finished_reason=\"length\",", state.success_total.load(std::memory_order_relaxed));
  append_sample(out, "vllm:request_success_total", "finished_reason=\"abort\"," + labels,
                static_cast<double>(g.aborted));
  state.timing->append_metrics(out, labels);
  if (!state.options.faults.rules.empty()) {
    // Not a vLLM metric, hence our prefix (docs/faults.md).
    append_family_header(out, "llmbench:faults_injected_total", "counter",
                         "Generation requests given each injected fault (llmbench serve --fault).");
    for (const auto& info : kFaultKinds) {
      append_sample(
          out, "llmbench:faults_injected_total", fmt::format("kind=\"{}\",{}", info.name, labels),
          static_cast<double>(state.faults_injected[static_cast<std::size_t>(info.kind)].load(
              std::memory_order_relaxed)));
    }
  }
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
