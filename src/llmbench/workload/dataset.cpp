#include "llmbench/workload/dataset.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <limits>
#include <numeric>
#include <utility>

namespace llmbench::workload {
namespace {

/// Where the bundled default for `kind` lives under `data_dir` (data/NOTICE.md lists the files).
std::string bundled_path(DatasetKind kind, const std::string& data_dir) {
  const char* relative = nullptr;
  switch (kind) {
    case DatasetKind::MtBench:
      relative = "mt_bench/question.jsonl";
      break;
    case DatasetKind::Random:
      relative = "corpus/alice_in_wonderland.txt";
      break;
    case DatasetKind::Sonnet:
      relative = "sonnet/sonnet.txt";
      break;
    case DatasetKind::ShareGpt:
      throw Exception(
          "--dataset-name sharegpt needs --dataset-path (a ShareGPT JSON file, e.g. "
          "ShareGPT_V3_unfiltered_cleaned_split.json); none is bundled");
    case DatasetKind::Custom:
      throw Exception("--dataset-name custom needs --dataset-path (a JSONL file)");
    case DatasetKind::SharedPrefix:
    case DatasetKind::PrefixRepetition:
      relative = "corpus";
      break;
    case DatasetKind::Belle:
    case DatasetKind::Cmmlu:
    case DatasetKind::ArenaHard:
    case DatasetKind::AlpacaEval:
    case DatasetKind::HumanEval:
    case DatasetKind::LongDocument:
      throw Exception(
          fmt::format("--dataset-name {} needs --dataset-path (the set's file or "
                      "folder; ../shared/data/DATASETS.md lists them)",
                      kDatasetKinds.name(kind)));
    case DatasetKind::Trace:
      throw Exception(fmt::format("--dataset-name trace needs --dataset-path (a trace file: {})",
                                  trace_format_names()));
  }
  if (data_dir.empty()) {
    throw Exception("no --dataset-path given and the bundled data folder is unknown");
  }
  return (std::filesystem::path(data_dir) / relative).string();
}

/// `count` samples from a fixed dataset: the first `count` of a seeded shuffle when the dataset is
/// large enough, else the shuffled order repeated (Fisher-Yates with our Rng, so the order is the
/// same on every standard library).
std::vector<Sample> sample_fixed(std::vector<Sample> all, std::int64_t count, std::uint64_t seed) {
  std::vector<std::size_t> order(all.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  Rng rng(seed, "dataset-sample");
  for (std::size_t i = order.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(i) - 1));
    std::swap(order[i - 1], order[j]);
  }
  std::vector<Sample> out;
  out.reserve(static_cast<std::size_t>(count));
  const auto n = static_cast<std::size_t>(count);
  if (n <= all.size()) {
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(std::move(all[order[i]]));
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(all[order[i % order.size()]]);
    }
  }
  return out;
}

/// Chat with a template: `prompt_len` = tokens of the rendered chat prompt
/// (docs/chat-templates.md).
std::vector<Sample> count_templated(std::vector<Sample> samples, const DatasetOptions& options) {
  tokenizer::Scratch scratch;
  const tokenizer::ChatRenderOptions render_options;
  for (auto& sample : samples) {
    const ChatMessages user = {{.role = "user", .content = sample.prompt}};
    auto prompt = options.chat_template->render(sample.messages.empty() ? user : sample.messages,
                                                render_options);
    if (!prompt) {
      throw Exception(
          Error{"cannot render the chat template: " + prompt.error().what(), sample.source_id, -1});
    }
    auto n = options.tokenizer->count(*prompt, false, scratch);
    if (!n) {
      throw Exception(Error{"cannot encode the chat prompt: " + n.error().message, sample.source_id,
                            n.error().offset});
    }
    sample.prompt_len = static_cast<std::int64_t>(*n);
    sample.prompt_len_exact = true;
    sample.prompt_len_templated = true;
  }
  return samples;
}

/// With a tokenizer: replaces the estimated `prompt_len` of single-text samples by the exact count
/// (special tokens included when `count_special_tokens`). Multi-message chat samples keep theirs.
/// With a chat template every sample is counted as its rendered chat prompt instead.
std::vector<Sample> count_exactly(std::vector<Sample> samples, const DatasetOptions& options) {
  if (options.tokenizer == nullptr) {
    return samples;
  }
  if (options.chat_template != nullptr) {
    return count_templated(std::move(samples), options);
  }
  tokenizer::Scratch scratch;
  for (auto& sample : samples) {
    const bool single_text =
        sample.messages.empty() || (sample.messages.size() == 1 && sample.prompt.empty());
    if (!single_text) {
      continue;
    }
    const std::string_view text =
        sample.messages.empty() ? std::string_view(sample.prompt) : sample.messages[0].content;
    auto n = options.tokenizer->count(text, options.count_special_tokens, scratch);
    if (!n) {
      throw Exception(
          Error{"cannot encode prompt: " + n.error().message, sample.source_id, n.error().offset});
    }
    sample.prompt_len = static_cast<std::int64_t>(*n);
    sample.prompt_len_exact = true;
  }
  return samples;
}

}  // namespace

std::string dataset_kind_names() {
  return kDatasetKinds.names();
}

DatasetKind parse_dataset_kind(std::string_view name) {
  if (const auto kind = kDatasetKinds.find(name))
    return *kind;
  throw Exception(
      Error{fmt::format("unknown dataset \"{}\"; valid: {}", name, dataset_kind_names()),
            "--dataset-name", -1});
}

RandomPromptKind parse_random_prompt_kind(std::string_view name) {
  if (const auto kind = kRandomPromptKinds.find(name))
    return *kind;
  throw Exception(
      Error{fmt::format("unknown prompt kind \"{}\"; valid: {}", name, kRandomPromptKinds.names()),
            "--random-prompt-kind", -1});
}

std::vector<Sample> load_samples(const DatasetOptions& options) {
  if (options.num_prompts <= 0 || options.num_prompts > kMaxNumPrompts) {
    throw Exception(Error{fmt::format("must be in 1..{} (every sample is held in memory), got {}",
                                      kMaxNumPrompts, options.num_prompts),
                          "--num-prompts", -1});
  }
  const std::string path =
      options.path.empty() ? bundled_path(options.kind, options.data_dir) : options.path;
  if (options.random_prompt_kind == RandomPromptKind::TokenIds &&
      (options.kind != DatasetKind::Random || options.tokenizer == nullptr ||
       !options.count_special_tokens)) {
    throw Exception(
        Error{"token-ids needs --dataset-name random, --tokenizer and a completions "
              "endpoint (chat messages are text)",
              "--random-prompt-kind", -1});
  }
  if (options.multi_turn) {
    if (options.kind != DatasetKind::ShareGpt && options.kind != DatasetKind::MtBench) {
      throw Exception(Error{fmt::format("--dataset-name {} has single prompts, not "
                                        "conversations; --multi-turn takes {}",
                                        kDatasetKinds.name(options.kind), kMultiTurnDatasets),
                            "--multi-turn", -1});
    }
    if (options.max_turns < 0) {
      throw Exception(
          Error{fmt::format("must be 0 (every turn) or positive, got {}", options.max_turns),
                "--max-turns", -1});
    }
  }
  // Multi-turn: at most this many user turns of each conversation (0 = single-turn).
  const std::int64_t turn_limit =
      !options.multi_turn
          ? 0
          : (options.max_turns > 0 ? options.max_turns : std::numeric_limits<std::int64_t>::max());
  if (options.kind == DatasetKind::Random) {
    auto random = detail::make_random_samples(options, path);
    // The content has its sampled length; with a chat template the count is of the whole prompt.
    return options.chat_template != nullptr ? count_exactly(std::move(random), options) : random;
  }
  if (options.kind == DatasetKind::Sonnet) {
    return count_exactly(detail::make_sonnet_samples(options, path), options);
  }
  if (options.kind == DatasetKind::Trace) {
    return detail::make_trace_samples(options, path);
  }
  if (options.kind == DatasetKind::SharedPrefix) {
    auto all = detail::make_shared_prefix_samples(options, path);
    return options.shared_prefix.popularity == GroupPopularity::Zipf
               ? all
               : sample_fixed(std::move(all), options.num_prompts, options.seed);
  }
  if (options.kind == DatasetKind::PrefixRepetition) {
    return sample_fixed(detail::make_prefix_repetition_samples(options, path), options.num_prompts,
                        options.seed);
  }
  if (options.kind == DatasetKind::LongDocument) {
    return detail::make_long_document_samples(options, path);
  }
  std::vector<Sample> all;
  if (options.kind == DatasetKind::ShareGpt) {
    all = detail::load_sharegpt(path, options.output_len, options.max_file_bytes, turn_limit);
  } else if (options.kind >= DatasetKind::Belle) {
    all = detail::load_named_set(options.kind, path, options.output_len, options.max_file_bytes);
  } else if (options.kind == DatasetKind::MtBench) {
    all = detail::load_mtbench(path, options.output_len, options.max_file_bytes, turn_limit);
  } else {
    all = detail::load_custom(path, options.output_len, options.max_file_bytes);
  }
  if (all.empty()) {
    throw Exception(Error{"dataset has no usable prompts", path, -1});
  }
  if (static_cast<std::size_t>(options.num_prompts) > all.size()) {
    log::info("{}: {} prompts, repeating them to reach {}", path, all.size(), options.num_prompts);
  }
  return count_exactly(sample_fixed(std::move(all), options.num_prompts, options.seed), options);
}

}  // namespace llmbench::workload
