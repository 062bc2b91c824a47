#include "llmbench/cli/workload_flags.hpp"

#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/metrics/catalog.hpp"
#include "llmbench/report/report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

namespace llmbench::cli {

namespace {

/// A flag that only one dataset reads, and that dataset's `--dataset-name`.
struct DatasetFlag {
  std::string_view flag;
  std::string_view dataset;
};

constexpr std::string_view kGsp = "generated-shared-prefix";
constexpr std::string_view kPrep = "prefix_repetition";

/// Every dataset's own flags (workload/dataset.hpp `DatasetOptions`): given with another
/// dataset they would be silently ignored.
constexpr std::array<DatasetFlag, 27> kDatasetFlags{{{"--random-input-len", "random"},
                                                     {"--random-output-len", "random"},
                                                     {"--random-range-ratio", "random"},
                                                     {"--random-prefix-len", "random"},
                                                     {"--random-prompt-kind", "random"},
                                                     {"--sonnet-input-len", "sonnet"},
                                                     {"--sonnet-output-len", "sonnet"},
                                                     {"--sonnet-prefix-len", "sonnet"},
                                                     {"--trace-format", "trace"},
                                                     {"--trace-speedup", "trace"},
                                                     {"--trace-start-s", "trace"},
                                                     {"--trace-duration-s", "trace"},
                                                     {"--trace-spread", "trace"},
                                                     {"--trace-block-size", "trace"},
                                                     {"--gsp-num-groups", kGsp},
                                                     {"--gsp-prompts-per-group", kGsp},
                                                     {"--gsp-system-prompt-len", kGsp},
                                                     {"--gsp-question-len", kGsp},
                                                     {"--gsp-output-len", kGsp},
                                                     {"--gsp-range-ratio", kGsp},
                                                     {"--gsp-popularity", kGsp},
                                                     {"--gsp-zipf-s", kGsp},
                                                     {"--prefix-repetition-prefix-len", kPrep},
                                                     {"--prefix-repetition-suffix-len", kPrep},
                                                     {"--prefix-repetition-num-prefixes", kPrep},
                                                     {"--prefix-repetition-output-len", kPrep},
                                                     {"--long-doc-input-len", "long-document"}}};

/// The trace-replay flags (`--dataset-name trace`, docs/workloads.md "Trace replay").
void add_trace_flags(CLI::App& app, WorkloadFlags& f) {
  app.add_option("--trace-format", f.trace_format,
                 "trace: " + workload::trace_format_names() + " (default: detected from the file)");
  app.add_option("--trace-speedup", f.trace_speedup,
                 "trace: replay this many times faster than recorded")
      ->capture_default_str();
  app.add_option("--trace-start-s", f.trace_start_s,
                 "trace: start the window this many seconds after the first row")
      ->capture_default_str();
  app.add_option("--trace-duration-s", f.trace_duration_s,
                 "trace: replay this many seconds of the trace (default: to its end)");
  app.add_flag("--trace-spread", f.trace_spread,
               "trace: spread rows that share a timestamp evenly over its tick (the Mooncake "
               "conversation trace falls on a ~3 s grid)");
  app.add_option("--trace-block-size", f.trace_block_size,
                 "trace: tokens per Mooncake hash_ids entry")
      ->capture_default_str();
  app.add_option("--corpus", f.corpus,
                 "Text file or folder of .txt the trace prompts are cut from (default: the "
                 "bundled corpus); generated-shared-prefix and prefix_repetition take theirs "
                 "from --dataset-path");
}

/// The conversation flags (docs/workloads.md "Conversations"; docs/peer-flags.md names the
/// peers' flags for the same things).
void add_conversation_flags(CLI::App& app, WorkloadFlags& f) {
  app.add_flag("--multi-turn", f.multi_turn,
               "Send whole conversations (sharegpt: every human turn; mtbench: both turns) as "
               "chat with the history, the answers streamed back as assistant turns; "
               "--num-prompts then counts conversations");
  app.add_option("--max-turns", f.max_turns,
                 "--multi-turn: at most this many user turns per conversation (0 = all)")
      ->capture_default_str();
  app.add_option("--think-time-ms", f.think_time_ms,
                 "--multi-turn: wait this long (mean, ms) after a turn completes before sending "
                 "the next")
      ->capture_default_str();
  app.add_option("--think-time-dist", f.think_time_dist,
                 "--multi-turn: fixed (exactly --think-time-ms) or exponential (that mean)")
      ->capture_default_str();
}

/// SGLang's `generated-shared-prefix` flags and vLLM's `prefix_repetition` flags.
void add_prefix_group_flags(CLI::App& app, WorkloadFlags& f) {
  auto& g = f.gsp;
  app.add_option("--gsp-num-groups", g.num_groups, "generated-shared-prefix: system prompts")
      ->capture_default_str();
  app.add_option("--gsp-prompts-per-group", g.prompts_per_group,
                 "generated-shared-prefix: questions per system prompt")
      ->capture_default_str();
  app.add_option("--gsp-system-prompt-len", g.system_prompt_len,
                 "generated-shared-prefix: system prompt tokens")
      ->capture_default_str();
  app.add_option("--gsp-question-len", g.question_len, "generated-shared-prefix: question tokens")
      ->capture_default_str();
  app.add_option("--gsp-output-len", g.output_len, "generated-shared-prefix: output tokens")
      ->capture_default_str();
  app.add_option("--gsp-range-ratio", g.range_ratio,
                 "generated-shared-prefix: lengths uniform in [L*r, L] (SGLang's rule; 1 = exact)")
      ->capture_default_str();
  app.add_option("--gsp-popularity", f.gsp_popularity,
                 "generated-shared-prefix: uniform (every prompt once, shuffled) or zipf (group k "
                 "asked with weight 1/k^s)")
      ->capture_default_str();
  app.add_option("--gsp-zipf-s", g.zipf_s, "generated-shared-prefix: Zipf exponent s")
      ->capture_default_str();
  auto& p = f.prefix_repetition;
  app.add_option("--prefix-repetition-prefix-len", p.prefix_len,
                 "prefix_repetition: tokens of each shared prefix")
      ->capture_default_str();
  app.add_option("--prefix-repetition-suffix-len", p.suffix_len,
                 "prefix_repetition: tokens after the prefix")
      ->capture_default_str();
  app.add_option("--prefix-repetition-num-prefixes", p.num_prefixes,
                 "prefix_repetition: distinct prefixes")
      ->capture_default_str();
  app.add_option("--prefix-repetition-output-len", p.output_len, "prefix_repetition: output tokens")
      ->capture_default_str();
}

}  // namespace

bool whole_trace(const WorkloadFlags& f) {
  return f.dataset_name == "trace" && !was_given(f, "--num-prompts");
}

std::vector<std::string> given_flags(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() > 0 && !opt->get_lnames().empty()) {
      out.push_back("--" + opt->get_lnames().front());
    }
  }
  return out;
}

bool was_given(const WorkloadFlags& f, const std::string& flag) {
  return std::find(f.given.begin(), f.given.end(), flag) != f.given.end();
}

void check_workload_flags(const WorkloadFlags& f) {
  // --output-len applies to every dataset: for random and sonnet it stands for the dataset's own
  // output-length flag (`dataset_options`), so giving both with different values is an error.
  for (const auto& [own, value] : {std::pair{"--random-output-len", f.random_output_len},
                                   std::pair{"--sonnet-output-len", f.sonnet_output_len}}) {
    if (f.output_len > 0 && was_given(f, own) && value != f.output_len) {
      throw Exception(Error{
          fmt::format("--output-len {} and {} {} disagree: give one", f.output_len, own, value),
          "--output-len", -1});
    }
  }
  if (!f.multi_turn) {
    for (const char* flag : {"--max-turns", "--think-time-ms", "--think-time-dist"}) {
      if (was_given(f, flag)) {
        throw Exception(Error{"applies to --multi-turn runs only", flag, -1});
      }
    }
  }
  if (f.max_turns < 0) {
    throw Exception(Error{fmt::format("must be 0 (every turn) or positive, got {}", f.max_turns),
                          "--max-turns", -1});
  }
  if (!std::isfinite(f.think_time_ms) || f.think_time_ms < 0 || f.think_time_ms > 3.6e6) {
    throw Exception(
        Error{fmt::format("must be a number of ms in [0, 3600000], got {}", f.think_time_ms),
              "--think-time-ms", -1});
  }
  (void)loadgen::parse_think_time(f.think_time_dist);
  for (const auto& [flag, dataset] : kDatasetFlags) {
    if (f.dataset_name != dataset && was_given(f, std::string(flag))) {
      throw Exception(Error{fmt::format("applies to --dataset-name {} only, and this run uses '{}'",
                                        dataset, f.dataset_name),
                            std::string(flag), -1});
    }
  }
}

void add_workload_flags(CLI::App& app, WorkloadFlags& f) {
  app.add_option("--tokenizer", f.tokenizer,
                 "tokenizer.json or a folder holding it, or a name under $LLMBENCH_DATA/tokenizers "
                 "(e.g. deepseek-v3): exact random-prompt lengths and local token counts");
  app.add_option("--dataset-name", f.dataset_name, workload::dataset_kind_names())
      ->capture_default_str();
  app.add_option("--dataset-path", f.dataset_path, "Dataset file (or text folder for random)");
  app.add_option("--num-prompts", f.num_prompts, "Measured requests")->capture_default_str();
  app.add_option("--seed", f.seed, "Master seed for sampling, lengths and arrivals")
      ->capture_default_str()
      ->check(non_negative_integer());
  app.add_option("--random-input-len,--input-len", f.random_input_len,
                 "random: prompt tokens (vLLM's --input-len means the same)")
      ->capture_default_str();
  app.add_option("--random-output-len", f.random_output_len, "random: output tokens")
      ->capture_default_str();
  app.add_option("--random-range-ratio", f.random_range_ratio,
                 "Lengths uniform in [L(1-r), L(1+r)]")
      ->capture_default_str();
  app.add_option("--random-prefix-len", f.random_prefix_len,
                 "random: tokens of a prefix shared by every prompt")
      ->capture_default_str();
  app.add_option("--random-prompt-kind", f.random_prompt_kind,
                 "random with --tokenizer: text (corpus text of exact length) or token-ids "
                 "(the ids as a completions prompt array)")
      ->capture_default_str();
  app.add_option("--sonnet-input-len", f.sonnet_input_len, "sonnet: prompt tokens")
      ->capture_default_str();
  app.add_option("--sonnet-output-len", f.sonnet_output_len, "sonnet: output tokens")
      ->capture_default_str();
  app.add_option("--sonnet-prefix-len", f.sonnet_prefix_len, "sonnet: shared prefix tokens")
      ->capture_default_str();
  add_trace_flags(app, f);
  add_prefix_group_flags(app, f);
  add_conversation_flags(app, f);
  app.add_option("--output-len,--sharegpt-output-len,--custom-output-len", f.output_len,
                 "Output tokens per request, for every dataset (random and sonnet: instead of "
                 "--random-output-len / --sonnet-output-len; default: the dataset's own, else "
                 "256)");
  app.add_option("--max-concurrency", f.max_concurrency, "Closed-loop cap on requests in flight");
  app.add_option("--request-rate", f.request_rate, "Open-loop arrivals per second, or inf")
      ->capture_default_str();
  app.add_option("--burstiness", f.burstiness,
                 "Gamma shape of inter-arrival gaps: 1 = Poisson, inf = evenly spaced")
      ->capture_default_str();
  app.add_option("--goodput", f.goodput, "SLOs as ttft:MS tpot:MS e2el:MS");
  app.add_option("--percentile-metrics", f.percentile_metrics,
                 "Metrics to print percentiles for: " + metrics::latency_metric_names())
      ->capture_default_str();
  app.add_option("--metric-percentiles", f.metric_percentiles,
                 "Comma-separated percentiles to report")
      ->capture_default_str();
}

app::ReportSetup report_setup(const WorkloadFlags& f) {
  app::ReportSetup s;
  s.rate = parse_positive_or_inf(f.request_rate, "--request-rate");
  s.burstiness = parse_positive_or_inf(f.burstiness, "--burstiness");
  s.percentiles = parse_percentiles(f.metric_percentiles);
  s.percentile_metrics = split_csv(f.percentile_metrics);
  if (s.percentile_metrics.empty()) {
    throw Exception(Error{"must name at least one metric (e.g. ttft,tpot,itl,e2el)",
                          "--percentile-metrics", -1});
  }
  report::check_percentile_metrics(s.percentile_metrics);
  for (const auto& item : f.goodput) {
    if (is_blank(item)) {
      throw Exception(Error{"an empty SLO: give KEY:MS, e.g. ttft:500", "--goodput", -1});
    }
  }
  s.summary.percentiles = s.percentiles;
  s.summary.slo = metrics::parse_slo(f.goodput);
  return s;
}

namespace {

workload::SharedPrefixOptions with_popularity(workload::SharedPrefixOptions o,
                                              const std::string& popularity) {
  o.popularity = workload::parse_group_popularity(popularity);
  return o;
}

}  // namespace

workload::DatasetOptions dataset_options(const WorkloadFlags& f, std::int64_t num_prompts,
                                         bool chat) {
  return workload::DatasetOptions{
      .kind = workload::parse_dataset_kind(f.dataset_name),
      .path = f.dataset_path,
      .num_prompts = num_prompts,
      .seed = f.seed,
      .output_len = f.output_len,
      .random_input_len = f.random_input_len,
      .random_output_len = f.output_len > 0 ? f.output_len : f.random_output_len,
      .random_range_ratio = f.random_range_ratio,
      .random_prefix_len = f.random_prefix_len,
      .sonnet_input_len = f.sonnet_input_len,
      .sonnet_output_len = f.output_len > 0 ? f.output_len : f.sonnet_output_len,
      .sonnet_prefix_len = f.sonnet_prefix_len,
      .data_dir = data_dir(),
      .tokenizer = nullptr,
      .random_prompt_kind = workload::parse_random_prompt_kind(f.random_prompt_kind),
      .count_special_tokens = !chat,
      .trace = workload::TraceOptions{.format = f.trace_format,
                                      .speedup = f.trace_speedup,
                                      .start_s = f.trace_start_s,
                                      .duration_s = f.trace_duration_s,
                                      .spread = f.trace_spread,
                                      .keep_schedule = !was_given(f, "--request-rate"),
                                      .block_size = f.trace_block_size,
                                      .corpus_path = f.corpus},
      .shared_prefix = with_popularity(f.gsp, f.gsp_popularity),
      .prefix_repetition = f.prefix_repetition,
      .long_doc_input_len = f.long_doc_input_len,
      .multi_turn = f.multi_turn,
      .max_turns = f.max_turns};
}

app::WorkloadNames workload_names(const WorkloadFlags& f) {
  return app::WorkloadNames{.tokenizer = f.tokenizer,
                            .dataset_name = f.dataset_name,
                            .random_prompt_kind = f.random_prompt_kind,
                            .gsp_popularity = f.gsp_popularity,
                            .think_time_ms = f.think_time_ms,
                            .think_time_dist = f.think_time_dist};
}

}  // namespace llmbench::cli
