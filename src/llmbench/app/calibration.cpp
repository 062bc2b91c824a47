#include "llmbench/app/calibration.hpp"

#include "llmbench/core/build_info.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/http/client.hpp"
#include "llmbench/http/url.hpp"
#include "llmbench/sim/calibration_file.hpp"
#include "llmbench/sim/comm_calibration.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace llmbench::app {

namespace {

using nlohmann::json;

constexpr std::chrono::milliseconds kFetchTimeout{10000};

/// GET `path` of `base`; the parsed JSON object of a 200 answer, else null.
json get_json(const http::Url& base, const std::string& path) {
  try {
    auto [status, body] =
        http::fetch_blocking(base, base.path_prefix + path, http::ClientOptions{}, kFetchTimeout);
    if (status != 200)
      return nullptr;
    json j = json::parse(body, nullptr, false);
    return j.is_object() ? j : json(nullptr);
  } catch (const Exception&) {
    return nullptr;
  }
}

std::optional<std::int64_t> get_int(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<std::int64_t>() < 1)
    return std::nullopt;
  return it->get<std::int64_t>();
}

/// llama.cpp `/props`: slots, context per slot, build.
bool read_llamacpp(const json& props, ServerFacts& facts) {
  const auto slots = get_int(props, "total_slots");
  if (!slots)
    return false;
  facts.engine = "llamacpp";
  facts.slots = slots;
  const auto settings = props.find("default_generation_settings");
  if (settings != props.end() && settings->is_object())
    facts.slot_context = get_int(*settings, "n_ctx");
  if (const auto b = props.find("build_info"); b != props.end() && b->is_string())
    facts.version = b->get<std::string>();
  facts.knobs.max_num_seqs = slots;
  if (facts.slot_context)
    facts.knobs.context_size = *facts.slot_context * *slots;
  return true;
}

/// SGLang `/get_server_info`: the server args that move the fit.
bool read_sglang(const json& info, ServerFacts& facts) {
  if (!info.contains("chunked_prefill_size"))
    return false;
  facts.engine = "sglang";
  if (const auto v = info.find("version"); v != info.end() && v->is_string())
    facts.version = v->get<std::string>();
  facts.knobs.max_num_batched_tokens = get_int(info, "chunked_prefill_size");
  facts.knobs.max_prefill_tokens = get_int(info, "max_prefill_tokens");
  facts.knobs.max_num_seqs = get_int(info, "max_running_requests");
  facts.knobs.stream_interval = get_int(info, "stream_interval");
  facts.knobs.num_continuous_decode_steps = get_int(info, "num_continuous_decode_steps");
  if (const auto r = info.find("disable_radix_cache"); r != info.end() && r->is_boolean())
    facts.knobs.enable_prefix_caching = !r->get<bool>();
  return true;
}

/// Writes `text` to `path` whole (truncating); throws `Exception` naming the file.
void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  out << text;
  out.close();
  if (!out)
    throw Exception(Error{"cannot write the calibration file", path, -1});
}

}  // namespace

ServerFacts discover_server(const std::string& base_url) {
  ServerFacts facts;
  const auto url = http::parse_url(base_url);
  if (!url)
    throw Exception(Error{url.error().message, "--base-url", -1});
  if (read_llamacpp(get_json(*url, "/props"), facts))
    return facts;
  if (read_sglang(get_json(*url, "/get_server_info"), facts))
    return facts;
  const json version = get_json(*url, "/version");
  if (const auto v = version.is_object() ? version.find("version") : version.end();
      version.is_object() && v != version.end() && v->is_string()) {
    facts.engine = "vllm";
    facts.version = v->get<std::string>();
  }
  return facts;
}

void write_calibration(const calib::Calibration& c, const sim::EngineSpec& spec,
                       const std::string& output) {
  std::string text = calib::calibration_json(c);
  std::optional<sim::CommModel> comm = spec.comm;
  if (!comm && std::filesystem::is_regular_file(output)) {
    try {
      comm = sim::load_calibration(output).comm;
    } catch (const Exception& e) {
      log::warn("{}: not kept ({})", output, e.what());
    }
  }
  if (comm) {
    log::info("keeping the comm section of {}", comm->origin);
    text = sim::write_comm_calibration(*comm, text, output);
  }
  write_text(output, text);
}

sim::CommModel comm_model(const telemetry::CommProbeResult& result,
                          const telemetry::CommProbeOptions& options,
                          const sim::CommFitOptions& fit) {
  sim::CommModel m;
  auto& s = m.measurement;
  s.tool = fmt::format("llmbench {} ({})", build_info::version(), build_info::git_sha());
  s.date = fmt::format(
      "{:%Y-%m-%d %H:%M:%S}",
      fmt::localtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
  s.nccl_version = result.setup.nccl_version;
  s.cuda_runtime_version = result.setup.cuda_runtime_version;
  s.cuda_driver_version = result.setup.cuda_driver_version;
  for (const auto& d : result.setup.devices) {
    s.devices.push_back(fmt::format("{}: {} (compute capability {}.{})", d.index, d.name,
                                    d.compute_capability / 10, d.compute_capability % 10));
  }
  s.nccl_env = result.setup.nccl_env;
  s.iters = options.iters;
  s.warmup_iters = options.warmup_iters;
  s.fit = fit;
  m.fits = sim::fit_comm(result.timings, fit);
  return m;
}

void write_comm_section(const std::string& path, const sim::CommModel& model) {
  std::string existing;
  if (std::filesystem::exists(path))
    existing = read_file(path, std::uint64_t{64} << 20).value();
  write_text(path, sim::write_comm_calibration(model, existing, path));
  log::info("{} the comm section of {} ({} fits){}", existing.empty() ? "wrote" : "replaced", path,
            model.fits.size(), existing.empty() ? "" : "; its other sections are kept");
}

std::string local_time_iso() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::localtime(now));
}

}  // namespace llmbench::app
