// Trace rows as samples (docs/workloads.md, "Trace replay"): each row's lengths and arrival time,
// with prompt text cut from a long-document corpus. With a tokenizer a prompt has exactly the
// row's input length as a completions server counts it (special tokens included); without one
// the text has about that many tokens and the row's length is what the simulator uses.
//
// Mooncake `hash_ids`: each id stands for one block of `block_size` (512) tokens, and equal ids
// mean equal prefixes (the trace's KV-cache reuse). Every distinct id gets one fixed text block of
// exactly `block_size` tokens (drawn from a stream seeded by the id), and a prompt is its blocks
// in order, the last one cut to the row's length. Blocks start at a word-initial token, so the
// encoding of the joined text is the joined encodings and a prefix cache sees the same tokens.

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/workload/detail/loaders.hpp"
#include "llmbench/workload/detail/prompt_text.hpp"
#include "llmbench/workload/trace.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>

namespace llmbench::workload::detail {
namespace {

constexpr int kMaxLastBlockAdjusts = 6;  // retries of a Mooncake prompt's last block

/// The fixed text block of each Mooncake hash id.
class BlockTexts {
 public:
  BlockTexts(PromptText& text, std::int64_t block_size, std::uint64_t seed)
      : text_(text), block_size_(block_size), seed_(seed) {}

  /// The block of `id`: its `block_size` tokens, or (a row's last, partial block) the start of
  /// them with `tokens` tokens, so a partial block is a prefix of the full one.
  std::string block(std::uint64_t id, std::int64_t tokens) {
    auto it = full_.find(id);
    if (it == full_.end()) {
      Rng rng(seed_ ^ splitmix64(id), "trace-block");
      it = full_.emplace(id, text_.cut(block_size_, rng, fmt::format("hash id {}", id))).first;
    }
    if (tokens >= block_size_) {
      return it->second;
    }
    return text_.prefix(it->second, tokens, fmt::format("hash id {}", id));
  }

  [[nodiscard]] std::size_t distinct() const { return full_.size(); }

 private:
  PromptText& text_;
  std::int64_t block_size_;
  std::uint64_t seed_;
  std::unordered_map<std::uint64_t, std::string> full_;
};

/// The prompt of a Mooncake row: its blocks' text, `text_tokens` tokens in all (without special
/// tokens); with a tokenizer the last block is re-cut until the whole prompt counts `want`.
std::string mooncake_prompt(const TraceRow& row, std::int64_t text_tokens, std::int64_t want,
                            std::int64_t block_size, BlockTexts& blocks, PromptText& text,
                            const std::string& path) {
  const auto needed = (text_tokens + block_size - 1) / block_size;
  const auto m = std::min<std::int64_t>(needed, static_cast<std::int64_t>(row.hash_ids.size()));
  if (m < needed) {
    throw Exception(Error{fmt::format("line {}: {} hash_ids cover {} tokens, fewer than the "
                                      "input_length {} (block size {})",
                                      row.line, row.hash_ids.size(),
                                      static_cast<std::int64_t>(row.hash_ids.size()) * block_size,
                                      row.input_len, block_size),
                          path, -1});
  }
  std::string head;
  for (std::int64_t k = 0; k + 1 < m; ++k) {
    head += blocks.block(row.hash_ids[static_cast<std::size_t>(k)], block_size);
  }
  const std::uint64_t last_id = row.hash_ids[static_cast<std::size_t>(m - 1)];
  std::int64_t last = text_tokens - (m - 1) * block_size;
  for (int attempt = 0;; ++attempt) {
    std::string prompt = head + blocks.block(last_id, last);
    if (!text.exact()) {
      return prompt;
    }
    const std::int64_t got = text.count(prompt);
    if (got == want) {
      return prompt;
    }
    if (attempt == kMaxLastBlockAdjusts || last + want - got < 1) {
      throw Exception(
          Error{fmt::format("line {}: the prompt counts {} tokens, not {}", row.line, got, want),
                path, -1});
    }
    last += want - got;  // the blocks merged at a seam: absorb it in the last block
  }
}

}  // namespace

std::vector<Sample> make_trace_samples(const DatasetOptions& options, const std::string& path) {
  if (path.ends_with(".zst")) {
    throw Exception(
        Error{"is zstd-compressed: unpack it first (zstd -d, or ../shared/data/"
              "unpack.sh)",
              path, -1});
  }
  const TraceOptions& topt = options.trace;
  const std::string text = read_file(path, options.max_file_bytes).value();
  const TraceFormat format =
      topt.format.empty() ? detect_trace_format(text, path) : parse_trace_format(topt.format);
  auto rows = replay_window(parse_trace(text, path, format), topt);
  if (static_cast<std::int64_t>(rows.size()) > options.num_prompts) {
    rows.resize(static_cast<std::size_t>(options.num_prompts));
  }
  const bool mooncake = format == TraceFormat::Mooncake;
  if (mooncake && topt.block_size <= 0) {
    throw Exception(Error{"must be a positive number of tokens", "--trace-block-size", -1});
  }
  std::int64_t longest = topt.block_size;
  for (const auto& r : rows) {
    longest = std::max(longest, mooncake ? 0 : r.input_len);
  }
  const bool want_text = options.random_text || options.tokenizer != nullptr;
  std::optional<PromptText> corpus;
  if (want_text) {
    corpus.emplace(options,
                   topt.corpus_path.empty() ? options.data_dir + "/corpus" : topt.corpus_path,
                   longest);
  }
  std::optional<BlockTexts> blocks;
  if (corpus && mooncake) {
    blocks.emplace(*corpus, topt.block_size, options.seed);
  }
  Rng rng(options.seed, "trace-prompt");
  std::vector<Sample> samples;
  samples.reserve(rows.size());
  std::int64_t raised = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    TraceRow& row = rows[i];
    Sample s;
    s.source_id = fmt::format("trace:{}", row.line);
    s.output_len = options.output_len > 0 ? options.output_len : row.output_len;
    s.arrival_ns = topt.keep_schedule ? row.time_ns : -1;
    s.prompt_len = row.input_len;
    const std::int64_t specials = corpus ? corpus->special_tokens() : 0;
    if (row.input_len < specials + 1) {
      s.prompt_len = specials + 1;
      ++raised;
    }
    const std::int64_t text_tokens = s.prompt_len - specials;
    if (!corpus) {
      s.content_key = static_cast<std::int64_t>(i);  // `simulate`: a prompt of its own
    } else if (mooncake) {
      s.prompt =
          mooncake_prompt(row, text_tokens, s.prompt_len, topt.block_size, *blocks, *corpus, path);
    } else {
      s.prompt = corpus->cut(text_tokens, rng, s.source_id);
      if (corpus->exact() && corpus->count(s.prompt) != s.prompt_len) {
        throw Exception(Error{
            fmt::format("line {}: the prompt does not count {} tokens", row.line, s.prompt_len),
            path, -1});
      }
    }
    s.prompt_len_exact = corpus && corpus->exact();
    s.block_ids = std::move(row.hash_ids);
    samples.push_back(std::move(s));
  }
  if (raised > 0) {
    log::warn("{}: {} row(s) shorter than the special tokens plus one were raised to that", path,
              raised);
  }
  log::info("{}: {} trace {} rows to replay{}{}", path, samples.size(), trace_format_name(format),
            topt.keep_schedule ? fmt::format(" at speed-up {}", topt.speedup) : "",
            blocks
                ? fmt::format(", {} distinct {}-token blocks", blocks->distinct(), topt.block_size)
                : "");
  return samples;
}

}  // namespace llmbench::workload::detail
