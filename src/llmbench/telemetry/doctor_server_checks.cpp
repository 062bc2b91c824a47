// The server lines of `llmbench doctor` (doctor_checks.hpp `server_checks`), from what the CLI's
// probe found (app/doctor.cpp).

#include "llmbench/telemetry/doctor_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmbench::telemetry {

namespace {

constexpr std::array<std::string_view, 6> kServerCheckNames{
    "reachable", "models", "stream", "usage", "prompt_tokens", "metrics"};

DoctorCheck server_line(std::string_view name, CheckStatus status, std::string detail,
                        std::string fix = {}) {
  return DoctorCheck{.subject = "server",
                     .name = std::string(name),
                     .status = status,
                     .detail = std::move(detail),
                     .fix = std::move(fix)};
}

/// The lines after `first` all N/A for one reason.
void rest_not_applicable(std::vector<DoctorCheck>& out, std::string_view first,
                         const std::string& why) {
  bool after = false;
  for (const auto name : kServerCheckNames) {
    if (after)
      out.push_back(server_line(name, CheckStatus::NotApplicable, why));
    after = after || name == first;
  }
}

std::string listed_models(const std::vector<std::string>& models) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(models.size(), 5);
  for (std::size_t i = 0; i < shown; ++i) out += (i > 0 ? ", " : "") + models[i];
  if (models.size() > shown)
    out += fmt::format(" and {} more", models.size() - shown);
  return out;
}

DoctorCheck models_line(const ServerProbe& p) {
  if (p.models_path.empty())
    return server_line("models", CheckStatus::NotApplicable,
                       fmt::format("the {} backend has no model list", p.backend));
  if (p.models_status != 200)
    return server_line("models", CheckStatus::Warn,
                       fmt::format("GET {} answered HTTP {}", p.models_path, p.models_status),
                       "check the path in --base-url and the API key; give --model");
  if (p.models.empty())
    return server_line("models", CheckStatus::Warn,
                       fmt::format("GET {} listed no model", p.models_path), "give --model");
  const bool listed = std::find(p.models.begin(), p.models.end(), p.model) != p.models.end();
  if (p.model_given && !listed && p.request_sent && p.request_error.empty())
    return server_line("models", CheckStatus::Warn,
                       fmt::format("--model {} is not listed, yet the server answered it (a "
                                   "single-model server takes any name); {} lists {}",
                                   p.model, p.models_path, listed_models(p.models)),
                       "give --model as listed, so the results name the served model");
  if (p.model_given && !listed)
    return server_line("models", CheckStatus::Fail,
                       fmt::format("--model {} is not served; {} lists {}", p.model, p.models_path,
                                   listed_models(p.models)),
                       "give --model one of those");
  return server_line("models", CheckStatus::Pass,
                     fmt::format("{} lists {}", p.models_path, listed_models(p.models)));
}

DoctorCheck stream_line(const ServerProbe& p) {
  if (!p.request_error.empty())
    return server_line(
        "stream", CheckStatus::Fail,
        fmt::format("one streamed request to model {} failed: {}", p.model, p.request_error),
        "check --model, --backend (its endpoint) and the server's log");
  return server_line("stream", CheckStatus::Pass,
                     fmt::format("TTFT {:.1f} ms, {} output tokens in {:.1f} ms, decode {:.1f} "
                                 "tokens/s",
                                 p.ttft_ms, p.output_tokens, p.e2el_ms, p.decode_tokens_per_s));
}

DoctorCheck usage_line(const ServerProbe& p) {
  if (p.usage_sent)
    return server_line("usage", CheckStatus::Pass,
                       fmt::format("sends usage (prompt {}, completion {} tokens)",
                                   p.server_prompt_tokens, p.output_tokens));
  return server_line("usage", CheckStatus::Warn,
                     "no usage in the stream: output tokens will be counted by the client",
                     "give --tokenizer (the served model's tokenizer.json) so the local count is "
                     "exact");
}

DoctorCheck prompt_tokens_line(const ServerProbe& p) {
  if (!p.usage_sent || p.server_prompt_tokens < 0)
    return server_line("prompt_tokens", CheckStatus::NotApplicable,
                       "the server sent no prompt count");
  if (p.chat)
    return server_line("prompt_tokens", CheckStatus::NotApplicable,
                       "a chat endpoint: the server's count includes its chat template");
  if (p.tokenizer.empty() || p.local_prompt_tokens < 0)
    return server_line("prompt_tokens", CheckStatus::NotApplicable,
                       fmt::format("server counts {} prompt tokens; no --tokenizer to compare",
                                   p.server_prompt_tokens),
                       "give --tokenizer to check that prompt lengths are what the server sees");
  if (p.server_prompt_tokens == p.local_prompt_tokens)
    return server_line(
        "prompt_tokens", CheckStatus::Pass,
        fmt::format("server and --tokenizer both count {} prompt tokens", p.server_prompt_tokens));
  return server_line(
      "prompt_tokens", CheckStatus::Warn,
      fmt::format("server counts {} prompt tokens, --tokenizer {} counts {} ({:+d})",
                  p.server_prompt_tokens, p.tokenizer, p.local_prompt_tokens,
                  p.server_prompt_tokens - p.local_prompt_tokens),
      "point --tokenizer at the served model's tokenizer (a difference of 1 is often a BOS "
      "token only one side adds)");
}

DoctorCheck metrics_line(const ServerProbe& p) {
  const std::string fix =
      "enable it: llama-server --metrics, sglang --enable-metrics; vLLM and TGI serve it by "
      "default";
  if (p.metrics_status == 0)
    return server_line("metrics", CheckStatus::Warn,
                       fmt::format("GET {} failed: {}", p.metrics_url, p.metrics_error), fix);
  if (p.metrics_status != 200)
    return server_line("metrics", CheckStatus::Warn,
                       fmt::format("GET {} answered HTTP {}", p.metrics_url, p.metrics_status),
                       fix);
  if (!p.metrics_error.empty())
    return server_line("metrics", CheckStatus::Warn,
                       fmt::format("{} is not Prometheus text: {}", p.metrics_url, p.metrics_error),
                       "give --scrape-metrics the URL of the server's Prometheus endpoint");
  if (p.engine == Engine::Unknown)
    return server_line("metrics", CheckStatus::Warn,
                       fmt::format("{} metric families, none of a known engine", p.metric_families),
                       "run --scrape-metrics keeps the raw series, but maps no concept "
                       "(KV-cache usage, queue) for this server");
  return server_line(
      "metrics", CheckStatus::Pass,
      fmt::format("{} metric families; looks like {}", p.metric_families, engine_name(p.engine)));
}

}  // namespace

std::vector<DoctorCheck> server_checks(const ServerProbe& p) {
  std::vector<DoctorCheck> out;
  if (!p.given) {
    out.push_back(server_line("reachable", CheckStatus::NotApplicable, "no --base-url given",
                              "llmbench doctor --base-url http://HOST:PORT checks a server"));
    rest_not_applicable(out, "reachable", "no --base-url given");
    return out;
  }
  if (!p.unreachable.empty()) {
    out.push_back(server_line("reachable", CheckStatus::Fail,
                              fmt::format("{}: {}", p.base_url, p.unreachable),
                              fmt::format("is the server up and listening there? (curl {}{})",
                                          p.base_url, p.models_path)));
    rest_not_applicable(out, "reachable", "the server is unreachable");
    return out;
  }
  out.push_back(server_line("reachable", CheckStatus::Pass, fmt::format("{} answers", p.base_url)));
  out.push_back(models_line(p));
  if (!p.request_sent) {
    out.push_back(
        server_line("stream", CheckStatus::NotApplicable, "no model to ask for", "give --model"));
    out.push_back(server_line("usage", CheckStatus::NotApplicable, "no request sent"));
    out.push_back(server_line("prompt_tokens", CheckStatus::NotApplicable, "no request sent"));
  } else {
    out.push_back(stream_line(p));
    if (p.request_error.empty()) {
      out.push_back(usage_line(p));
      out.push_back(prompt_tokens_line(p));
    } else {
      out.push_back(server_line("usage", CheckStatus::NotApplicable, "the request failed"));
      out.push_back(server_line("prompt_tokens", CheckStatus::NotApplicable, "the request failed"));
    }
  }
  out.push_back(metrics_line(p));
  return out;
}

}  // namespace llmbench::telemetry
