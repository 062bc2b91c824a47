#include "llmbench/app/detail/target.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/suggest.hpp"
#include "llmbench/http/client.hpp"
#include "llmbench/protocol/dialect.hpp"
#include "llmbench/protocol/redact.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace llmbench::app::detail {

namespace {

using nlohmann::json;

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

/// The ids of an OpenAI model list (`{"data": [{"id": ...}, ...]}`); empty for another shape.
std::vector<std::string> listed_ids(const json& models) {
  std::vector<std::string> ids;
  if (!models.is_object() || !models.contains("data") || !models.at("data").is_array())
    return ids;
  for (const auto& m : models.at("data")) {
    if (m.is_object() && m.contains("id") && m.at("id").is_string())
      ids.push_back(m.at("id").get<std::string>());
  }
  return ids;
}

/// A `--model` the server's list does not name: one request of one output token tells whether
/// the server serves it anyway (llama.cpp answers any name) or not (vLLM, SGLang, the built-in
/// server answer 404), so a doomed run stops here with the names the server lists, instead of
/// after sending its whole load. A probe that gets no answer is left to the run to report.
void check_model_listed(const loadgen::LoadOptions& lo, const json& models,
                        const std::string& models_path) {
  const auto ids = listed_ids(models);
  if (ids.empty() || std::find(ids.begin(), ids.end(), lo.request.model) != ids.end())
    return;
  protocol::GenRequest probe = lo.request;
  probe.prompt = "Hello";
  probe.messages.clear();
  probe.prompt_token_ids.clear();
  probe.max_tokens = 1;
  probe.min_tokens.reset();
  const std::string endpoint = protocol::expand_endpoint(lo.endpoint, lo.request.model);
  int status = 0;
  try {
    status = http::post_blocking(lo.url, lo.url.path_prefix + endpoint,
                                 protocol::build_request_body(lo.backend, probe), lo.client,
                                 std::chrono::seconds(10))
                 .first;
  } catch (const Exception&) {
    return;
  }
  if (status >= 200 && status < 300) {
    log::warn("--model '{}' is not in {}'s list, but the server answered a probe request for it",
              lo.request.model, models_path);
    return;
  }
  std::string listed;
  for (const auto& id : ids) listed += (listed.empty() ? "'" : ", '") + id + "'";
  throw Exception(Error{fmt::format("'{}' is not served here: {} lists {}{} (a one-token probe "
                                    "request for it answered HTTP {})",
                                    lo.request.model, models_path, listed,
                                    did_you_mean(lo.request.model, ids), status),
                        "--model", -1});
}

}  // namespace

RunningServer start_builtin(const BuiltinServerPlan& plan, const tokenizer::Tokenizer* tokenizer,
                            const tokenizer::ChatTemplate* chat_template) {
  server::ServerOptions options = plan.options;
  // With --tokenizer the built-in server counts prompts with it too, so its usage matches the
  // client's count (no prompt-token mismatches from the server's byte estimate).
  options.tokenizer = tokenizer;
  options.chat_template = chat_template;  // and renders chat with its template
  const auto& b = plan;
  auto server = std::make_unique<server::Server>(options);
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
  return RunningServer{.server = std::move(server), .url = http::parse_url(base_url).value()};
}

json discover_model(loadgen::LoadOptions& lo, const char* source, double ready_timeout_s) {
  json server_models = nullptr;
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
      server_models = json::parse(body, nullptr, false);
      if (server_models.is_discarded())
        server_models = body;
    } else {
      failure = fmt::format("GET {} answered HTTP {}", models_path, status);
      log::warn("{}", failure);
    }
  } catch (const Exception& e) {
    // No answer at all (refused, TLS not trusted, timeout): every request would fail the same
    // way, so the run stops here, once, with the reason (and for TLS, the way out).
    throw Exception(Error{fmt::format("cannot reach the server: GET {} failed: {}", models_path,
                                      protocol::Redactor(lo.secrets).redact(e.what())),
                          source, -1});
  }
  if (!lo.request.model.empty() && discovered_model)
    check_model_listed(lo, server_models, models_path);
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
  return server_models;
}

}  // namespace llmbench::app::detail
