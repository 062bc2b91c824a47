#pragma once
/// @file
/// The one resolver of tokenizer arguments (`--tokenizer PATH|NAME` of `run`, `simulate`,
/// `tokenize` and the two sides of `tokdiff`): a path to a tokenizer file or folder, or a short
/// name of a folder under a data root's `tokenizers/` (e.g. "deepseek-v3" →
/// `$LLMBENCH_DATA/tokenizers/deepseek-v3/tokenizer.json`).

#include "llmbench/core/error.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

namespace llmbench::tokenizer {

/// Data roots searched for short names, in order, without duplicates: `$LLMBENCH_DATA` (an
/// unpacked copy of ../shared/data), then `$LLMBENCH_DATA_DIR` when set, else
/// `build_info::data_dir()` (the bundled data folder of the source tree). Empty values are left
/// out.
std::vector<std::filesystem::path> default_data_roots();

/// Resolves a tokenizer argument to a file that `Tokenizer::load` accepts, in this order:
///  1. `spec` as an existing path: a file is used as is; a folder gives its `tokenizer.json`,
///     else the first by name of its `tokenizer.*.json` other than `tokenizer_config*.json` (the
///     shared data's `tokenizer.derived.json` / `tokenizer.reconstructed.json`);
///  2. `spec` as a name (one path component, not "." or ".."): the folder
///     `<root>/tokenizers/<spec>` of the first root in `roots` where that folder holds a
///     tokenizer JSON, chosen as in 1.
/// Errors (`source` = `spec`, offset -1): a folder without a tokenizer JSON; a name found nowhere,
/// the message listing the names available under the roots searched (folders holding a
/// tokenizer JSON or its `.zst`); a folder holding only a zstd-compressed `tokenizer*.json.zst`
/// says to unpack it.
Result<std::filesystem::path> resolve_tokenizer(std::string_view spec,
                                                std::span<const std::filesystem::path> roots);

/// `resolve_tokenizer(spec, default_data_roots())`.
Result<std::filesystem::path> resolve_tokenizer(std::string_view spec);

/// A tokenizer loaded from a resolved argument.
struct ResolvedTokenizer {
  std::filesystem::path path;  ///< the file `resolve_tokenizer` chose
  Tokenizer tokenizer;         ///< `Tokenizer::load(path)`
};

/// Resolves `spec` with `default_data_roots()` and loads it. Errors: those of `resolve_tokenizer`,
/// or the load error with its message prefixed by "cannot load '<resolved path>': " (source
/// `spec`).
Result<ResolvedTokenizer> load_tokenizer(std::string_view spec);

}  // namespace llmbench::tokenizer
