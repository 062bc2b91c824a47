#pragma once
/// @file
/// Private pieces of the workload module: file readers for the fixed datasets (ShareGPT,
/// MT-Bench, custom JSONL) and the generators of synthetic prompts (random, sonnet). Used by
/// dataset.cpp and the unit tests; not part of the public API.

#include "llmbench/core/file.hpp"
#include "llmbench/workload/dataset.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::workload::detail {

/// The `.txt` files of a folder in name order, or `{path}` when `path` is a regular file. Throws
/// `Exception` if the path does not exist or the folder has no `.txt` file.
std::vector<std::string> text_files(const std::string& path);

/// Every usable ShareGPT conversation of a JSON array file
/// (`[{"id", "conversations": [{"from", "value"}]}]`): the first human turn (`from` "human" or
/// "user") as prompt. Output length: `output_len` if > 0, else the estimated tokens of the reply
/// that follows the human turn. Conversations without a human turn, and (single-turn, as vLLM's
/// ShareGPT sampling does) those whose first human turn has no reply, are skipped, and how many
/// of each is logged once; a file in which no conversation has a reply (prompts only) keeps its
/// prompts with `output_len` or 256 and a warning that says so. Throws
/// `Exception` with the byte offset on malformed JSON, or the entry index on a wrong shape; a
/// file over `max_file_bytes` fails before it is parsed (`read_file`).
/// With `turn_limit` > 0 (`--multi-turn`) each sample is the conversation: its human turns in
/// order, at most `turn_limit` of them, in `Sample::turns`, each with the output length of the
/// reply right after it (as for the first; 256 for a turn nobody answered); system turns are
/// skipped. 0 = single-turn.
std::vector<Sample> load_sharegpt(const std::string& path, std::int64_t output_len,
                                  std::uint64_t max_file_bytes = kDefaultMaxFileBytes,
                                  std::int64_t turn_limit = 0);

/// `load_sharegpt` of the contents `text` of the file `path` (named in errors).
std::vector<Sample> parse_sharegpt(const std::string& text, const std::string& path,
                                   std::int64_t output_len, std::int64_t turn_limit = 0);

/// MT-Bench `question.jsonl` (`{"question_id", "category", "turns": [...]}` per line): the first
/// turn as prompt, `output_len` if > 0 else 256. Throws `Exception` naming file and line. With
/// `turn_limit` > 0 (`--multi-turn`) every turn (MT-Bench has two), at most `turn_limit`, goes
/// into `Sample::turns`; each must be a string.
std::vector<Sample> load_mtbench(const std::string& path, std::int64_t output_len,
                                 std::uint64_t max_file_bytes = kDefaultMaxFileBytes,
                                 std::int64_t turn_limit = 0);

/// `load_mtbench` of the contents `text` of the file `path` (named in errors).
std::vector<Sample> parse_mtbench(std::string_view text, const std::string& path,
                                  std::int64_t output_len, std::int64_t turn_limit = 0);

/// Custom JSONL: per line `{"prompt": str}` or `{"messages": [{"role", "content"}]}`, optional
/// `"output_len"` (positive integer). Blank lines are skipped. Output length: `output_len` if > 0,
/// else the line's, else 256. Throws `Exception` naming file, line and the problem.
std::vector<Sample> load_custom(const std::string& path, std::int64_t output_len,
                                std::uint64_t max_file_bytes = kDefaultMaxFileBytes);

/// `load_custom` of the contents `text` of the file `path` (named in errors).
std::vector<Sample> parse_custom(std::string_view text, const std::string& path,
                                 std::int64_t output_len);

/// Lengths for the random dataset: `count` integers uniform in
/// [floor(len·(1−ratio)), ceil(len·(1+ratio))] (vLLM `RandomDataset.get_sampling_params`), lower
/// bound raised to `min_value`, drawn from the stream (`seed`, `purpose`).
std::vector<std::int64_t> sample_lengths(std::int64_t count, std::int64_t len, double ratio,
                                         std::int64_t min_value, std::uint64_t seed,
                                         std::string_view purpose);

/// Joins the text of every file (one file, or a folder's .txt files in name order, a blank line
/// between files). Each file must be text (`check_text`) of at most `max_file_bytes`.
std::string load_text(const std::string& path, std::uint64_t max_file_bytes = kDefaultMaxFileBytes);

/// Throws `Exception` naming `path` and the byte offset unless `text` is a text file: valid UTF-8
/// without NUL bytes (a binary file, such as an executable or an image, fails at its first
/// invalid byte).
void check_text(std::string_view text, const std::string& path);

/// `num_prompts` random-dataset samples cut from the corpus at `corpus_path` (file or folder of
/// .txt). Validates lengths and ratio (throws `Exception`). With `options.tokenizer` set it
/// returns `make_exact_random_samples`.
std::vector<Sample> make_random_samples(const DatasetOptions& options,
                                        const std::string& corpus_path);

/// Random-dataset samples whose token count under `*options.tokenizer` is exactly
/// `random_prefix_len` + the sampled input length (vLLM `RandomDataset` lengths), counted with
/// the tokenizer's special tokens when `options.count_special_tokens`. Text prompts are corpus
/// cuts at token boundaries re-encoded until exact, then verified; id prompts are the corpus ids
/// (special tokens included). A shared prefix of `random_prefix_len` tokens (counting the leading
/// special tokens) starts every prompt. A length below the special tokens plus one text token is
/// raised to that. Throws `Exception` naming the prompt index when no cut is exact after 32
/// positions, or the corpus when it cannot be encoded.
std::vector<Sample> make_exact_random_samples(const DatasetOptions& options,
                                              const std::string& corpus_path);

/// `num_prompts` sonnet-dataset samples from the poem file (or folder) at `poem_path`.
std::vector<Sample> make_sonnet_samples(const DatasetOptions& options,
                                        const std::string& poem_path);

/// Samples of the trace at `trace_path` (`--dataset-name trace`, trace.hpp): the rows of
/// `options.trace`'s window (at most `num_prompts`, first rows first) in trace order, each with
/// its arrival time (unless `keep_schedule` is off), its output length (`--output-len` when
/// given) and a prompt cut from `options.trace.corpus_path` (default: the bundled corpus folder):
/// exactly the row's input length with a tokenizer, Mooncake rows built from one fixed text block
/// per hash id. Without text (`random_text` off and no tokenizer, `simulate`) only lengths, hash
/// ids and a `content_key` of the row. Throws `Exception` naming the file and line.
std::vector<Sample> make_trace_samples(const DatasetOptions& options,
                                       const std::string& trace_path);

/// `generated-shared-prefix` samples (prefix_groups.hpp) cut from the corpus at `corpus_path`:
/// group g's system prompt followed by one of its questions, exactly system + question tokens
/// (plus the special tokens when counted) under a tokenizer. Uniform popularity gives the G×P
/// prompts in a seeded shuffle (cycled to `num_prompts`); Zipf draws each request's group.
/// Throws `Exception` naming the flag on a bad option.
std::vector<Sample> make_shared_prefix_samples(const DatasetOptions& options,
                                               const std::string& corpus_path);

/// `prefix_repetition` samples: prompt i is prefix (i mod num_prefixes) followed by a suffix of
/// its own, in a seeded shuffle; exact lengths under a tokenizer. Throws `Exception` naming the
/// flag on a bad option.
std::vector<Sample> make_prefix_repetition_samples(const DatasetOptions& options,
                                                   const std::string& corpus_path);

/// The samples of a named prompt set (`kind` belle, cmmlu, arena-hard, alpaca-eval or humaneval;
/// named_sets.cpp lists the layouts) read from `path` (for cmmlu a CSV or a folder of them):
/// every entry, in file order, with `output_len` if > 0, else the estimated tokens of the set's
/// answer, else 256. Throws `Exception` naming the file and the line of a malformed entry, or a
/// compressed file.
std::vector<Sample> load_named_set(DatasetKind kind, const std::string& path,
                                   std::int64_t output_len,
                                   std::uint64_t max_file_bytes = kDefaultMaxFileBytes);

/// `num_prompts` long-document prompts of `long_doc_input_len` tokens (exact with a tokenizer,
/// special tokens counted as for the random dataset) cut from the text at `path`, which is
/// repeated when shorter. Throws `Exception` naming the flag or the file.
std::vector<Sample> make_long_document_samples(const DatasetOptions& options,
                                               const std::string& path);

}  // namespace llmbench::workload::detail
