#include "llmbench/app/doctor.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/http/client.hpp"
#include "llmbench/http/url.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/protocol/dialect.hpp"
#include "llmbench/telemetry/nvml.hpp"
#include "llmbench/telemetry/prometheus.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iterator>
#include <memory>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace llmbench::app {

namespace {

using telemetry::ServerProbe;

constexpr std::chrono::seconds kFetchTimeout{10};

/// The ids of an OpenAI model list (`{"data": [{"id": ...}]}`); empty when the body has none.
std::vector<std::string> model_ids(const std::string& body) {
  std::vector<std::string> ids;
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
    return ids;
  for (const auto& m : j["data"]) {
    if (m.is_object() && m.contains("id") && m["id"].is_string())
      ids.push_back(m["id"].get<std::string>());
  }
  return ids;
}

/// GETs the model list into `p`; false when the server gave no answer at all.
bool probe_models(const http::Url& url, const protocol::Dialect& dialect,
                  const std::string& model_flag, ServerProbe& p) {
  const std::string path = p.models_path.empty() ? "/" : p.models_path;
  try {
    auto [status, body] =
        http::fetch_blocking(url, url.path_prefix + path, http::ClientOptions{}, kFetchTimeout);
    p.models_status = status;
    if (status == 200) {
      p.models = model_ids(body);
      if (p.models.empty()) {
        // A native model-info answer (TGI's /info, Triton's /v2) names the one model it serves.
        if (auto one = dialect.first_model(body))
          p.models.push_back(*one);
      }
      if (model_flag.empty())
        p.model = dialect.first_model(body).value_or("");
    }
  } catch (const Exception& e) {
    p.unreachable = fmt::format("GET {} failed: {}", path, e.what());
    return false;
  }
  return true;
}

/// Sends one streamed request as a one-request point of `session` and fills the stream, usage
/// and prompt fields of `p` from its record.
void probe_stream(const http::Url& url, protocol::Backend backend, const std::string& tokenizer,
                  Session& session, ServerProbe& p) {
  const protocol::Dialect& dialect = protocol::dialect(backend);
  RunPlan plan;
  plan.backend_name = std::string(protocol::to_string(backend));
  plan.num_prompts = 1;
  plan.max_concurrency = 1;
  plan.names.tokenizer = tokenizer;
  auto& lo = plan.load;
  lo.url = url;
  lo.endpoint = protocol::expand_endpoint(dialect.default_endpoint(/*stream=*/true), p.model);
  lo.backend = backend;
  lo.request.model = p.model;
  lo.request.chat = dialect.chat();
  lo.request.ignore_eos = true;
  lo.num_prompts = 1;
  lo.max_concurrency = 1;
  lo.client_threads = 1;
  lo.drain_timeout_s = 120;
  plan.report.rate = lo.request_rate;
  workload::Sample sample;
  sample.prompt = kDoctorPrompt;
  sample.output_len = kDoctorOutputTokens;
  plan.samples = std::make_shared<const std::vector<workload::Sample>>(1, sample);
  plan.progress = false;
  p.request_sent = true;
  RunResult result;
  try {
    result = session.run(plan);
  } catch (const Exception& e) {
    p.request_error = e.what();
    return;
  }
  if (result.records.empty()) {
    p.request_error = "no record came back";
    return;
  }
  const metrics::RequestRecord& r = result.records.front();
  if (r.error_kind != metrics::ErrorKind::None) {
    p.request_error = r.http_status > 0
                          ? fmt::format("{} (HTTP {}): {}", to_string(r.error_kind), r.http_status,
                                        r.error_message)
                          : fmt::format("{}: {}", to_string(r.error_kind), r.error_message);
    return;
  }
  if (r.chunks.empty()) {
    p.request_error = "the stream carried no output";
    return;
  }
  const TimeNs first = r.chunks.front().time_ns;
  const TimeNs last = r.chunks.back().time_ns;
  p.ttft_ms = static_cast<double>(first - r.sent_ns) / 1e6;
  p.e2el_ms = static_cast<double>(last - r.sent_ns) / 1e6;
  p.output_tokens = metrics::output_token_count(r);
  if (p.output_tokens > 1 && last > first)
    p.decode_tokens_per_s =
        static_cast<double>(p.output_tokens - 1) / (static_cast<double>(last - first) / 1e9);
  p.usage_sent = r.output_tokens >= 0;
  p.server_prompt_tokens = r.input_tokens;
  p.local_prompt_tokens = r.input_tokens_local;
}

void probe_metrics(const http::Url& url, ServerProbe& p) {
  const std::string path = url.path_prefix + "/metrics";
  p.metrics_url = url.origin() + path;
  try {
    auto [status, body] = http::fetch_blocking(url, path, http::ClientOptions{}, kFetchTimeout);
    p.metrics_status = status;
    if (status != 200)
      return;
    auto exposition = telemetry::parse_exposition(body, p.metrics_url);
    if (!exposition) {
      p.metrics_error = exposition.error().what();
      return;
    }
    p.metric_families = exposition->families.size();
    p.engine = telemetry::detect_engine(*exposition);
  } catch (const Exception& e) {
    p.metrics_error = e.what();
  }
}

}  // namespace

telemetry::ServerProbe probe_server(const DoctorPlan& f, Session& session) {
  ServerProbe p{.base_url = f.base_url,
                .backend = f.backend,
                .model = f.model,
                .tokenizer = f.tokenizer,
                .given = !f.base_url.empty(),
                .model_given = !f.model.empty()};
  const protocol::Backend backend = protocol::parse_backend(f.backend);
  const protocol::Dialect& dialect = protocol::dialect(backend);
  // Loaded now, so a bad --tokenizer fails before any check; the session keeps it for the probe.
  session.load_tokenizer(f.tokenizer, dialect.chat());
  if (!p.given)
    return p;
  auto url = http::parse_url(f.base_url);
  if (!url)
    throw Exception(Error{url.error().what(), "--base-url", -1});
  p.models_path = std::string(dialect.models_path());
  p.chat = dialect.chat();
  if (!probe_models(*url, dialect, f.model, p))
    return p;
  if (!p.model.empty())
    probe_stream(*url, backend, f.tokenizer, session, p);
  probe_metrics(*url, p);
  return p;
}

namespace {

void append(std::vector<telemetry::DoctorCheck>& out, std::vector<telemetry::DoctorCheck> more) {
  out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

/// The NVML lines: driver and CUDA versions, then every GPU's; all N/A without NVIDIA.
std::vector<telemetry::DoctorCheck> nvml_checks(const std::string& library) {
  std::string message;
  std::vector<std::string> notes;
  const auto nvml = telemetry::Nvml::open(library, message, notes);
  if (!nvml) {
    constexpr std::string_view kPrefix = "GPU telemetry off: ";
    if (message.rfind(kPrefix, 0) == 0)
      message.erase(0, kPrefix.size());
    return telemetry::no_nvml_checks(message);
  }
  const unsigned int count = nvml->device_count();
  auto checks =
      telemetry::driver_checks(nvml->driver_version(), nvml->cuda_driver_version(), count);
  for (unsigned int i = 0; i < count; ++i)
    append(checks,
           telemetry::gpu_checks(nvml->health(i), count, static_cast<unsigned int>(::getpid())));
  return checks;
}

}  // namespace

std::vector<telemetry::DoctorCheck> doctor_checks(const DoctorPlan& plan,
                                                  const std::string& nvml_library,
                                                  std::int64_t max_concurrency, Session& session) {
  std::vector<telemetry::DoctorCheck> checks = nvml_checks(nvml_library);
  const bool given = max_concurrency > 0;
  append(checks, telemetry::host_checks(telemetry::read_host_facts(
                     "/", given ? max_concurrency : kDefaultPlannedConcurrency, given)));
  append(checks, telemetry::server_checks(probe_server(plan, session)));
  return checks;
}

}  // namespace llmbench::app
