#include "llmbench/report/run_config.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <string_view>
#include <utility>

namespace llmbench::report {

namespace {

using nlohmann::json;

/// Settings left out of the knobs: outputs, seeds, timeouts, telemetry switches and sizes the
/// engine derives from other knobs. They differ between runs of one configuration.
constexpr std::array<std::string_view, 37> kNotKnobs{"seed",
                                                     "samples",
                                                     "result_dir",
                                                     "result_filename",
                                                     "save_result",
                                                     "save_detailed",
                                                     "append_result",
                                                     "quiet",
                                                     "report",
                                                     "history",
                                                     "label",
                                                     "api_key_given",
                                                     "ca_cert",
                                                     "insecure",
                                                     "port",
                                                     "host",
                                                     "metadata",
                                                     "metric_percentiles",
                                                     "percentile_metrics",
                                                     "client_threads",
                                                     "connect_timeout",
                                                     "idle_timeout",
                                                     "first_byte_timeout",
                                                     "drain_timeout",
                                                     "timeout",
                                                     "header_names",
                                                     "window_s",
                                                     "gpu_telemetry",
                                                     "scrape_metrics",
                                                     "scrape_interval_ms",
                                                     "nvml_library",
                                                     "gpu_devices",
                                                     "timeline_interval",
                                                     "kv_bytes_per_gpu",
                                                     "weight_bytes_per_gpu",
                                                     "num_cpu_blocks",
                                                     "num_gpu_blocks"};

/// Knobs that belong to one `--dataset-name` (docs/workloads.md): left out for the others.
struct DatasetPrefix {
  std::string_view prefix;
  std::string_view dataset;
};
constexpr std::array<DatasetPrefix, 6> kDatasetPrefixes{
    {{"random_", "random"},
     {"sonnet_", "sonnet"},
     {"gsp_", "generated-shared-prefix"},
     {"prefix_repetition_", "prefix_repetition"},
     {"long_doc_", "long-document"},
     {"trace_", "trace"}}};

/// The knobs listed first in differences: what a user changes most often.
constexpr std::array<std::string_view, 12> kFirstKnobs{"model",
                                                       "backend",
                                                       "gpu",
                                                       "tp",
                                                       "data_parallel_size",
                                                       "max_num_seqs",
                                                       "max_num_batched_tokens",
                                                       "dataset_name",
                                                       "max_concurrency",
                                                       "request_rate",
                                                       "scheduler",
                                                       "llmbench"};

std::string string_at(const json& j, std::string_view key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_at(const json& j, std::string_view key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
}

/// The value at `key` as text, or "" when it is missing or null.
std::string text_at(const json& j, std::string_view key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::string() : value_text(*it);
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

/// The effective configuration the run used, else the one asked for (older files).
const json& config_of(const json& results) {
  static const json kEmpty = json::object();
  for (const char* key : {"config_effective", "config_requested"}) {
    const auto it = results.find(key);
    if (it != results.end() && it->is_object() && !it->empty())
      return *it;
  }
  return kEmpty;
}

bool kept_knob(std::string_view key, const json& config) {
  if (std::find(kNotKnobs.begin(), kNotKnobs.end(), key) != kNotKnobs.end())
    return false;
  const std::string dataset = string_at(config, "dataset_name");
  for (const auto& d : kDatasetPrefixes) {
    if (starts_with(key, d.prefix) && dataset != d.dataset)
      return false;
  }
  const bool multi_turn = config.value("multi_turn", false);
  return multi_turn || (key != "max_turns" && !starts_with(key, "think_time_"));
}

void flatten(const json& object, const std::string& prefix, const json& config,
             std::map<std::string, std::string>& out) {
  for (const auto& [key, value] : object.items()) {
    if (!kept_knob(key, config))
      continue;
    if (value.is_object()) {
      // The built-in server's settings are the engine's knobs, under their own names.
      flatten(value, key == "builtin_server" || key == "server" ? prefix : prefix + key + ".",
              config, out);
      continue;
    }
    if (prefix.empty() && key == "model" && out.count("model") != 0)
      continue;
    out[prefix + key] = value_text(value);
  }
}

/// The engine spec of a simulated run (the top level of its configuration) or of the built-in
/// server (`builtin_server`): "vllm-v1 scheduler, deepseek-r1 on 8 × h200 (TP8 DP1 EP1), ...".
std::string engine_text(const json& e) {
  if (string_at(e, "timing") == "fixed") {
    return fmt::format(
        "fixed timing: TTFT {} ms, ITL {} ms, {} token(s) per chunk, max_num_seqs {}",
        text_at(e, "ttft_ms"), text_at(e, "itl_ms"), text_at(e, "tokens_per_chunk"),
        text_at(e, "max_num_seqs"));
  }
  const double tp = number_at(e, "tp");
  const double dp = number_at(e, "data_parallel_size");
  std::string out = fmt::format(
      "{} on {} × {} (TP{} DP{} EP{})", text_at(e, "model_profile"),
      value_text(json(tp * (std::isnan(dp) ? 1.0 : dp))), text_at(e, "gpu"), text_at(e, "tp"),
      text_at(e, "data_parallel_size"), text_at(e, "expert_parallel_size"));
  for (const char* key : {"max_num_seqs", "max_num_batched_tokens", "block_size",
                          "gpu_memory_utilization", "num_gpu_blocks"}) {
    if (const std::string v = text_at(e, key); !v.empty())
      out += fmt::format(", {} {}", key, v);
  }
  if (e.contains("enable_prefix_caching"))
    out += e.value("enable_prefix_caching", false) ? ", prefix caching on" : ", prefix caching off";
  if (const std::string s = text_at(e, "scheduler"); !s.empty())
    out += fmt::format(", {} scheduler", s);
  return out;
}

/// "random: 1024 in / 256 out tokens (range ratio 0); measured 1024 in / 256 out per request".
std::string dataset_text(const json& results, const json& c) {
  const std::string name = string_at(c, "dataset_name");
  std::string out = name.empty() ? std::string("not recorded") : name;
  if (const std::string path = string_at(c, "dataset_path"); !path.empty())
    out += " (" + std::filesystem::path(path).filename().string() + ")";
  std::string asked;
  const bool lengths =
      !text_at(c, name == "random" ? "random_input_len" : "sonnet_input_len").empty();
  if (name == "random" && lengths) {
    asked = fmt::format("{} in / {} out tokens (range ratio {})", text_at(c, "random_input_len"),
                        text_at(c, "random_output_len"), text_at(c, "random_range_ratio"));
  } else if (name == "sonnet" && lengths) {
    asked = fmt::format("{} in / {} out tokens", text_at(c, "sonnet_input_len"),
                        text_at(c, "sonnet_output_len"));
  } else if (name == "generated-shared-prefix") {
    asked = fmt::format("{} system + {} question tokens in / {} out",
                        text_at(c, "gsp_system_prompt_len"), text_at(c, "gsp_question_len"),
                        text_at(c, "gsp_output_len"));
  } else if (name == "prefix_repetition") {
    asked = fmt::format("{} + {} tokens in / {} out", text_at(c, "prefix_repetition_prefix_len"),
                        text_at(c, "prefix_repetition_suffix_len"),
                        text_at(c, "prefix_repetition_output_len"));
  } else if (name == "long-document") {
    asked = fmt::format("{} tokens in", text_at(c, "long_doc_input_len"));
  }
  if (const double fixed = number_at(c, "output_len"); fixed > 0)
    asked += fmt::format("{}output fixed at {} tokens", asked.empty() ? "" : ", ", fixed);
  if (!asked.empty())
    out += ": " + asked;
  const double completed = number_at(results, "completed");
  const double in = number_at(results, "total_input_tokens");
  const double outputs = number_at(results, "total_output_tokens");
  if (completed > 0 && !std::isnan(in) && !std::isnan(outputs)) {
    out += fmt::format("; measured mean {:.0f} in / {:.0f} out per request", in / completed,
                       outputs / completed);
  }
  return out;
}

std::string load_text(const json& results, const json& c) {
  std::string prompts = text_at(results, "num_prompts");
  if (prompts.empty())
    prompts = text_at(c, "num_prompts");
  std::string rate = text_at(results, "request_rate");
  if (rate.empty())
    rate = text_at(c, "request_rate");
  std::string out = prompts.empty() ? std::string() : prompts + " prompts, ";
  if (rate == "inf" || rate.empty()) {
    out += "all sent at once";
  } else {
    const std::string burst = text_at(results, "burstiness");
    out += fmt::format(
        "{} req/s{}", rate,
        burst == "1" || burst.empty() ? " (Poisson)" : fmt::format(" (burstiness {})", burst));
  }
  const std::string cap = text_at(results, "max_concurrency");
  out += cap.empty() || cap == "-1" ? ", no concurrency cap" : ", max concurrency " + cap;
  if (const double d = number_at(c, "duration"); d > 0)
    out += fmt::format(", for {} s", value_text(json(d)));
  if (c.value("multi_turn", false))
    out += fmt::format(", multi-turn (up to {} turns)", text_at(c, "max_turns"));
  return out;
}

/// "20261206-021113" (vLLM's `date`) → "2026-12-06 02:11:13".
std::string date_text(const std::string& date) {
  if (date.size() == 15 && date[8] == '-') {
    return fmt::format("{}-{}-{} {}:{}:{}", date.substr(0, 4), date.substr(4, 2), date.substr(6, 2),
                       date.substr(9, 2), date.substr(11, 2), date.substr(13, 2));
  }
  return date;
}

/// The engine line and the GPU count, by the kind of target.
void engine_and_gpus(const json& results, const json& c, RunConfig& out) {
  const bool simulated =
      results.value("simulated", false) || string_at(results, "backend") == "simulate";
  const json* engine = simulated ? &c : nullptr;
  if (const auto it = c.find("builtin_server"); it != c.end() && it->is_object())
    engine = &*it;
  std::string text;
  if (engine != nullptr) {
    text =
        (simulated ? "simulated engine: " : "built-in simulated server, ") + engine_text(*engine);
    const double tp = number_at(*engine, "tp");
    const double dp = number_at(*engine, "data_parallel_size");
    if (tp > 0) {
      out.gpus = tp * (dp > 0 ? dp : 1.0);
      out.gpus_source = "tp × dp";
    }
  } else {
    const json* sm = nullptr;
    if (const auto t = results.find("telemetry"); t != results.end() && t->is_object()) {
      if (const auto s = t->find("server_metrics"); s != t->end() && s->is_object())
        sm = &*s;
    }
    text = sm != nullptr ? fmt::format("{} (read from its /metrics)", string_at(*sm, "engine"))
                         : std::string("not recorded (run with --scrape-metrics to read it)");
    const json& models = results.value("server_models", json::object());
    if (const auto d = models.find("data");
        d != models.end() && d->is_array() && !d->empty() && d->front().is_object()) {
      const json& m = d->front();
      if (const std::string owner = string_at(m, "owned_by"); !owner.empty())
        text += ", served by " + owner;
      if (const std::string len = text_at(m, "max_model_len"); !len.empty())
        text += ", max_model_len " + len;
    }
  }
  if (std::isnan(out.gpus) && number_at(results, "num_gpus") > 0) {
    out.gpus = number_at(results, "num_gpus");
    out.gpus_source = "num_gpus";
  }
  if (std::isnan(out.gpus)) {
    const json gpu = results.value("/telemetry/gpu"_json_pointer, json());
    if (gpu.is_object() && gpu.value("available", false) && gpu.contains("devices") &&
        gpu["devices"].is_array() && !gpu["devices"].empty()) {
      out.gpus = static_cast<double>(gpu["devices"].size());
      out.gpus_source = "NVML devices sampled";
    }
  }
  out.lines.push_back({"engine", "Server", text});
  out.lines.push_back({"gpus", "GPUs",
                       std::isnan(out.gpus)
                           ? std::string("not known to the client")
                           : fmt::format("{} ({})", value_text(json(out.gpus)), out.gpus_source)});
}

}  // namespace

std::string value_text(const json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_null())
    return "unset";
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer())
    return v.dump();
  if (v.is_number()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 1e15)
      return fmt::format("{}", static_cast<long long>(d));
    return fmt::format("{}", d);
  }
  if (v.is_array()) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + value_text(x);
    return out;
  }
  return v.dump();
}

RunConfig run_config(const json& results) {
  RunConfig out;
  if (!results.is_object())
    return out;
  const json& c = config_of(results);
  std::string model = string_at(results, "model_id");
  if (model.empty())
    model = string_at(c, "model");
  const std::string tokenizer = string_at(results, "tokenizer_id");
  out.lines.push_back(
      {"model", "Model",
       (model.empty() ? std::string("not recorded") : model) +
           (!tokenizer.empty() && tokenizer != model ? " (tokenizer " + tokenizer + ")" : "")});
  const bool simulated =
      results.value("simulated", false) || string_at(results, "backend") == "simulate";
  out.lines.push_back(
      {"target", "Target",
       simulated ? std::string("simulate (virtual time, no HTTP)")
                 : fmt::format("{} at {}{}", string_at(results, "backend"),
                               string_at(results, "base_url"), string_at(results, "endpoint"))});
  out.lines.push_back({"dataset", "Dataset", dataset_text(results, c)});
  out.lines.push_back({"load", "Load", load_text(results, c)});
  engine_and_gpus(results, c, out);
  out.lines.push_back({"date", "Date", date_text(string_at(results, "date"))});
  const std::string host = string_at(results, "host");
  out.lines.push_back({"host", "Host", host.empty() ? std::string("not recorded") : host});
  const std::string sha = string_at(results, "git_sha");
  out.lines.push_back(
      {"tool", "llmbench",
       fmt::format("{} ({})", string_at(results, "tool_version"), sha.substr(0, 12))});

  flatten(c, "", c, out.knobs);
  if (c.contains("builtin_server"))
    out.knobs.erase("base_url");  // a fresh loopback port each run
  if (!model.empty())
    out.knobs["model"] = model;
  for (const char* key : {"backend", "endpoint"}) {
    if (const std::string v = string_at(results, key); !v.empty())
      out.knobs[key] = v;
  }
  if (!sha.empty())
    out.knobs["llmbench"] =
        fmt::format("{} {}", string_at(results, "tool_version"), sha.substr(0, 8));
  if (const auto m = results.find("metadata"); m != results.end() && m->is_object()) {
    for (const auto& [key, value] : m->items()) out.knobs["metadata." + key] = value_text(value);
  }
  return out;
}

std::vector<KnobDifference> knob_differences(const std::vector<const RunConfig*>& configs) {
  std::vector<KnobDifference> out;
  if (configs.size() < 2)
    return out;
  std::map<std::string, bool> names;
  for (const auto* c : configs) {
    for (const auto& [k, v] : c->knobs) names[k] = true;
  }
  for (const auto& [name, unused] : names) {
    KnobDifference d{.knob = name, .values = {}};
    for (const auto* c : configs) {
      const auto it = c->knobs.find(name);
      d.values.push_back(it != c->knobs.end() ? it->second : std::string("unset"));
    }
    if (std::adjacent_find(d.values.begin(), d.values.end(), std::not_equal_to<>()) !=
        d.values.end())
      out.push_back(std::move(d));
  }
  const auto rank = [](const std::string& knob) {
    const auto it = std::find(kFirstKnobs.begin(), kFirstKnobs.end(), knob);
    return static_cast<std::size_t>(it - kFirstKnobs.begin());
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const auto& a, const auto& b) { return rank(a.knob) < rank(b.knob); });
  return out;
}

std::string describe_differences(const std::vector<KnobDifference>& differences,
                                 std::size_t max_items) {
  std::string out;
  for (std::size_t i = 0; i < differences.size() && i < max_items; ++i) {
    std::vector<std::string> distinct;
    for (const auto& v : differences[i].values) {
      if (std::find(distinct.begin(), distinct.end(), v) == distinct.end())
        distinct.push_back(v);
    }
    std::string values;
    for (const auto& v : distinct) values += (values.empty() ? "" : " vs ") + v;
    out += fmt::format("{}{} {}", out.empty() ? "" : "; ", differences[i].knob, values);
  }
  if (differences.size() > max_items)
    out += fmt::format(" and {} more", differences.size() - max_items);
  return out;
}

std::string describe_config(const std::vector<KnobDifference>& differences, std::size_t i,
                            std::size_t max_items) {
  std::string out;
  for (std::size_t k = 0; k < differences.size() && k < max_items; ++k) {
    if (i < differences[k].values.size())
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", differences[k].knob,
                         differences[k].values[i]);
  }
  if (differences.size() > max_items)
    out += ", …";
  return out;
}

}  // namespace llmbench::report
