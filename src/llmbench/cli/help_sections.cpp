#include "llmbench/cli/help_sections.hpp"

#include <array>
#include <atomic>

namespace llmbench::cli {

namespace {

/// One rule of the section table: a flag name, or a name prefix when it ends in '*'.
struct SectionRule {
  std::string_view pattern;
  std::string_view section;
};

constexpr std::string_view kTarget = "Server target";
constexpr std::string_view kTls = "TLS";
constexpr std::string_view kLoad = "Load";
constexpr std::string_view kDataset = "Dataset";
constexpr std::string_view kSampling = "Sampling and request shape";
constexpr std::string_view kOutput = "Output and report";
constexpr std::string_view kTelemetry = "Telemetry";
constexpr std::string_view kEngine = "Simulated engine";
constexpr std::string_view kServer = "Built-in server (no --base-url)";

/// The sections, first matching rule wins. The order of the sections in `--help` is the order in
/// which their first flags were registered.
constexpr std::array<SectionRule, 76> kRules{{
    {"--server-*", kServer},
    {"--base-url", kTarget},
    {"--host", kTarget},
    {"--port", kTarget},
    {"--endpoint", kTarget},
    {"--backend", kTarget},
    {"--model", kTarget},
    {"--served-model-name", kTarget},
    {"--header", kTarget},
    {"--api-key", kTarget},
    {"--ready-check-timeout-sec", kTarget},
    {"--connect-timeout", kTarget},
    {"--first-byte-timeout", kTarget},
    {"--idle-timeout", kTarget},
    {"--timeout", kTarget},
    {"--client-threads", kTarget},
    {"--no-prewarm", kTarget},
    {"--source-address", kTarget},
    {"--num-gpus", kTarget},
    {"--insecure", kTls},
    {"--ca-cert", kTls},
    {"--num-prompts", kLoad},
    {"--max-concurrency", kLoad},
    {"--request-rate", kLoad},
    {"--burstiness", kLoad},
    {"--duration", kLoad},
    {"--num-warmups", kLoad},
    {"--ramp-up-*", kLoad},
    {"--seed", kLoad},
    {"--multi-turn", kLoad},
    {"--max-turns", kLoad},
    {"--think-time-*", kLoad},
    {"--dataset-*", kDataset},
    {"--tokenizer", kDataset},
    {"--random-*", kDataset},
    {"--sonnet-*", kDataset},
    {"--trace-*", kDataset},
    {"--corpus", kDataset},
    {"--gsp-*", kDataset},
    {"--prefix-repetition-*", kDataset},
    {"--long-doc-*", kDataset},
    {"--output-len", kDataset},
    {"--ignore-eos", kSampling},
    {"--min-tokens", kSampling},
    {"--temperature", kSampling},
    {"--top-p", kSampling},
    {"--top-k", kSampling},
    {"--min-p", kSampling},
    {"--presence-penalty", kSampling},
    {"--frequency-penalty", kSampling},
    {"--repetition-penalty", kSampling},
    {"--extra-body", kSampling},
    {"--no-stream", kSampling},
    {"--disable-stream", kSampling},
    {"--continuous-usage", kSampling},
    {"--save-*", kOutput},
    {"--result-*", kOutput},
    {"--append-result", kOutput},
    {"--label", kOutput},
    {"--metadata", kOutput},
    {"--report", kOutput},
    {"--history", kOutput},
    {"--window-s", kOutput},
    {"--goodput", kOutput},
    {"--percentile-metrics", kOutput},
    {"--metric-percentiles", kOutput},
    {"--quiet", kOutput},
    {"--trace", kOutput},
    {"--timeline-interval", kOutput},
    {"--gpu-telemetry", kTelemetry},
    {"--gpu-devices", kTelemetry},
    {"--nvml-library", kTelemetry},
    {"--scrape-*", kTelemetry},
    {"--model-profile", kEngine},
    {"--gpu", kEngine},
    {"--tp", kEngine},
}};

/// The simulated engine's flags (`add_engine_flags` without a prefix: `simulate`, `sweep
/// --simulate`), beyond the three rules above.
constexpr std::array<std::string_view, 23> kEngineFlags{{"--tensor-parallel-size",
                                                         "--max-num-seqs",
                                                         "--max-num-batched-tokens",
                                                         "--block-size",
                                                         "--gpu-memory-utilization",
                                                         "--num-gpu-blocks-override",
                                                         "--long-prefill-token-threshold",
                                                         "--scheduler",
                                                         "--batch-window-ms",
                                                         "--batch-length-beta",
                                                         "--swap-space",
                                                         "--enable-expert-parallel",
                                                         "--ep",
                                                         "--dp",
                                                         "--exec-model",
                                                         "--compute-efficiency",
                                                         "--memory-efficiency",
                                                         "--step-overhead-us",
                                                         "--enable-prefix-caching",
                                                         "--no-enable-prefix-caching",
                                                         "--enable-chunked-prefill",
                                                         "--no-enable-chunked-prefill",
                                                         "--preemption-mode"}};

std::atomic<bool> g_help_all{false};

}  // namespace

std::string_view help_section(std::string_view flag) {
  for (const auto& r : kRules) {
    const bool prefix = r.pattern.ends_with('*');
    const auto stem = prefix ? r.pattern.substr(0, r.pattern.size() - 1) : r.pattern;
    if (prefix ? flag.starts_with(stem) : flag == stem)
      return r.section;
  }
  for (const auto& e : kEngineFlags) {
    if (flag == e)
      return kEngine;
  }
  return {};
}

void apply_help_sections(CLI::App& app, bool show_all) {
  bool hidden_server = false;
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_lnames().empty() || opt->get_group() == "Sweep")
      continue;  // --help, and sweep's own flags (--server-ready-timeout is one)
    const std::string flag = "--" + opt->get_lnames().front();
    const std::string_view section = help_section(flag);
    if (section == kServer) {
      opt->group(show_all ? std::string(kServer) : std::string());
      hidden_server = hidden_server || !show_all;
    } else if (!section.empty() && !opt->get_group().empty()) {
      opt->group(std::string(section));  // (vLLM's flags stay hidden: docs/peer-flags.md)
    }
  }
  if (hidden_server && app.get_footer().find("--help-all") == std::string::npos) {
    app.footer(app.get_footer() +
               "\nThe built-in server's --server-* flags (used when no "
               "--base-url is given): llmbench " +
               app.get_name() + " --help-all\n");
  }
}

bool help_all_requested() noexcept {
  return g_help_all.load();
}

void request_help_all() noexcept {
  g_help_all.store(true);
}

std::string run_examples() {
  return "\nExamples:\n"
         "  # a vLLM server, 1000 random prompts of 1024 tokens, at most 64 in flight\n"
         "  llmbench run --base-url http://127.0.0.1:8000 --dataset-name random \\\n"
         "      --random-input-len 1024 --random-output-len 128 --max-concurrency 64\n"
         "  # ShareGPT at 8 req/s, the results and an HTML report saved\n"
         "  llmbench run --base-url http://gpu-node:8000 --backend openai-chat \\\n"
         "      --tokenizer deepseek-ai/DeepSeek-R1 --dataset-name sharegpt \\\n"
         "      --dataset-path ShareGPT_V3_unfiltered_cleaned_split.json --request-rate 8 \\\n"
         "      --save-result --report run.html\n"
         "  # no server at hand: the built-in one with DeepSeek-V3 on 8 simulated H100s\n"
         "  llmbench run --server-model-profile deepseek-v3 --server-gpu h100-sxm --server-tp 8 "
         "\\\n"
         "      --num-prompts 200 --request-rate 4\n";
}

}  // namespace llmbench::cli
