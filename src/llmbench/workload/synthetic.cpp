// Synthetic prompts: the random dataset (vLLM `RandomDataset` length semantics, text cut from a
// long-document corpus; with a tokenizer, exact lengths come from exact_random.cpp) and the sonnet
// dataset (vLLM `SonnetDataset`: a fixed instruction, a shared prefix of poem lines, then random
// lines). Without a tokenizer lengths are counted with `estimate_tokens`.

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/core/utf8.hpp"
#include "llmbench/workload/dataset.hpp"
#include "llmbench/workload/detail/corpus.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <fmt/core.h>

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace llmbench::workload::detail {

void check_text(std::string_view text, const std::string& path) {
  const std::size_t bad = utf8_first_invalid(text);
  const std::size_t nul = text.substr(0, bad).find('\0');
  if (nul != std::string_view::npos) {
    throw Exception(Error{"not a text file: NUL byte", path, static_cast<std::int64_t>(nul)});
  }
  if (bad < text.size()) {
    throw Exception(Error{fmt::format("not a text file: invalid UTF-8 (byte 0x{:02X})",
                                      static_cast<unsigned>(static_cast<unsigned char>(text[bad]))),
                          path, static_cast<std::int64_t>(bad)});
  }
}

std::string load_text(const std::string& path, std::uint64_t max_file_bytes) {
  std::string text;
  for (const auto& file : text_files(path)) {
    if (!text.empty()) {
      text += "\n\n";
    }
    const std::string contents = read_file(file, max_file_bytes).value();
    check_text(contents, file);
    text += contents;
  }
  return text;
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
/// Most prompt text the random dataset builds: 16 GiB.
constexpr double kMaxPromptTextBytes = 16.0 * kGiB;

[[noreturn]] void invalid(const std::string& message) {
  throw Exception(message);
}

}  // namespace

std::vector<std::int64_t> sample_lengths(std::int64_t count, std::int64_t len, double ratio,
                                         std::int64_t min_value, std::uint64_t seed,
                                         std::string_view purpose) {
  // Same double arithmetic as vLLM: floor(len * (1 - r)) and ceil(len * (1 + r)), inclusive.
  const auto l = static_cast<double>(len);
  auto lo = static_cast<std::int64_t>(std::floor(l * (1.0 - ratio)));
  auto hi = static_cast<std::int64_t>(std::ceil(l * (1.0 + ratio)));
  lo = std::max(lo, min_value);
  hi = std::max(hi, lo);
  Rng rng(seed, purpose);
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    out.push_back(rng.uniform_int(lo, hi));
  }
  return out;
}

// ---- random ----

std::vector<Sample> make_random_samples(const DatasetOptions& options,
                                        const std::string& corpus_path) {
  const double r = options.random_range_ratio;
  if (options.random_input_len <= 0) {
    invalid(fmt::format("--random-input-len must be > 0, got {}", options.random_input_len));
  }
  if (options.random_output_len <= 0) {
    invalid(fmt::format("--random-output-len must be > 0, got {}", options.random_output_len));
  }
  if (options.random_prefix_len < 0) {
    invalid(fmt::format("--random-prefix-len must be >= 0, got {}", options.random_prefix_len));
  }
  if (!(r >= 0.0 && r < 1.0)) {
    invalid(fmt::format("--random-range-ratio must be in [0, 1), got {}", r));
  }
  // vLLM rejects settings whose shortest possible prompt (prefix + sampled input) is empty.
  const auto min_input = static_cast<std::int64_t>(
      std::floor(static_cast<double>(options.random_input_len) * (1.0 - r)));
  if (options.random_prefix_len + min_input < 1) {
    invalid(fmt::format(
        "--random-input-len {} with --random-range-ratio {} can give an empty prompt; raise the "
        "input length or the prefix length, or lower the ratio",
        options.random_input_len, r));
  }

  // Prompt text is held in memory for the whole run: refuse sizes that cannot fit before any
  // of it is built (about 4 bytes per token of English text, `estimate_text_tokens`).
  const double max_tokens = std::ceil(static_cast<double>(options.random_input_len) * (1.0 + r)) +
                            static_cast<double>(options.random_prefix_len);
  const double text_bytes = static_cast<double>(options.num_prompts) * max_tokens * 4.0;
  if ((options.random_text || options.tokenizer != nullptr) && text_bytes > kMaxPromptTextBytes) {
    invalid(fmt::format(
        "--num-prompts {} with --random-input-len {} (+ prefix {}) would hold about {:.0f} GiB "
        "of prompt text (at most {:.0f} GiB); lower one of them",
        options.num_prompts, options.random_input_len, options.random_prefix_len, text_bytes / kGiB,
        kMaxPromptTextBytes / kGiB));
  }
  if (options.tokenizer != nullptr) {
    return make_exact_random_samples(options, corpus_path);
  }
  // Prompts that are identified by their first word only (`random_text` off: `simulate`) need
  // the word count, not the words.
  std::string text = load_text(corpus_path, options.max_file_bytes);
  std::optional<Corpus> corpus;
  std::size_t word_count = 0;
  if (options.random_text) {
    corpus.emplace(std::move(text), corpus_path);
    word_count = corpus->word_count();
  } else {
    word_count = count_words(text);
    require_words(word_count, corpus_path);
  }
  const auto n = options.num_prompts;
  const auto input_lens =
      sample_lengths(n, options.random_input_len, r, 0, options.seed, "random-input-len");
  // vLLM raises the output lower bound to 1 so no request asks for 0 tokens.
  const auto output_lens =
      sample_lengths(n, options.random_output_len, r, 1, options.seed, "random-output-len");
  Rng offsets(options.seed, "random-offset");

  // The shared prefix: the corpus start, the same for every prompt (prefix-cache friendly).
  std::string prefix;
  TextTokenEstimate prefix_counter;
  if (options.random_prefix_len > 0 && options.random_text) {
    corpus->take(0, options.random_prefix_len, prefix_counter, prefix);
  }

  std::vector<Sample> samples;
  samples.reserve(static_cast<std::size_t>(n));
  const auto last_word = static_cast<std::int64_t>(word_count) - 1;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto idx = static_cast<std::size_t>(i);
    const auto first = static_cast<std::size_t>(offsets.uniform_int(0, last_word));
    Sample sample;
    if (!options.random_text) {
      sample.content_key = static_cast<std::int64_t>(first);
      sample.prompt_len = options.random_prefix_len + input_lens[idx];
      sample.output_len = output_lens[idx];
      sample.source_id = "random:" + std::to_string(i);
      samples.push_back(std::move(sample));
      continue;
    }
    sample.prompt = prefix;
    TextTokenEstimate counter = prefix_counter;
    if (input_lens[idx] > 0) {
      if (!prefix.empty()) {
        sample.prompt += "\n\n";
        counter.add("\n\n");
      }
      corpus->take(first, options.random_prefix_len + input_lens[idx], counter, sample.prompt);
    }
    sample.prompt_len = options.random_prefix_len + input_lens[idx];
    sample.output_len = output_lens[idx];
    sample.source_id = "random:" + std::to_string(i);
    samples.push_back(std::move(sample));
  }
  return samples;
}

// ---- sonnet ----

std::vector<Sample> make_sonnet_samples(const DatasetOptions& options,
                                        const std::string& poem_path) {
  // The instruction vLLM's SonnetDataset puts before the poem lines.
  constexpr std::string_view kInstruction =
      "Pick as many lines as you can from these poem lines:\n";
  const auto instruction_len = estimate_text_tokens(kInstruction);
  if (options.sonnet_output_len <= 0) {
    invalid(fmt::format("--sonnet-output-len must be > 0, got {}", options.sonnet_output_len));
  }
  if (options.sonnet_prefix_len < 0) {
    invalid(fmt::format("--sonnet-prefix-len must be >= 0, got {}", options.sonnet_prefix_len));
  }
  if (options.sonnet_input_len <= options.sonnet_prefix_len ||
      options.sonnet_input_len <= instruction_len) {
    invalid(fmt::format(
        "--sonnet-input-len ({}) must be greater than --sonnet-prefix-len ({}) and than the "
        "instruction ({} estimated tokens)",
        options.sonnet_input_len, options.sonnet_prefix_len, instruction_len));
  }

  // Non-blank lines, each ending in exactly one '\n'.
  const std::string text = load_text(poem_path, options.max_file_bytes);
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (!is_blank(line)) {
      lines.push_back(std::move(line) + "\n");
    }
  }
  if (lines.empty()) {
    throw Exception(Error{"poem file has no non-blank lines", poem_path, -1});
  }

  // Shared prefix: the instruction plus the first lines (in file order, cycling if needed) while
  // the estimate stays within sonnet_prefix_len.
  std::string prefix(kInstruction);
  TextTokenEstimate prefix_counter;
  prefix_counter.add(prefix);
  for (std::size_t i = 0;; ++i) {
    TextTokenEstimate next = prefix_counter;
    next.add(lines[i % lines.size()]);
    if (next.value() > options.sonnet_prefix_len) {
      break;
    }
    prefix += lines[i % lines.size()];
    prefix_counter = next;
  }

  Rng rng(options.seed, "sonnet-lines");
  const auto last_line = static_cast<std::int64_t>(lines.size()) - 1;
  std::vector<Sample> samples;
  samples.reserve(static_cast<std::size_t>(options.num_prompts));
  for (std::int64_t i = 0; i < options.num_prompts; ++i) {
    Sample sample;
    sample.prompt = prefix;
    TextTokenEstimate counter = prefix_counter;
    // Random lines (with replacement) while within sonnet_input_len; at least one, so no two
    // prompts are the bare prefix.
    for (bool first = true;; first = false) {
      const auto& line = lines[static_cast<std::size_t>(rng.uniform_int(0, last_line))];
      TextTokenEstimate next = counter;
      next.add(line);
      if (!first && next.value() > options.sonnet_input_len) {
        break;
      }
      sample.prompt += line;
      counter = next;
    }
    sample.prompt_len = counter.value();
    sample.output_len = options.sonnet_output_len;
    sample.source_id = fmt::format("sonnet:{}", i);
    samples.push_back(std::move(sample));
  }
  return samples;
}

}  // namespace llmbench::workload::detail
