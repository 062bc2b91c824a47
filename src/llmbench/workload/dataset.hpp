#pragma once
/// @file
/// Benchmark datasets (`--dataset-name`, `--dataset-path`) turned into `Sample`s: prompt text or
/// chat messages plus the output length to request. Formats follow `vllm bench serve` where it
/// has the dataset.

#include "llmbench/core/chat.hpp"
#include "llmbench/core/clock.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/name_table.hpp"
#include "llmbench/tokenizer/chat_template.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"
#include "llmbench/workload/prefix_groups.hpp"
#include "llmbench/workload/trace.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::workload {

/// One user turn of a conversation (`--multi-turn`, docs/workloads.md "Conversations").
struct ConversationTurn {
  std::string content;          ///< the user message of this turn
  std::int64_t output_len = 0;  ///< `max_tokens` of this turn's request (> 0)
  bool operator==(const ConversationTurn&) const = default;
};

/// One prompt to send.
struct Sample {
  std::string prompt;     ///< completions prompt (for chat: the user message if `messages` empty)
  ChatMessages messages;  ///< chat form; may be empty (then {"user", prompt} is sent)
  std::int64_t prompt_len =
      -1;                       ///< intended input tokens if known (random), else an estimate or -1
  std::int64_t output_len = 0;  ///< tokens to request as `max_tokens` (> 0)
  std::string source_id;  ///< where it came from ("sharegpt:fzcoUcK_0", "mtbench:81", "line 12")
  /// The prompt as token ids, sent instead of `prompt` (completions `prompt: [ids]`) when
  /// `prompt` is empty; filled by `--random-prompt-kind token-ids`. Special tokens (BOS) are
  /// included here, since a server adds none to an id prompt.
  std::vector<tokenizer::TokenId> prompt_token_ids;
  /// True when `prompt_len` is a tokenizer count of exactly what is sent, counted as the server
  /// counts it (see `DatasetOptions::count_special_tokens`); false for estimates.
  bool prompt_len_exact = false;
  /// Random dataset with `DatasetOptions::random_text` off: the corpus word its own text would
  /// start at (prompts with equal keys and lengths are equal); -1 otherwise.
  std::int64_t content_key = -1;
  /// Trace replay (`--dataset-name trace`): when the trace wants it sent, ns after the first
  /// replayed row (speed-up applied); -1 for datasets without a schedule of their own.
  TimeNs arrival_ns = -1;
  /// Mooncake trace: the row's `hash_ids`, one per `DatasetOptions::trace.block_size` tokens of
  /// the prompt (equal ids = equal blocks of text); empty otherwise. `simulate` keys its prefix
  /// cache on them (`trace_block_hashes`).
  std::vector<std::uint64_t> block_ids;
  /// True when `prompt_len` counts the whole chat prompt: the messages rendered with the
  /// tokenizer's chat template (`DatasetOptions::chat_template`), as a server with that template
  /// counts `usage.prompt_tokens`.
  bool prompt_len_templated = false;
  /// Multi-turn runs (`DatasetOptions::multi_turn`): the conversation's user turns in order, at
  /// least one; the first is also `prompt` and `output_len`. Empty in single-turn runs. The
  /// load generator sends turn k+1 with the history: every earlier user turn and, as assistant
  /// turns, the answers the server streamed back.
  std::vector<ConversationTurn> turns;
};

/// What the random dataset sends with a tokenizer (`--random-prompt-kind`).
enum class RandomPromptKind {
  Text,      ///< text cut from the corpus at token boundaries, re-encoded to the exact length
  TokenIds,  ///< the corpus token ids themselves, sent as a completions id-array prompt
};

/// The `--random-prompt-kind` names.
inline constexpr auto kRandomPromptKinds = make_name_table<RandomPromptKind>({
    {RandomPromptKind::Text, "text"},
    {RandomPromptKind::TokenIds, "token-ids"},
});

/// Parses "text" or "token-ids"; throws `Exception` naming `--random-prompt-kind` otherwise.
RandomPromptKind parse_random_prompt_kind(std::string_view name);

/// Dataset kinds (`--dataset-name`).
enum class DatasetKind {
  ShareGpt,
  MtBench,
  Custom,
  Sonnet,
  Random,
  Trace,
  SharedPrefix,
  PrefixRepetition,
  Belle,
  Cmmlu,
  ArenaHard,
  AlpacaEval,
  HumanEval,
  LongDocument
};

/// The one table of dataset names: parsing, the "valid: ..." message and `--help`.
inline constexpr auto kDatasetKinds = make_name_table<DatasetKind>({
    {DatasetKind::ShareGpt, "sharegpt"},
    {DatasetKind::MtBench, "mtbench"},
    {DatasetKind::Custom, "custom"},
    {DatasetKind::Sonnet, "sonnet"},
    {DatasetKind::Random, "random"},
    {DatasetKind::Trace, "trace"},
    {DatasetKind::SharedPrefix, "generated-shared-prefix"},
    {DatasetKind::PrefixRepetition, "prefix_repetition"},
    {DatasetKind::Belle, "belle"},
    {DatasetKind::Cmmlu, "cmmlu"},
    {DatasetKind::ArenaHard, "arena-hard"},
    {DatasetKind::AlpacaEval, "alpaca-eval"},
    {DatasetKind::HumanEval, "humaneval"},
    {DatasetKind::LongDocument, "long-document"},
});

/// "sharegpt, mtbench, ...": the names of `kDatasetKinds`, for messages and help.
std::string dataset_kind_names();

/// Parses a `--dataset-name` (a name of `kDatasetKinds`); throws `Exception` listing the valid
/// names otherwise.
DatasetKind parse_dataset_kind(std::string_view name);

/// Everything that selects and shapes the samples.
struct DatasetOptions {
  DatasetKind kind = DatasetKind::MtBench;
  std::string path;  ///< `--dataset-path`: a file, or for random/sonnet a file or folder
                     ///< of .txt files; empty = the bundled default for the kind
  std::int64_t num_prompts = 1000;
  std::uint64_t seed = 0;
  std::int64_t output_len = -1;  ///< fixed output length for every sample (`--output-len`,
                                 ///< `--sharegpt-output-len`, `--custom-output-len`); -1 = the
                                 ///< dataset's own, else 256
  // random (vLLM semantics)
  std::int64_t random_input_len = 1024;
  std::int64_t random_output_len = 128;
  double random_range_ratio = 0.0;     ///< lengths uniform in [L(1−r), L(1+r)], 0 ≤ r < 1
  std::int64_t random_prefix_len = 0;  ///< tokens of a prefix shared by every random prompt
  // sonnet (vLLM defaults)
  std::int64_t sonnet_input_len = 550;
  std::int64_t sonnet_output_len = 150;
  std::int64_t sonnet_prefix_len = 200;
  std::string data_dir;  ///< folder of bundled data (default prompts and corpus)
  /// `--tokenizer`: when set, random prompts have exactly their sampled token length under it
  /// and every text prompt's `prompt_len` is its exact count; must outlive `load_samples`.
  const tokenizer::Tokenizer* tokenizer = nullptr;
  RandomPromptKind random_prompt_kind = RandomPromptKind::Text;
  /// Count lengths as a completions server reports `usage.prompt_tokens`: with the tokenizer's
  /// post-processor tokens (DeepSeek-V3: the BOS) included. False for chat, where the server's
  /// count also holds its chat template and the lengths count the message content alone.
  bool count_special_tokens = true;
  /// Random dataset without a tokenizer: false leaves `Sample::prompt` empty and gives each
  /// sample only its lengths and `content_key` (the same lengths and offsets as with text), for
  /// callers that need no text (`llmbench simulate` hashes prompts from the key).
  bool random_text = true;
  /// Size limit of each dataset or corpus file read (`read_file`): a larger file, or a stream
  /// such as `--dataset-path /dev/zero`, fails with an error naming the file and the limit.
  std::uint64_t max_file_bytes = kDefaultMaxFileBytes;
  /// `--dataset-name trace`: format, window, speed-up and corpus (`num_prompts` then caps the
  /// rows of the window, first rows first).
  TraceOptions trace;
  SharedPrefixOptions shared_prefix;          ///< `--dataset-name generated-shared-prefix`
  PrefixRepetitionOptions prefix_repetition;  ///< `--dataset-name prefix_repetition`
  /// `--dataset-name long-document`: tokens of each prompt (`--long-doc-input-len`), exact
  /// with a tokenizer.
  std::int64_t long_doc_input_len = 32768;
  /// Chat with a tokenizer that has a chat template: every sample's `prompt_len` becomes the token
  /// count of its messages (or `{"user", prompt}`) rendered with this template and a generation
  /// prompt, without special tokens (what transformers' `apply_chat_template(tokenize=True)` and
  /// vLLM's chat endpoint count); `prompt_len_templated` is set. Not owned; null = content only.
  const tokenizer::ChatTemplate* chat_template = nullptr;
  /// `--multi-turn`: each sample is a whole conversation (`Sample::turns`): ShareGPT's human
  /// turns, MT-Bench's two turns. Any other dataset is an error (it has single prompts).
  bool multi_turn = false;
  /// `--max-turns`: with `multi_turn`, keep at most this many user turns of each conversation
  /// (0 = all of them).
  std::int64_t max_turns = 0;
  /// Field by field (the two pointers by address): the session draws samples again only when
  /// the options differ.
  bool operator==(const DatasetOptions&) const = default;
};

/// Most samples `load_samples` makes: 10 million, about 1.5 GB of `Sample`s before any prompt
/// text (a larger count would end in an allocation failure, not in a clear error).
inline constexpr std::int64_t kMaxNumPrompts = 10'000'000;

/// The datasets that have conversations for `--multi-turn` ("sharegpt, mtbench").
inline constexpr std::string_view kMultiTurnDatasets = "sharegpt, mtbench";

/// Loads and samples `num_prompts` samples (cycling through a smaller dataset in a seeded shuffled
/// order). Deterministic for a given seed. Throws `Exception` naming the file and the line/byte
/// offset on unreadable or malformed input, or an empty dataset; with `multi_turn`, for a dataset
/// outside `kMultiTurnDatasets` (naming `--multi-turn`) or a negative `max_turns`.
std::vector<Sample> load_samples(const DatasetOptions& options);

}  // namespace llmbench::workload
